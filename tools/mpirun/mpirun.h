/* mpirun: what the command line asks for (parsed by main.c, run by ad_*). */
#ifndef DCFA_MPIRUN_H
#define DCFA_MPIRUN_H

/* One application context: "-n N [-env NAME VALUE]... prog args", MPMD
 * contexts are separated by ':' on the command line. */
struct mpirun_app {
    int nprocs;
    char **argv; /* NULL-terminated, points into main's argv */
    char **env;  /* "NAME=VALUE" set for this context only (-env) */
    int nenv;
};

struct mpirun_opts {
    struct mpirun_app *apps;
    int napps;
    char **genv; /* "NAME=VALUE" set for every rank (-genv, -x) */
    int ngenv;
    int timeout;       /* seconds, 0 = none */
    int prefix_output; /* -l: "[rank] " before every output line */
};

#endif
