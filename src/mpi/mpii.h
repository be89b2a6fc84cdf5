/* The MPI semantics layer: objects behind the handles and the calls each
 * chapter offers the others. Bindings (src/binding) check arguments and call
 * these; core (src/core) moves the bytes. */
#ifndef DCFA_MPII_H
#define DCFA_MPII_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "util/util.h"
#include "core/dtype.h"
#include "mpi/mpii_err.h"

#define MPII_HANDLE_KIND(h) (((unsigned)(h) >> 24) & 0x3f)
#define MPII_HANDLE_INDEX(h) ((int)((unsigned)(h) & 0xffffff))
#define MPII_HANDLE(kind, index) ((int)(((unsigned)(kind) << 24) | (unsigned)(index)))
enum mpii_kind {
    MPII_KIND_COMM = 1, MPII_KIND_GROUP, MPII_KIND_DTYPE, MPII_KIND_OP, MPII_KIND_REQUEST,
    MPII_KIND_ERRH, MPII_KIND_INFO, MPII_KIND_WIN, MPII_KIND_FILE, MPII_KIND_MESSAGE,
    MPII_KIND_SESSION,
};

/* ---- process state (src/mpi/init) ---------------------------------------- */
typedef struct mpii_state {
    int initialized, finalized;
    int thread_level;
    pthread_t main_thread;  /* the thread that called MPI_Init (MPI_Is_thread_main) */
    int world_rank, world_size;
    int appnum, universe_size;
    char hostname[MPI_MAX_PROCESSOR_NAME];
} mpii_state;
extern mpii_state mpii_st;
/* 1 while MPI runs (MPI_Init'ed or a session open); the MPI_X entry points
 * refuse calls otherwise (init.c: mpii_not_live). Unit tests that set up a
 * layer directly set it themselves. */
extern int mpii_live;

/* ---- attributes (src/mpi/attr) --------------------------------------------- */
typedef struct mpii_attr mpii_attr;     /* list node, private to attr.c */
/* copy list on dup (runs copy callbacks), delete all (runs delete callbacks) */
int mpii_attr_copy_comm(MPI_Comm oldh, MPI_Comm newh, mpii_attr *src, mpii_attr **dst);
int mpii_attr_delete_all(int objkind, int handle, mpii_attr **list);

/* ---- groups (src/mpi/group) --------------------------------------------- */
typedef struct mpii_bbuf mpii_bbuf;    /* a buffered-mode buffer (src/mpi/pt2pt/bsend.c) */
/* the buffer slot of a session, NULL if h is not a live session (src/mpi/session) */
mpii_bbuf **mpii_session_bbuf(MPI_Session h);
/* the error handler of a session, MPI_ERRHANDLER_NULL if h is not a live session */
MPI_Errhandler mpii_session_errh(MPI_Session h);

typedef struct mpii_group {
    int handle;
    int refcount;
    int size;
    int rank;           /* my rank in the group or MPI_UNDEFINED */
    int *lpids;         /* process ids (index in the job's process table) of each rank */
    MPI_Session session; /* MPI_Group_from_session_pset: its session, else 0 */
} mpii_group;
mpii_group *mpii_group_get(MPI_Group h);            /* NULL if not a valid group handle */
mpii_group *mpii_group_create(int size, const int *lpids);   /* refcount 1, handle assigned */
void mpii_group_ref(mpii_group *g);
void mpii_group_release(mpii_group *g);             /* frees at refcount 0 */

/* ---- nodes (src/mpi/init/node.c): which processes share memory ------------- */
void mpii_node_init(void);          /* reads PMI_process_mapping (after assist_init) */
void mpii_node_finalize(void);
int mpii_node_parse(const char *mapping, int size, int *node_of);   /* 0 or -1 */
int mpii_node_local_size(void);     /* processes on my node, 0 if unknown */
int mpii_node_group_local(const mpii_group *g);   /* 1: every member on one node */

