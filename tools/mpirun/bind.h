/* mpirun: placing and binding the ranks of a host on its cores (hwloc).
 *
 * main.c parses --bind-to, --map-by and --report-bindings into struct
 * mpirun_bind; the daemon that forks a host's ranks (mpirun itself on one
 * host, each "mpirun --dcfa-daemon" across hosts) plans job 0's ranks of its
 * host from its own topology before starting any (mpirun_bind_plan), each
 * child applies its mask between fork and exec (mpirun_bind_apply), and the
 * daemon writes the report lines. Spawned jobs are not bound. See
 * docs/launcher.md, "Mapping and binding". */
#ifndef DCFA_MPIRUN_BIND_H
#define DCFA_MPIRUN_BIND_H

#include <stddef.h>
#include <sys/types.h>

/* The levels a rank can be mapped by or bound to. */
enum mpirun_res {
    MPIRUN_RES_NONE = 0, /* --bind-to none */
    MPIRUN_RES_HWTHREAD,
    MPIRUN_RES_CORE,
    MPIRUN_RES_NUMA,
    MPIRUN_RES_SOCKET,
    MPIRUN_RES_NODE, /* --map-by node, ppr:N:node */
};

struct mpirun_bind {
    int bind_given;    /* --bind-to was given; else the default (below) */
    int bind;          /* enum mpirun_res, NODE excluded */
    int map;           /* enum mpirun_res, NONE excluded; default CORE */
    int ppr;           /* > 0: --map-by ppr:ppr:map */
    int report;        /* --report-bindings */
    int oversubscribe; /* --oversubscribe was given: ranks may share what they are bound to */
};

/* "--bind-to VALUE" and "--map-by VALUE" into b (opt names the option in
 * messages). 0, or -EINVAL after one "mpirun: ..." line on stderr. */
int mpirun_bind_parse_bind(struct mpirun_bind *b, const char *opt, const char *value);
int mpirun_bind_parse_map(struct mpirun_bind *b, const char *opt, const char *value);

/* The ranks --map-by ppr:N:R places on this host: N x its R (1 when the
 * topology cannot be read). */
int mpirun_bind_ppr_size(const struct mpirun_bind *b);
/* In the daemon, before job 0's n ranks of this host start: plans each one's
 * mask from this host's topology (restricted to the CPUs this process may
 * use). host names the host in messages (NULL: this machine's name). 0, or
 * -1 with one line in msg[cap] when the binding asked for cannot be met. */
int mpirun_bind_plan(const struct mpirun_bind *b, int n, const char *host, char *msg, size_t cap);
/* In the child of local rank i, after fork and before exec. */
void mpirun_bind_apply(int i);
/* The --report-bindings line (with its newline) of local rank i, in out[cap]. */
void mpirun_bind_report(int i, int rank, pid_t pid, char *out, size_t cap);
void mpirun_bind_plan_free(void);

#endif
