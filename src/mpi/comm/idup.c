/* MPI_Comm_idup: the context agreement of MPI_Comm_dup (comm.h, ctx.c) as a
 * collective schedule. Each round: a local step that makes this process's
 * contribution (mpii_ctxag_offer), an allreduce (BAND) of the contributions
 * (for an inter-communicator one over each group, on local_comm, and one
 * across, so both groups see the AND of everybody), and a local step that
 * decides (mpii_ctxag_decide): build the communicator and set the user's
 * handle, or append another round to the same schedule. Blocking and
 * nonblocking agreements share the rule of ctx.c, so any mix of them, in
 * any order on different processes, completes.
 *
 * Per the standard the duplicate is as if MPI_Comm_dup had run at the call:
 * attributes are copied (copy callbacks run) and the info duplicated then. */
#include "mpi/comm/comm.h"
#include "mpi/coll/algo.h"
#include "mpi/attr/attr.h"

#include <string.h>

typedef struct idup_op {
    mpii_comm *c;
    mpii_ctxag ag;
    MPI_Comm *newcomm;
    mpii_attr *attrs;
    MPI_Info info;
    unsigned mine[MPII_CTXAG_W];
    unsigned all[MPII_CTXAG_W];   /* intra: the AND; inter: the remote group's */
    unsigned local[MPII_CTXAG_W]; /* inter: the local group's AND */
} idup_op;

static int idup_contribute(coll_sched *s, void *arg)
{
    idup_op *op = arg;
    (void)s;
    /* alone in the communicator: nobody waits for this contribution, so
     * rather than retrying with nothing (a loop without messages) it waits
     * until it has something to offer */
    if (!op->c->is_inter && op->c->size == 1 && mpii_ctxag_would_wait(&mpii_ctx_st, &op->ag))
        return COLL_SCHED_AGAIN;
    mpii_ctxag_offer(&mpii_ctx_st, &op->ag, op->mine);
    return MPI_SUCCESS;
}

static int idup_decide(coll_sched *s, void *arg);

/* one round: contribution, allreduce(s), decision */
static int idup_attempt(coll_sched *s, idup_op *op)
{
    mpii_comm *c = op->c;
    int rc = coll_sched_call(s, idup_contribute, op);
    coll_sched_round(s);
    if (rc == MPI_SUCCESS)
        rc = coll_allreduce(s, op->mine, op->all, MPII_CTXAG_W, MPI_UNSIGNED, MPI_BAND, c);
    if (rc == MPI_SUCCESS && c->is_inter) {
        mpii_comm *old = coll_sched_set_on(s, c->local_comm);
        rc = coll_allreduce(s, op->mine, op->local, MPII_CTXAG_W, MPI_UNSIGNED, MPI_BAND,
                            c->local_comm);
        coll_sched_set_on(s, old);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_sched_call(s, idup_decide, op);
    coll_sched_round(s);
    return rc;
}

/* the agreement is over (a communicator or a failure): drop what the op holds */
static void idup_end(idup_op *op)
{
    mpii_ctxag_end(&mpii_ctx_st, &op->ag);
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
    if (c->is_inter)
        for (int w = 0; w < MPII_CTXAG_W; w++)
            op->all[w] &= op->local[w];
    int pairs[2] = {0, -1};
    int rc = mpii_ctxag_decide(&mpii_ctx_st, &op->ag, op->all, c->is_inter ? 2 : 1, pairs);
    if (rc == UTIL_OK) {
        mpii_comm *n = mpii_comm_build_dup(c, pairs[0], pairs[1]);
        n->attrs = op->attrs;
        n->info = op->info;
        op->attrs = NULL;
        op->info = MPI_INFO_NULL;
        *op->newcomm = n->handle;
        idup_end(op);
        return MPI_SUCCESS;
    }
    if (rc == UTIL_ENOENT) {
        mpii_cause("no context id free on every process (%d in use)", MPII_CTX_PAIRS);
        *op->newcomm = MPI_COMM_NULL;
        idup_end(op);
        return MPI_ERR_OTHER;
    }
    return idup_attempt(s, op);
}

int mpii_comm_idup(mpii_comm *c, MPI_Info info, int use_info, MPI_Comm *newcomm, MPI_Request *req)
{
    coll_sched *s = coll_sched_create_kind(c, 1);
    idup_op *op = coll_sched_alloc(s, sizeof *op);
    memset(op, 0, sizeof *op);
    op->c = c;
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
    mpii_ctxag_begin(&mpii_ctx_st, &op->ag, mpii_comm_ctx_key(c));
    return coll_sched_finish(s, COLL_NONBLOCKING, req);
}
