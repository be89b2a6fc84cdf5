#ifndef DCFA_AD_NAMESERVER_H
#define DCFA_AD_NAMESERVER_H

/* ad_nameserver.c: "mpirun --nameserver [--port N] [--bind ADDR]". */
int ad_nameserver_main(int argc, char **argv);

#endif
