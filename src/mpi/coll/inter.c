/* Collectives on inter-communicators. Two shapes:
 *  - leader based (barrier, bcast, reduce, allreduce, reduce_scatter): a phase
 *    on the local group (an intra algorithm of select.c run on c->local_comm
 *    through coll_sched_set_on), an exchange between the two local rank 0s
 *    (the leaders) over the inter-communicator, another local phase;
 *  - direct (gatherv, scatterv, allgatherv, alltoallw): every message goes
 *    between the two groups over the inter-communicator.
 * A leader exchange posts its receive and its send in one round, so neither
 * leader waits for the other to go first. Roots: MPI_ROOT is the root process,
 * MPI_PROC_NULL the other processes of the root's group (they do nothing), a
 * rank is the root's rank in the remote group (the receiving side). No
 * MPI_IN_PLACE on inter-communicators (the bindings refuse it). */
#include "mpi/coll/algo.h"

/* Local phases: the intra choice of select.c on the local group. Each runs
 * its builder with the schedule's default communicator set to local_comm. */
static int local_barrier(coll_sched *s, mpii_comm *c)
{
    mpii_comm *old = coll_sched_set_on(s, c->local_comm);
    int rc = coll_barrier(s, c->local_comm);
    coll_sched_set_on(s, old);
    return rc;
}

static int local_bcast(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, mpii_comm *c)
{
    mpii_comm *old = coll_sched_set_on(s, c->local_comm);
    int rc = coll_bcast(s, buf, count, dt, 0, c->local_comm);
    coll_sched_set_on(s, old);
    return rc;
}

static int local_reduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    mpii_comm *old = coll_sched_set_on(s, c->local_comm);
    int rc = coll_reduce(s, sbuf, rbuf, count, dt, op, 0, c->local_comm);
    coll_sched_set_on(s, old);
    return rc;
}

static int local_scatterv(coll_sched *s, const void *sbuf, const MPI_Count counts[],
                          MPI_Datatype dt, void *rbuf, mpii_comm *c)
{
    mpii_comm *old = coll_sched_set_on(s, c->local_comm);
    int rc = coll_scatterv(s, sbuf, counts, coll_displs_packed(s, c->size, counts), dt, rbuf,
                           (MPI_Aint)counts[c->rank], dt, 0, c->local_comm);
    coll_sched_set_on(s, old);
    return rc;
}

/* the leaders swap: receive the remote leader's into rbuf, send sbuf */
static void leader_swap(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                        MPI_Datatype dt, mpii_comm *c)
{
    if (c->rank == 0) {
        coll_sched_recv(s, rbuf, count, dt, 0, NULL);
        coll_sched_send(s, sbuf, count, dt, 0, NULL);
    }
    coll_sched_round(s);
}

/* Everybody of the local group has entered (local barrier), the leaders
 * learn that the other group has too, and tell their group (a one-byte
 * broadcast: a zero-byte one would add no message). */
int coll_inter_barrier(coll_sched *s, mpii_comm *c)
{
    int rc = local_barrier(s, c);
    if (rc != MPI_SUCCESS)
        return rc;
    char *token = coll_sched_alloc(s, 2);
    token[0] = token[1] = 0;
    leader_swap(s, token, token + 1, 1, MPI_BYTE, c);
    return local_bcast(s, token + 1, 1, MPI_BYTE, c);
}

int coll_inter_bcast(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                     mpii_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        coll_sched_send(s, buf, count, dt, 0, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (c->rank == 0) {
        coll_sched_recv(s, buf, count, dt, root, NULL);
        coll_sched_round(s);
    }
    return local_bcast(s, buf, count, dt, c);
}

/* the remote group reduces to its leader, which sends the result to the root */
int coll_inter_reduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                      MPI_Op op, int root, mpii_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        coll_sched_recv(s, rbuf, count, dt, 0, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    void *part = c->rank == 0 ? coll_sched_alloc_typed(s, count, dt) : NULL;
    int rc = local_reduce(s, sbuf, part, count, dt, op, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == 0) {
        if (c->size == 1 || count == 0) /* no local round copied sbuf into part */
            part = (void *)sbuf;
        coll_sched_send(s, part, count, dt, root, NULL);
        coll_sched_round(s);
    }
    return MPI_SUCCESS;
}

/* the reduction of the local group's data at the local leader, or sbuf itself
 * when there is nothing to reduce (one process, no elements) */
static const void *local_part(coll_sched *s, const void *sbuf, MPI_Aint count, MPI_Datatype dt,
                              MPI_Op op, mpii_comm *c, int *rc)
{
    void *part = c->rank == 0 ? coll_sched_alloc_typed(s, count, dt) : NULL;
    *rc = local_reduce(s, sbuf, part, count, dt, op, c);
    if (c->rank == 0 && (c->size == 1 || count == 0))
        return sbuf;
    return part;
}

/* each group gets the other's reduction: local reduce, leaders swap, local bcast */
int coll_inter_allreduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    int rc;
    const void *part = local_part(s, sbuf, count, dt, op, c, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    leader_swap(s, part, rbuf, count, dt, c);
    return local_bcast(s, rbuf, count, dt, c);
}

/* The vector (sum of the local rcounts elements, the same length in both
 * groups) is reduced within each group, the leaders swap the results, and
 * each scatters the other group's over its own group by rcounts. */
int coll_inter_reduce_scatter(coll_sched *s, const void *sbuf, void *rbuf,
                              const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    MPI_Aint total = 0;
    for (int i = 0; i < c->size; i++)
        total += (MPI_Aint)rcounts[i];
    int rc;
    const void *part = local_part(s, sbuf, total, dt, op, c, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    void *other = c->rank == 0 ? coll_sched_alloc_typed(s, total, dt) : NULL;
    leader_swap(s, part, other, total, dt, c);
    return local_scatterv(s, other, rcounts, dt, rbuf, c);
}

int coll_inter_gatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                       void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                       MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->remote->size; i++)
            coll_sched_recv(s, coll_at(rbuf, displs[i], rdt), (MPI_Aint)rcounts[i], rdt, i, NULL);
    } else {
        coll_sched_send(s, sbuf, scount, sdt, root, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}

int coll_inter_scatterv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                        const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                        MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->remote->size; i++)
            coll_sched_send(s, coll_at(sbuf, displs[i], sdt), (MPI_Aint)scounts[i], sdt, i, NULL);
    } else {
        coll_sched_recv(s, rbuf, rcount, rdt, root, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}

/* every process sends its block to every remote process and receives each
 * remote block: all posted at once, starting at a different remote rank on
 * each process so that no one process is hit by everybody first */
int coll_inter_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                          void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                          MPI_Datatype rdt, mpii_comm *c)
{
    int rn = c->remote->size;
    for (int k = 0; k < rn; k++) {
        int i = (c->rank + k) % rn;
        coll_sched_recv(s, coll_at(rbuf, displs[i], rdt), (MPI_Aint)rcounts[i], rdt, i, NULL);
        coll_sched_send(s, sbuf, scount, sdt, i, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}

/* displacements in bytes, one datatype per remote process */
int coll_inter_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                         const MPI_Count rcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype rdts[], mpii_comm *c)
{
    int rn = c->remote->size;
    for (int k = 0; k < rn; k++) {
        int i = (c->rank + k) % rn;
        coll_sched_recv(s, coll_byte_at(rbuf, rdispls[i]), (MPI_Aint)rcounts[i], rdts[i], i, NULL);
        coll_sched_send(s, coll_byte_at(sbuf, sdispls[i]), (MPI_Aint)scounts[i], sdts[i], i, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