/* ---- communicators (src/mpi/comm) --------------------------------------- */
typedef struct mpii_comm {
    int handle;
    int refcount;
    uint32_t ctx;           /* point-to-point context id; ctx + 1 is for collectives */
    int rank, size;         /* in the local group */
    int is_inter;
    mpii_group *group;      /* local group */
    mpii_group *remote;     /* inter-communicator: remote group; NULL for intra */
    struct mpii_comm *local_comm;  /* inter-communicator: an intra-communicator over the local group */
    MPI_Errhandler errhandler;
    MPI_Info info;
    mpii_attr *attrs;
    uint32_t coll_tag;      /* sequence for internal collective tags (blocking collectives) */
    uint32_t coll_nb_tag;   /* the same for nonblocking and persistent ones (sched.c) */
    uint32_t ctxag_seq;     /* context agreements begun on this parent (their keys) */
    char name[MPI_MAX_OBJECT_NAME];
    void *topo;             /* topology (src/mpi/topo), NULL if none */
    void *coll_shm;         /* node-level collective segment (src/mpi/coll/node_shm.c) */
    void *coll_mod;         /* its ranks' modules (src/mpi/coll/module.c), made on first use */
    mpii_bbuf *bbuf;        /* MPI_Comm_attach_buffer, NULL if none */
    MPI_Session session;    /* the session it derives from, else 0 */
    int neighbours;         /* processes its MPI_Comm_spawn started, counted as sharing the
                               node (the wait policy) until it is destroyed */
} mpii_comm;
/* NULL if not a valid communicator handle (inline: every call that names a communicator) */
extern util_htab mpii_comm_tab;
static inline mpii_comm *mpii_comm_get(MPI_Comm h)
{
    if (MPII_HANDLE_KIND(h) != MPII_KIND_COMM)
        return NULL;
    mpii_comm *c = (mpii_comm *)util_htab_get(&mpii_comm_tab, MPII_HANDLE_INDEX(h));
    return c && c->handle == h && c->refcount > 0 ? c : NULL;
}
/* the process id behind a destination/source rank: the remote group's for inter-communicators */
static inline int mpii_comm_peer_lpid(const mpii_comm *c, int rank)
{
    return (c->is_inter ? c->remote : c->group)->lpids[rank];
}
static inline int mpii_comm_peer_size(const mpii_comm *c)
{
    return c->is_inter ? c->remote->size : c->size;
}
int mpii_comm_init_world(void);             /* MPI_COMM_WORLD, MPI_COMM_SELF from mpii_st */
void mpii_comm_finalize(void);

/* ---- datatypes (src/mpi/datatype) ---------------------------------------------- */
typedef struct mpii_dtype {
    core_dt dt;             /* first member: the engine's compiled description */
    int handle;
    int refcount;
    int committed;
    int predefined;         /* 1: named predefined type; 2: MPI_Type_create_f90_* (never freed) */
    mpii_attr *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    void *contents;         /* envelope/contents, private to datatype code */
} mpii_dtype;
/* code given a request's core_dt (the engine's) takes its mpii_dtype by a cast */
_Static_assert(offsetof(mpii_dtype, dt) == 0, "core_dt is the first member of mpii_dtype");
/* a type's name for a message: its own, or "(derived)" for one without a name (or none) */
static inline const char *mpii_dtype_label(const mpii_dtype *t)
{
    return t && t->name[0] ? t->name : "(derived)";
}
/* NULL if not a valid datatype handle; predefined types are one array index away */
#define MPII_DTYPE_PREDEF_MAX 128
extern mpii_dtype *mpii_dtype_predef[MPII_DTYPE_PREDEF_MAX];
mpii_dtype *mpii_dtype_get_slow(MPI_Datatype h);
static inline mpii_dtype *mpii_dtype_get(MPI_Datatype h)
{
    unsigned idx = (unsigned)h ^ ((unsigned)MPII_KIND_DTYPE << 24);
    if (idx < MPII_DTYPE_PREDEF_MAX && mpii_dtype_predef[idx])
        return mpii_dtype_predef[idx];
    return mpii_dtype_get_slow(h);
}
int mpii_dtype_init(void);
/* buf + true_lb, on integers: buf may be MPI_BOTTOM with absolute displacements */
static inline const void *mpii_buf_at(const void *buf, MPI_Aint off)
{
    return (const void *)((uintptr_t)buf + (uintptr_t)off);
}
/* MPI_ERR_BUFFER's test (MPICH's): a NULL buffer for count > 0 elements of a
 * datatype with data at its true lower bound 0. MPI_BOTTOM (NULL) with a
 * derived type of absolute addresses has a nonzero true lower bound: legal. */
