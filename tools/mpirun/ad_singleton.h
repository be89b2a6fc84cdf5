#ifndef DCFA_AD_SINGLETON_H
#define DCFA_AD_SINGLETON_H

/* ad_singleton.c: "mpirun --dcfa-singleton FD JOBID". */
int ad_singleton_main(int argc, char **argv);

#endif
