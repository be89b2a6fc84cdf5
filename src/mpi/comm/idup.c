/* MPI_Comm_idup: the context agreement of MPI_Comm_dup (comm.h) as a
 * collective schedule. Round 1, a local step: this process's contribution, a
 * bitmap of free pairs. Then an allreduce (BAND) of the contributions; for an
 * inter-communicator one over each group (on local_comm) and one across, so
 * that both groups see the AND of everybody. Last, a local step that picks
 * the lowest pair free everywhere, builds the communicator and sets the
 * user's handle; when there is none it appends another contribution,
 * allreduce and decision to the same schedule.
 *
 * The agreements take pairs from MPII_CTX_NB_FIRST up only, which the
 * blocking constructors never take. Among themselves, nonblocking agreements
 * running in one process must not both be offered a pair (both could pick it):
 * a contribution holds its bits (idup_held) until its allreduce completes,
 * and later contributions leave held bits out. A contribution is made only by
 * the agreement of lowest key (parent context id, then the schedule's place in
 * the parent's collective sequence: the same in every member) among those
 * running in this process; the others contribute nothing and try again. So
 * however the idups of overlapping communicators were started, the one of
 * lowest key in the whole job has, from some attempt on, every member's full
 * contribution and completes; then the next, and so on: no deadlock, no pair
 * chosen twice. If an attempt in which nobody left anything out finds no
 * common pair, the pairs are exhausted and the request fails.
 *
 * Per the standard the duplicate is as if MPI_Comm_dup had run at the call:
 * attributes are copied (copy callbacks run) and the info duplicated then. */
#include "mpi/comm/comm.h"
#include "mpi/coll/algo.h"
#include "mpi/attr/attr.h"

#include <string.h>

enum { IDUP_W = MPII_CTX_WORDS + 1 }; /* the bitmap, then 1 = "nothing left out" */

typedef struct idup_op {
    struct idup_op *next;
    mpii_comm *c;
    uint64_t key;
    MPI_Comm *newcomm;
    mpii_attr *attrs;
    MPI_Info info;
    unsigned mine[IDUP_W];
    unsigned all[IDUP_W];   /* intra: the AND; inter: the remote group's */
    unsigned local[IDUP_W]; /* inter: the local group's AND */
} idup_op;

static idup_op *idup_running;              /* agreements started, not decided */
static unsigned idup_held[MPII_CTX_WORDS]; /* bits offered by contributions in flight */

static int idup_held_any(void)
{
    for (int w = MPII_CTX_NB_FIRST / 32; w < MPII_CTX_WORDS; w++)
        if (idup_held[w])
            return 1;
    return 0;
}

static int idup_contribute(coll_sched *s, void *arg)
{
    idup_op *op = arg;
    (void)s;
    int first = 1;
    for (idup_op *o = idup_running; o; o = o->next)
        if (o != op && o->key < op->key)
            first = 0;
    /* alone in the communicator: nobody waits for this contribution, so
     * rather than retrying with nothing (a loop without messages) it waits
     * for its turn and for a pair no other agreement holds */
    if (!op->c->is_inter && op->c->size == 1) {
        int avail = 0;
        for (int w = MPII_CTX_NB_FIRST / 32; w < MPII_CTX_WORDS; w++)
            avail |= (mpii_ctx_st.free[w] & ~idup_held[w]) != 0;
        if (!first || (!avail && idup_held_any()))
            return COLL_SCHED_AGAIN;
    }
    unsigned full = 1;
    memset(op->mine, 0, sizeof op->mine);
    for (int w = MPII_CTX_NB_FIRST / 32; w < MPII_CTX_WORDS; w++) {
        unsigned freew = mpii_ctx_st.free[w];
        op->mine[w] = first ? freew & ~idup_held[w] : 0;
        if (freew & ~op->mine[w])
            full = 0;
        idup_held[w] |= op->mine[w];
    }
    op->mine[MPII_CTX_WORDS] = full;
    return MPI_SUCCESS;
}

static int idup_decide(coll_sched *s, void *arg);