static inline int mpii_buf_is_null(const void *buf, MPI_Count count, const mpii_dtype *t)
{
    return buf == NULL && count > 0 && t && t->dt.size > 0 && t->dt.true_lb == 0;
}
void mpii_dtype_finalize(void);
void mpii_dtype_ref(mpii_dtype *t);
void mpii_dtype_release(mpii_dtype *t);

/* ---- reduction operations (src/mpi/op) ----------------------------------------- */
/* inout[i] = in[i] op inout[i] for count elements of datatype; MPI_SUCCESS or an error class */
int mpii_op_apply(MPI_Op op, const void *in, void *inout, MPI_Aint count, MPI_Datatype dt);
int mpii_op_is_commutative(MPI_Op op);
int mpii_op_init(void);

/* ---- error handlers (src/mpi/errhan) ------------------------------------------- */
int mpii_errh_init(void);
/* ---- info (src/mpi/info) --------------------------------------------------- */
int mpii_info_init(void);

/* ---- collectives used inside the library (src/mpi/coll) -------------------------- */
int mpii_barrier(mpii_comm *c);
int mpii_bcast(void *buf, MPI_Aint count, MPI_Datatype dt, int root, mpii_comm *c);
int mpii_allreduce(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                   mpii_comm *c);
int mpii_allgather(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                   MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);

/* ---- point-to-point inside the library (src/mpi/pt2pt) --------------------------
 * Blocking helpers used by collectives and communicator construction; `coll`
 * selects the collective context (ctx + 1) so user traffic never matches. */
int mpii_send(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag,
              mpii_comm *c, int coll);
int mpii_recv(void *buf, MPI_Aint count, MPI_Datatype dt, int src, int tag, mpii_comm *c,
              int coll, MPI_Status *status);
int mpii_sendrecv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, int dest, int stag,
                  void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int src, int rtag,
                  mpii_comm *c, int coll, MPI_Status *status);
int mpii_isend(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag,
               mpii_comm *c, int coll, MPI_Request *req);
int mpii_irecv(void *buf, MPI_Aint count, MPI_Datatype dt, int src, int tag, mpii_comm *c,
               int coll, MPI_Request *req);
int mpii_waitall(int n, MPI_Request *reqs, MPI_Status *statuses);

/* ---- threads (src/mpi/init/async.c) ------------------------------------------------ */
extern int mpii_entry_lock_on;      /* every MPI_X entry holds the entry lock */
void mpii_entry_enter(void);
void mpii_entry_leave(void);
int mpii_entry_force(void);          /* runtime start/stop: hold the entry mutex even if the lock is off */
void mpii_async_start(int thread_level);
/* a later session asked for MPI_THREAD_MULTIPLE: turn the entry lock on */
void mpii_async_multiple(void);
void mpii_async_stop(void);
void mpii_async_kick(void);         /* a schedule started: wake the assist thread */
/* +1: keep the assist thread polling (started if needed) until the matching -1 */
void mpii_async_hold(int delta);

/* error class of an internal status (util.h codes) */
int mpii_errclass(int status);

#endif
