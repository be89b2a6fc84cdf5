/* osc private state: the window object, its node segment and the message
 * mode. Only src/mpi/osc includes this. */
#ifndef DCFA_MPI_OSC_IMPL_H
#define DCFA_MPI_OSC_IMPL_H

#include "mpi/osc/osc.h"

#include <stdatomic.h>

/* ---- the node segment: shared by the ranks of one node in one window --------------------
 * /dev/shm/dcfa-<job>-win-<lpid of the node's first rank>-<T> (T random), made by that
 * rank, unlinked once every local rank mapped it. Layout (offsets from the
 * start, all fixed-width, fields only ever appended):
 *   osc_seg_hdr                       one cache line
 *   osc_seg_rank[nlocal]              one cache line per local rank
 *   uint32 post[nlocal][nlocal]       post[o][t]: MPI_Win_post calls of t naming o
 *   uint32 done[nlocal][nlocal]       done[t][o]: MPI_Win_complete calls of o to t
 *   osc_seg_attach[nlocal][OSC_ATTACH_MAX]   dynamic windows: attached regions
 *   data (page aligned)               allocate flavours: every local rank's memory */
#define OSC_SEG_MAGIC   0x4e495741464344ull /* "DCFAWIN" */
#define OSC_SEG_VERSION 1
typedef struct osc_seg_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t nlocal;   /* ranks of the node in the window */
    uint64_t data_off; /* where the data area starts */
    uint64_t data_bytes;
    _Atomic uint32_t mapped; /* ranks that have mapped the segment */
    uint32_t pad[7];
} osc_seg_hdr;
_Static_assert(sizeof(osc_seg_hdr) == 64, "segment header is one cache line");

/* the lock word: exclusive bit, shared holders in the low 32 bits */
#define OSC_LOCK_EXCL ((uint64_t)1 << 63)
typedef struct osc_seg_rank {
    _Atomic uint64_t lock;    /* passive-target lock on this rank's window */
    _Atomic uint32_t acc;     /* accumulate lock: 1 while an origin updates this rank's window */
    _Atomic uint32_t nattach; /* dynamic: table entries in use (valid or detached) */
    uint64_t data_off;        /* allocate flavours: this rank's memory, from the segment start */
    uint64_t data_size;
    _Atomic uint32_t attach_overflow; /* dynamic: more regions than the table holds */
    uint32_t pad[7];
} osc_seg_rank;
_Static_assert(sizeof(osc_seg_rank) == 64, "one cache line per rank");

#define OSC_ATTACH_MAX 1024
typedef struct osc_seg_attach {
    _Atomic uint64_t base;
    _Atomic uint64_t size; /* 0: free or detached; written last */
} osc_seg_attach;
_Static_assert(sizeof(osc_seg_attach) == 16, "attach entry size");

/* ---- peers --------------------------------------------------------------------------------- */
enum osc_mode {
    OSC_MODE_SELF = 1, /* my own window: plain memory */
    OSC_MODE_MAP,      /* direct: the target's memory is in my mapping of the node segment */
    OSC_MODE_CMA,      /* direct: core_rma_read/write of the target's memory */
    OSC_MODE_AM,       /* messages served by the target */
};
enum osc_lk { OSC_LK_NONE = 0, OSC_LK_SHARED, OSC_LK_EXCL };

typedef struct osc_am_out osc_am_out;
typedef struct osc_am_in osc_am_in;

typedef struct osc_peer {
    int lpid;
    int local;     /* node-local index, -1 on another node */
    int mode;      /* enum osc_mode */
    uint64_t base; /* its window base in its own address space (dynamic: 0) */
    MPI_Aint size;
    MPI_Aint disp_unit;
    uint64_t rkey;
    char *map; /* OSC_MODE_MAP and self with a segment: its memory in my mapping */
    /* origin-side epoch state */
    uint8_t lock;        /* enum osc_lk requested by MPI_Win_lock / lock_all */
    uint8_t lock_held;   /* direct: the lock word is taken; am: LOCK was sent */
    uint8_t in_start;    /* in the access group of MPI_Win_start */
    uint8_t post_seen;   /* its MPI_Win_post for this access epoch has been seen */
    uint8_t in_post;     /* in the exposure group of MPI_Win_post */
    uint8_t nocheck;     /* lock with MPI_MODE_NOCHECK: no lock word */
    uint32_t posts_used; /* posts of this target consumed by my access epochs */
    uint32_t dones_used; /* completes of this origin consumed by my exposure epochs */
    osc_am_out *out;     /* am: batch and requests in flight to it */
} osc_peer;

