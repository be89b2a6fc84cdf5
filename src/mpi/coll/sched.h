/* Collective schedules (src/mpi/coll/sched.c): the one mechanism behind every
 * collective, blocking, nonblocking (MPI_I...) and persistent (..._init).
 *
 * A schedule is a list of rounds. A round is a set of operations: local ones
 * (reduce, copy) and messages (send, recv). When a round starts, its local
 * operations run first, in the order they were added; then its sends and
 * receives are posted together. The next round starts when every message of
 * the round has completed. An algorithm is a function that adds operations to
 * a schedule (src/mpi/coll/<collective>_<algorithm>.c); algorithms compose by
 * adding rounds to the same schedule (allreduce = reduce + bcast).
 *
 * Messages go in the collective context of the communicator they name (ctx + 1,
 * never matched by user traffic) with one tag per schedule, taken from the
 * schedule's communicator sequence at creation: every rank creates its
 * collectives in the same order, so the tags agree, and concurrent nonblocking
 * collectives on one communicator never take each other's messages. Blocking
 * and nonblocking (and persistent) collectives count in two sequences of their
 * own, in two halves of the tag space, and nonblocking ones never use the node
 * segment: a program that orders a nonblocking collective differently from a
 * blocking one between its ranks (erroneous, MPI 4.1 section 6.12, but MPICH
 * and Open MPI run it, and mpi4py's MPI_Comm_iagree fallback does it) still
 * matches each with its own. Between
 * two processes, messages of one schedule match in the order they were posted
 * (non-overtaking), which is what lets rounds reuse the tag.
 *
 * Buffers and datatypes are the caller's until the schedule completes;
 * datatypes and ops are referenced by the schedule (a user may free them after
 * starting a nonblocking collective). Scratch memory comes from
 * coll_sched_alloc*() and is freed with the schedule.
 *
 * Errors: the add functions return MPI_SUCCESS or an error class; an error
 * while running (truncation, a receive shorter than posted, a failed
 * reduction) is recorded, the remaining rounds still run so no peer is left
 * waiting, their sends empty (so the ranks they go to fail too), and the first
 * error is the request's (or coll_sched_wait's) result. */
#ifndef DCFA_MPI_COLL_SCHED_H
#define DCFA_MPI_COLL_SCHED_H

#include "mpi/mpii.h"
#include "core/core.h"

typedef struct coll_sched coll_sched;

/* A new, empty schedule on communicator c (intra or inter). NULL never: out of
 * memory aborts, as util_malloc does. */
coll_sched *coll_sched_create(mpii_comm *c);
/* the same for a nonblocking or persistent call (nonblocking = 1): the other tag sequence */
coll_sched *coll_sched_create_kind(mpii_comm *c, int nonblocking);
int coll_sched_is_nonblocking(const coll_sched *s);
/* The communicator the schedule was made for. */
mpii_comm *coll_sched_comm(const coll_sched *s);

/* The communicator that operations added with on == NULL name, until changed
 * again (NULL: the schedule's own); returns the previous one. An inter-
 * communicator's builder sets c->local_comm around an intra builder (whose
 * messages name no communicator) to run that algorithm on the local group. */
mpii_comm *coll_sched_set_on(coll_sched *s, mpii_comm *on);

/* Scratch memory, freed with the schedule. */
void *coll_sched_alloc(coll_sched *s, size_t bytes);
/* Scratch for count elements of dt laid out as dt lays them out; the returned
 * pointer is the buffer address to pass with (count, dt) (it may lie outside
 * the allocation by dt's lower bound). */
void *coll_sched_alloc_typed(coll_sched *s, MPI_Aint count, MPI_Datatype dt);

/* Operations, added to the current round. `on` is the communicator whose
 * ranks `peer` names: NULL for the schedule's own communicator; an inter-
 * communicator's schedule passes c->local_comm for its local-group phases.
 * peer == MPI_PROC_NULL adds nothing. */
int coll_sched_send(coll_sched *s, const void *buf, MPI_Aint count, MPI_Datatype dt, int peer,
                    mpii_comm *on);
int coll_sched_recv(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int peer,
                    mpii_comm *on);
/* inout[i] = in[i] op inout[i] (in holds the lower ranks' contribution for
 * non-commutative ops, as MPI_Reduce_local) */
int coll_sched_reduce(coll_sched *s, const void *in, void *inout, MPI_Aint count, MPI_Datatype dt,
                      MPI_Op op);
/* typed copy with the same type signature (MPI_ERR_TRUNCATE if it does not fit) */
int coll_sched_copy(coll_sched *s, const void *src, MPI_Aint scount, MPI_Datatype sdt, void *dst,
                    MPI_Aint rcount, MPI_Datatype rdt);
