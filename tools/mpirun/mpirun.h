/* mpirun: what the command line asks for (parsed by main.c, run by ad_*). */
#ifndef DCFA_MPIRUN_H
#define DCFA_MPIRUN_H

#include "bind.h"

#include <stddef.h>

struct mpirun_host;

/* One application context: "-n N [-env NAME VALUE]... prog args", MPMD
 * contexts are separated by ':' on the command line. */
struct mpirun_app {
    int nprocs;
    int nprocs_given; /* -n was on the command line */
    char **argv;      /* NULL-terminated, points into main's argv */
    char **env;       /* "NAME=VALUE" set for this context only (-env) */
    int nenv;
    /* spawned programs only (NULL on the command line's): */
    char *exe;  /* the executable found for argv[0] (execv'd, no PATH search) */
    char *wdir; /* working directory (info "wdir") */
    /* -hosts/-hostfile in the options of a program after the first (the first program's
     * are the global list, mpirun_opts.hosts): this program's own list, NULL = the global
     * list. host_idx[k]: hosts[k] in mpirun_opts.hosts (which holds every host). */
    struct mpirun_host *hosts;
    int nhosts;
    int *host_idx;
    int slots_given;      /* an explicit :N or slots=N in the list: -n must fit */
    const char *host_opt; /* the first of its host options and its value (messages) */
    const char *host_arg;
};

/* A host of -hosts/-hostfile: its name and how many ranks a pass places on
 * it (":slots", "slots=N"; 1 when not given). */
struct mpirun_host {
    char *name;
    int slots;
};

struct mpirun_opts {
    struct mpirun_app *apps;
    int napps;
    char **genv; /* "NAME=VALUE" set for every rank (-genv, -x) */
    int ngenv;
    int timeout;               /* seconds, 0 = none */
    int prefix_output;         /* -l: "[rank] " before every output line */
    struct mpirun_host *hosts; /* every host: the global list (-hosts / -hostfile before the
                                  first program), then the hosts only programs' own lists
                                  name, then the gateways; none = this node only */
    int nhosts;
    int nglobal;          /* the global list: hosts[0 .. nglobal) */
    int slots_given;      /* (parsing) an explicit :N or slots=N was added */
    const char *host_ctx; /* (parsing) "-hosts of program 2: " before a message, or NULL */
    int ngateways;        /* --gateways: the last ngateways of hosts, which get no ranks */
    int ppn;              /* -ppn: ranks per host and pass, 0 = the hosts' slots */
    int universe;         /* -usize / DCFA_UNIVERSE_SIZE, else the default (main.c) */
    int no_oversubscribe; /* --no-oversubscribe / DCFA_OVERSUBSCRIBE=0: spawns stay
                             within the universe */
    double noinit_grace;  /* DCFA_NOINIT_GRACE: seconds a rank that exited without
                             MPI_Init is given before the job ends (others in MPI) */
    struct mpirun_bind bind; /* --map-by, --bind-to, --report-bindings (bind.h) */
    char *wdir;              /* -wdir: the ranks' directory (absolute), NULL = mpirun's */
};

/* hosts.c: DCFA_UNIVERSE_SIZE, DCFA_OVERSUBSCRIBE and DCFA_NOINIT_GRACE
 * into o (0, or -EINVAL after a one-line "mpirun: ..." message); then, when
 * no universe size was given, the default: the hosts' slots, else the job
 * size or the number of online CPUs, the larger. */
#define MPIRUN_NOINIT_GRACE 1.0 /* DCFA_NOINIT_GRACE's default */
int mpirun_env_read(struct mpirun_opts *o);
void mpirun_default_universe(struct mpirun_opts *o);

/* hosts.c: host lists, host files and rank placement. Each returns 0, or
 * -EINVAL after printing a one-line "mpirun: ..." message naming the bad
 * item, or -ENOMEM. */
int mpirun_hosts_add_list(struct mpirun_opts *o, const char *list);
int mpirun_hosts_read_file(struct mpirun_opts *o, const char *path);
/* The same with the message in err[cap] (without "mpirun: ") instead of on stderr. */
int mpirun_hosts_read_file_err(struct mpirun_opts *o, const char *path, char *err, size_t cap);
void mpirun_hosts_free(struct mpirun_opts *o);
/* The job size the hosts imply when no -n was given, which is also the
 * number of slots they offer: -ppn x hosts, else the sum of the slots (0 when
 * no hosts). */
int mpirun_hosts_default_size(const struct mpirun_opts *o);
/* Rank placement by block: host_of[r] for r < size. Pass after pass, each
 * host in order takes ppn (or its slots) consecutive ranks: a program with its
 * own list over that list from its first host, the others over the global list
 * (continuing where the program before that used it stopped). */
void mpirun_hosts_place(const struct mpirun_opts *o, int size, int *host_of);
/* After the command line: the hosts of the programs' own lists added to o->hosts
 * (host_idx), their default -n and their fit; 0, or -EINVAL after one line naming
 * the option, program and host, or -ENOMEM. */
int mpirun_hosts_programs(struct mpirun_opts *o);
/* The end of a run that started no rank: when msg names a host of a program's own
 * list (an assist daemon that could not be started there), one line naming the
 * option, program and host before it; 1 if so, else 0. */
int mpirun_hosts_blame(const struct mpirun_opts *o, const char *msg);
/* --gateways: the hosts of list ("g1,g2") appended as gateway hosts (no ranks); they must
 * not be ranks' hosts too (docs/gateway.md) */
int mpirun_gateways_add(struct mpirun_opts *o, const char *list);
/* --gateway-routes FILE (after mpirun_gateways_add): the route file read and checked (its
 * lines, hosts of -hosts and gateways of --gateways), then DCFA_GATEWAY_ROUTES set for the
 * daemons and ranks; 0, or -EINVAL after one line on stderr naming the file and line */
int mpirun_gateway_routes(const struct mpirun_opts *o, const char *file);

#endif