struct osc_win {
    MPI_Win handle; /* first member (osc_win_get) */
    int flavor;
    mpii_comm *comm; /* private duplicate: am messages on ctx, collectives on ctx + 1 */
    mpii_group *group;
    int rank, size;
    void *base;
    MPI_Aint bytes;
    MPI_Aint disp_unit;
    osc_peer *peers;
    /* node segment */
    void *seg;
    size_t seg_len;
    osc_seg_hdr *hdr;
    osc_seg_rank *lranks;
    _Atomic uint32_t *post, *done;
    osc_seg_attach *attach;
    int nlocal, my_local;
    int *local_rank; /* node-local index -> window rank */
    /* epochs */
    int fence;    /* a fence epoch is open */
    int nlocked;  /* targets locked with MPI_Win_lock */
    int lock_all; /* MPI_Win_lock_all epoch (with its assertion) */
    int lock_all_nocheck;
    int nstart; /* access epoch: targets of MPI_Win_start, 0 if none */
    int started;
    int start_nocheck;
    int posted; /* exposure epoch open */
    int post_nocheck;
    int npost;
    /* info */
    int no_locks;
    int noncontig;
    char acc_ordering[64];
    char acc_ops[32];
    int same_size, same_disp_unit;
    /* objects */
    MPI_Errhandler errh;
    mpii_attr *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    char label[MPI_MAX_OBJECT_NAME + 32];
    int flavor_attr, model_attr, disp_unit_attr;
    MPI_Aint size_attr;
    /* dynamic windows: my attached regions (base, size pairs) */
    MPI_Aint *regions;
    int nregions, regions_cap;
    /* message mode */
    int am_origin; /* some target is reached with messages */
    int am_target; /* some origin reaches me with messages: I serve */
    uint32_t next_tag;
    struct osc_srv *srv; /* the server (am_target) */
    int assist_held;     /* the assist thread serves this window */
    util_queue pend;     /* origin-side requests in flight (osc_pend) */
    void *scratch[2];    /* direct accumulates: packed origin / target data, kept */
    size_t scratch_len[2];
    util_qnode qn; /* list of windows with message traffic */
    int in_list;
};

/* ---- helpers shared by the files of osc ----------------------------------------------- */
/* raise an error on the window: "<fn>: <text> (window ..., rank R)" */
int osc_err(osc_win *w, int cls, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* progress once and wait politely if nothing happened */
static inline void osc_backoff(util_backoff *b)
{
    if (core_progress() > 0)
        util_backoff_reset(b);
    else
        util_backoff_wait(b);
}

/* target address of a displacement */
static inline uint64_t osc_taddr(const osc_win *w, int t, MPI_Aint disp)
{
    const osc_peer *p = &w->peers[t];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (uint64_t)disp;
    return p->base + (uint64_t)(disp * p->disp_unit);
}

/* direct.c: locks, the accumulate lock, data movement to direct targets */
int osc_lock_try(_Atomic uint64_t *word, int type);
void osc_lock_release(_Atomic uint64_t *word, int type);
void osc_acc_lock(osc_win *w, int t);
void osc_acc_unlock(osc_win *w, int t);
/* the target's memory [lo, hi) is in its window (an attached region for dynamic windows) */
int osc_range_ok_dynamic(osc_win *w, int t, uint64_t lo, uint64_t hi);
static inline int osc_range_ok(osc_win *w, int t, uint64_t lo, uint64_t hi)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return hi <= (uint64_t)w->peers[t].size && lo <= hi;
    return osc_range_ok_dynamic(w, t, lo, hi);
}
/* a buffer of at least n bytes kept by the window (slot 0 or 1): large
 * accumulates do not pay for fresh pages every time */
void *osc_scratch(osc_win *w, int slot, size_t n);
/* run one operation on a direct target (self, map, cma): complete on return */
int osc_direct_op(osc_win *w, int t, const osc_args *a, uint64_t taddr, int basic);

/* acc.c: the accumulate kernel on packed element streams */
int osc_dt_basic(MPI_Datatype h); /* basic type index, 0 if mixed */
/* inout = in op inout over `bytes` packed bytes of basic type `basic` */
int osc_apply_packed(MPI_Op op, int basic, const void *in, void *inout, size_t bytes);
/* copy a typed buffer into another (same number of bytes) */
void osc_typed_copy(void *dst, size_t dcount, const core_dt *ddt, const void *src, size_t scount,
                    const core_dt *sdt);

/* am.c: the message mode */
int osc_am_setup(osc_win *w); /* collective part of creation (server, poller) */
void osc_am_teardown(osc_win *w);
int osc_am_op(osc_win *w, int t, const osc_args *a, uint64_t taddr, int basic, core_req *ureq);
int osc_am_lock(osc_win *w, int t, int type, int grant); /* grant: wait until granted */
int osc_am_unlock(osc_win *w, int t);
int osc_am_flush(osc_win *w, int t, int local);
int osc_am_post(osc_win *w, int origin);      /* tell an origin that I posted */
int osc_am_wait_post(osc_win *w, int t);      /* wait for a target's post */
int osc_am_complete(osc_win *w, int t);       /* end of my access epoch to t */
int osc_am_completes_seen(osc_win *w, int o); /* completes received from origin o */
int osc_am_pending(osc_win *w, int t);        /* ops to t not yet flushed */
void osc_am_dump(osc_win *w);                 /* hang report lines of the message mode */
/* The description of a derived target type sent with an RMA message (am.c; the unit test
 * test_dtype checks it): its bytes, writing it, and the type rebuilt from it (UTIL_EINVAL
 * and *why if it is malformed; avail: the bytes that hold it). */
size_t osc_am_dt_desc_size(const core_dt *dt);
void osc_am_dt_encode(const core_dt *dt, uint8_t *p);
int osc_am_dt_decode(const uint8_t *p, size_t avail, core_dt *out, const char **why);

/* sync.c */
int osc_pscw_ready(osc_win *w, int t); /* wait for t's post if not seen */
/* the window's list for the poller (win.c) */
void osc_win_list_add(osc_win *w);
void osc_win_list_remove(osc_win *w);

#endif