/* A local step of its own: fn(s, arg) runs when its round starts, in order
 * with the round's other local operations, and returns an error class. It may
 * add operations and rounds to s (they run after every round added so far):
 * that is how a collective whose later steps depend on data (context-id
 * agreement in MPI_Comm_idup) continues. arg is the caller's; scratch from
 * coll_sched_alloc() lives as long as the schedule. */
/* fn may also answer COLL_SCHED_AGAIN: it is waiting for something local
 * (nothing else progresses the schedule meanwhile); the round stops there and
 * fn is called again on later progress passes until it answers otherwise. */
#define COLL_SCHED_AGAIN (-1)
typedef int (*coll_sched_fn)(coll_sched *s, void *arg);
int coll_sched_call(coll_sched *s, coll_sched_fn fn, void *arg);
/* A condition to wait for (a flag in shared memory): test(s, arg) is called
 * when the round's messages are posted and then on every progress pass until
 * it returns 1; the round ends when its messages and its polls are done. */
int coll_sched_poll(coll_sched *s, coll_sched_fn test, void *arg);
/* End the current round: later operations start only once every earlier one
 * has completed. An empty round is ignored. */
void coll_sched_round(coll_sched *s);

/* Run it to completion and free it (blocking collectives); the error class. */
int coll_sched_wait(coll_sched *s);
/* Start it; *out is a request (kind MPII_REQ_SCHED) that completes when the
 * last round has. A non-persistent schedule is freed with its request. */
int coll_sched_start(coll_sched *s, core_req **out);
/* Keep the schedule after completion so coll_sched_start can run it again
 * (persistent collectives); coll_sched_free() frees it. */
void coll_sched_set_persistent(coll_sched *s);
int coll_sched_is_persistent(const coll_sched *s);
/* 1 once the schedule has begun to run (a call step extending it, as
 * MPI_Comm_idup's retries do, builds at a time that differs between ranks) */
int coll_sched_is_started(const coll_sched *s);
/* 1 while nothing has been added to it (a builder may then do its work at once, node_shm.c) */
int coll_sched_is_empty(const coll_sched *s);
/* The byte count the status of the schedule's request reports (0 unless
 * set; a collective I/O access sets the bytes it moved, from a call step). */
void coll_sched_set_count(coll_sched *s, MPI_Count bytes);
/* Keep a user operation alive while the schedule lives (MPI_Op_free of an op
 * a started collective uses); coll_sched_reduce does it itself. */
void coll_sched_hold_op(coll_sched *s, MPI_Op op);
/* the same for a derived datatype a call step uses (messages, copies and
 * reductions of the schedule hold theirs already) */
void coll_sched_hold_type(coll_sched *s, MPI_Datatype dt);
/* Free a schedule that is not running (never started, or persistent and complete). */
void coll_sched_free(coll_sched *s);

/* The MPI call the schedule was built for ("MPI_Ibcast", a string that outlives it), named
 * by the messages about its request (a truncation seen at MPI_Wait); NULL until set. */
void coll_sched_set_name(coll_sched *s, const char *fn);
/* that name for the collective behind a request (nonblocking or persistent), else NULL */
const char *coll_sched_req_name(const core_req *r);
/* what MPI_ERR_TRUNCATE from a collective says (a receive longer or shorter than its message) */
#define COLL_MISMATCH_TEXT                                                                       \
    "counts or datatypes do not match between processes (a message of the collective is longer " \
    "or shorter than the receive expecting it)"

/* What the bindings call once a schedule is built: COLL_BLOCKING runs it to
 * completion and frees it (req unused, may be NULL); COLL_NONBLOCKING starts it
 * and sets *req to the request handle; COLL_PERSISTENT sets *req to an
 * inactive persistent request that MPI_Start runs (MPI_Request_free frees the
 * schedule). Returns the error class (of the whole run, when blocking). */
enum coll_mode { COLL_BLOCKING = 0, COLL_NONBLOCKING, COLL_PERSISTENT };
int coll_sched_finish(coll_sched *s, int mode, MPI_Request *req);

/* The request side (src/mpi/pt2pt calls these for MPII_REQ_SCHED requests):
 * status out, request freed (and the schedule, unless persistent); the error class. */
int coll_sched_req_finish(core_req *r, MPI_Status *st);
/* Cancel is not allowed on a collective; MPI_Request_free of an active one
 * leaves it to finish (the detached-request sweep frees it). */

/* The number of running schedules (the assist thread sleeps at 0). */
int coll_sched_running(void);
/* Progress every started schedule (called from the core progress loop). */
int coll_sched_progress(void);
/* The hang report: every running schedule with its round and pending messages. */
void coll_sched_dump_pending(void);

#endif