/* one attempt: contribution, allreduce(s), decision */
static int idup_attempt(coll_sched *s, idup_op *op)
{
    mpii_comm *c = op->c;
    int rc = coll_sched_call(s, idup_contribute, op);
    coll_sched_round(s);
    if (rc == MPI_SUCCESS)
        rc = coll_allreduce(s, op->mine, op->all, IDUP_W, MPI_UNSIGNED, MPI_BAND, c);
    if (rc == MPI_SUCCESS && c->is_inter) {
        mpii_comm *old = coll_sched_set_on(s, c->local_comm);
        rc = coll_allreduce(s, op->mine, op->local, IDUP_W, MPI_UNSIGNED, MPI_BAND, c->local_comm);
        coll_sched_set_on(s, old);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_sched_call(s, idup_decide, op);
    coll_sched_round(s);
    return rc;
}

static void idup_unlink(idup_op *op)
{
    for (idup_op **p = &idup_running; *p; p = &(*p)->next)
        if (*p == op) {
            *p = op->next;
            break;
        }
}

/* the agreement is over (a communicator or a failure): drop what the op holds */
static void idup_end(idup_op *op)
{
    idup_unlink(op);
    if (op->attrs)
        mpii_attr_drop_all(&op->attrs);
    if (op->info != MPI_INFO_NULL)
        PMPI_Info_free(&op->info);
    mpii_comm_release(op->c);
}

static int idup_decide(coll_sched *s, void *arg)
{
    idup_op *op = arg;
    mpii_comm *c = op->c;
    for (int w = 0; w < MPII_CTX_WORDS; w++)
        idup_held[w] &= ~op->mine[w];
    if (c->is_inter)
        for (int w = 0; w < IDUP_W; w++)
            op->all[w] &= op->local[w];
    int pairs[2] = {0, -1};
    if (mpii_ctx_pick(op->all, c->is_inter ? 2 : 1, pairs) == UTIL_OK) {
        mpii_comm *n = mpii_comm_build_dup(c, pairs[0], pairs[1]);
        n->attrs = op->attrs;
        n->info = op->info;
        op->attrs = NULL;
        op->info = MPI_INFO_NULL;
        *op->newcomm = n->handle;
        idup_end(op);
        return MPI_SUCCESS;
    }
    if (op->all[MPII_CTX_WORDS]) {
        util_log("MPI_Comm_idup: no context id free on every process (%d in use)",
                 MPII_CTX_PAIRS - MPII_CTX_NB_FIRST);
        *op->newcomm = MPI_COMM_NULL;
        idup_end(op);
        return MPI_ERR_OTHER;
    }
    return idup_attempt(s, op);
}

int mpii_comm_idup(mpii_comm *c, MPI_Info info, int use_info, MPI_Comm *newcomm, MPI_Request *req)
{
    uint32_t seq = (c->is_inter ? c->local_comm : c)->coll_tag;
    coll_sched *s = coll_sched_create(c);
    idup_op *op = coll_sched_alloc(s, sizeof *op);
    memset(op, 0, sizeof *op);
    op->c = c;
    op->key = (uint64_t)c->ctx << 32 | seq;
    op->newcomm = newcomm;
    op->info = MPI_INFO_NULL;
    int rc = mpii_attr_copy_comm(c->handle, MPI_COMM_NULL, c->attrs, &op->attrs);
    MPI_Info src = use_info ? info : c->info;
    if (rc == MPI_SUCCESS && src != MPI_INFO_NULL)
        rc = PMPI_Info_dup(src, &op->info);
    if (rc == MPI_SUCCESS)
        rc = idup_attempt(s, op);
    if (rc != MPI_SUCCESS) {
        if (op->attrs)
            mpii_attr_drop_all(&op->attrs);
        if (op->info != MPI_INFO_NULL)
            PMPI_Info_free(&op->info);
        coll_sched_free(s);
        return rc;
    }
    mpii_comm_ref(c);
    op->next = idup_running;
    idup_running = op;
    return coll_sched_finish(s, COLL_NONBLOCKING, req);
}
