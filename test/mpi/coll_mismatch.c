/* Collectives whose ranks pass counts or datatypes that do not match: where MPICH or
 * Open MPI return MPI_ERR_TRUNCATE, so must we, through the communicator's error handler,
 * never a silent short result or a hang, and nothing printed under MPI_ERRORS_RETURN.
 *
 *   bcast          root 1000 ints, the others 10 (through the node segment)
 *   bcast_big      root 1 Mi ints (by messages), the others 10: on a communicator's first
 *                  collective (the segment is made in it) and on one whose segment exists
 *   allreduce      4 ints on rank 0, 8 on the others
 *   allreduce_type MPI_INT on rank 0, MPI_DOUBLE on the others (count 2)
 *   allreduce_big  4 ints on rank 0, 100000 on the others (one side in the segment, the
 *                  other by messages)
 *   reduce         4 ints at the root (rank 0), 8 on the others
 *   allgather, alltoall  blocks of 4 ints on rank 0, 8 on the others, once the segment
 *                  exists (small blocks go through it)
 *   ibcast, iallreduce, iallreduce_type, ireduce: the nonblocking forms
 *   bcast_short, ibcast_short  root 10 ints, the others 1000 (fewer than they expect:
 *                  the rest of their buffers would be left as it was); every receiver
 *                  must fail, also one that hears only from another receiver
 *   scatter_short  blocks of 4 ints at the root, 8 expected by the others (every one fails)
 *   allgather_own, iallgather_own  rank 0 sends 4 ints and expects blocks of 8, as the
 *                  others do: its own block would be half written, so it fails, and so
 *                  does every rank that receives rank 0's block (with the segment made
 *                  and without)
 *   gather_own     the root sends 4 ints and expects blocks of 8 (the root fails)
 *
 * A rank that receives more or fewer bytes than it expects from its sender must get
 * MPI_ERR_TRUNCATE
 * with a message naming the call; the others may get it too (in the segment every rank
 * sees the sizes) or succeed. Each case runs on a communicator of its own.
 * MISMATCH_FATAL=<case> runs that one case under MPI_ERRORS_ARE_FATAL (testlist:
 * expect_fail, stderr naming the call and MPI_ERR_TRUNCATE). */
#include "mtest.h"

enum { N_BIG = 1 << 20, N_ALLBIG = 100000 };

typedef struct {
    const char *name, *call;
    int (*run)(MPI_Comm comm, int rank, int *must_fail);
} mcase;

static int *ibuf, *obuf;

static int wait_rc(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? MPI_Wait(req, MPI_STATUS_IGNORE) : rc;
}

/* bcast: every receiver of the root's message itself; rank 1 is one in every algorithm
 * (by messages, a binomial tree's deeper ranks get what their parent could keep) */
static int c_bcast(MPI_Comm comm, int rank, int *must)
{
    *must = rank == 1;
    return MPI_Bcast(ibuf, rank == 0 ? 1000 : 10, MPI_INT, 0, comm);
}

static int c_bcast_big(MPI_Comm comm, int rank, int *must)
{
    *must = rank == 1;
    return MPI_Bcast(ibuf, rank == 0 ? N_BIG : 10, MPI_INT, 0, comm);
}

static int c_bcast_big_seg(MPI_Comm comm, int rank, int *must)
{
    MPI_Barrier(comm); /* the segment exists before the mismatched bcast */
    return c_bcast_big(comm, rank, must);
}

/* fewer than expected: every receiver fails, those that hear from the root itself and those
 * below them in a tree (a failed rank sends them empty messages) */
static int c_bcast_short(MPI_Comm comm, int rank, int *must)
{
    *must = rank != 0;
    return MPI_Bcast(ibuf, rank == 0 ? 10 : 1000, MPI_INT, 0, comm);
}

static int c_ibcast_short(MPI_Comm comm, int rank, int *must)
{
    MPI_Request req;
    *must = rank != 0;
    return wait_rc(MPI_Ibcast(ibuf, rank == 0 ? 10 : 1000, MPI_INT, 0, comm, &req), &req);
}

static int c_scatter_short(MPI_Comm comm, int rank, int *must)
{
    *must = rank != 0;
    int k = rank == 0 ? 4 : 8;
    return MPI_Scatter(ibuf, k, MPI_INT, obuf, k, MPI_INT, 0, comm);
}

/* a rank's own block described differently by its send and receive arguments */
static int c_allgather_own(MPI_Comm comm, int rank, int *must)
{
    *must = 1;
    return MPI_Allgather(ibuf, rank == 0 ? 4 : 8, MPI_INT, obuf, 8, MPI_INT, comm);
}

static int c_allgather_own_seg(MPI_Comm comm, int rank, int *must)
{
    MPI_Barrier(comm);
    return c_allgather_own(comm, rank, must);
}

static int c_iallgather_own(MPI_Comm comm, int rank, int *must)
{
    MPI_Request req;
    *must = 1;
    return wait_rc(MPI_Iallgather(ibuf, rank == 0 ? 4 : 8, MPI_INT, obuf, 8, MPI_INT, comm, &req),
                   &req);
}

static int c_gather_own(MPI_Comm comm, int rank, int *must)
{
    *must = rank == 0;
    return MPI_Gather(ibuf, rank == 0 ? 4 : 8, MPI_INT, obuf, 8, MPI_INT, 0, comm);
}

static int c_allreduce(MPI_Comm comm, int rank, int *must)
{
    *must = rank == 0;
    return MPI_Allreduce(ibuf, obuf, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, comm);
}

static int c_allreduce_type(MPI_Comm comm, int rank, int *must)
{
    *must = rank == 0;
    return MPI_Allreduce(ibuf, obuf, 2, rank == 0 ? MPI_INT : MPI_DOUBLE, MPI_SUM, comm);
}

static int c_allreduce_big(MPI_Comm comm, int rank, int *must)
{
    MPI_Barrier(comm);
    *must = rank == 0;
    return MPI_Allreduce(ibuf, obuf, rank == 0 ? 4 : N_ALLBIG, MPI_INT, MPI_SUM, comm);
}

static int c_reduce(MPI_Comm comm, int rank, int *must)
{
    *must = rank == 0;
    return MPI_Reduce(ibuf, obuf, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, 0, comm);
}

static int c_ibcast(MPI_Comm comm, int rank, int *must)
{
    MPI_Request req;
    *must = rank == 1;
    return wait_rc(MPI_Ibcast(ibuf, rank == 0 ? 1000 : 10, MPI_INT, 0, comm, &req), &req);
}

static int c_iallreduce(MPI_Comm comm, int rank, int *must)
{
    MPI_Request req;
    *must = rank == 0;
    return wait_rc(MPI_Iallreduce(ibuf, obuf, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, comm, &req),
                   &req);
}

static int c_iallreduce_type(MPI_Comm comm, int rank, int *must)
{
    MPI_Request req;
    *must = rank == 0;
    return wait_rc(
        MPI_Iallreduce(ibuf, obuf, 2, rank == 0 ? MPI_INT : MPI_DOUBLE, MPI_SUM, comm, &req), &req);
}

static int c_ireduce(MPI_Comm comm, int rank, int *must)
{
    MPI_Request req;
    *must = rank == 0;
    return wait_rc(MPI_Ireduce(ibuf, obuf, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, 0, comm, &req),
                   &req);
}

static int c_allgather(MPI_Comm comm, int rank, int *must)
{
    MPI_Barrier(comm); /* the segment exists */
    *must = rank == 0;
    int k = rank == 0 ? 4 : 8;
    return MPI_Allgather(ibuf, k, MPI_INT, obuf, k, MPI_INT, comm);
}

static int c_alltoall(MPI_Comm comm, int rank, int *must)
{
    MPI_Barrier(comm);
    *must = rank == 0;
    int k = rank == 0 ? 4 : 8;
    return MPI_Alltoall(ibuf, k, MPI_INT, obuf, k, MPI_INT, comm);
}

static const mcase cases[] = {
    {"bcast_big", "MPI_Bcast", c_bcast_big}, /* first: its communicator's first collective */
    {"bcast_big_seg", "MPI_Bcast", c_bcast_big_seg},
    {"bcast", "MPI_Bcast", c_bcast},
    {"allreduce", "MPI_Allreduce", c_allreduce},
    {"allreduce_type", "MPI_Allreduce", c_allreduce_type},
    {"allreduce_big", "MPI_Allreduce", c_allreduce_big},
    {"reduce", "MPI_Reduce", c_reduce},
    {"allgather", "MPI_Allgather", c_allgather},
    {"alltoall", "MPI_Alltoall", c_alltoall},
    {"ibcast", "MPI_Ibcast", c_ibcast},
    {"iallreduce", "MPI_Iallreduce", c_iallreduce},
    {"iallreduce_type", "MPI_Iallreduce", c_iallreduce_type},
    {"ireduce", "MPI_Ireduce", c_ireduce},
    {"bcast_short", "MPI_Bcast", c_bcast_short},
    {"ibcast_short", "MPI_Ibcast", c_ibcast_short},
    {"scatter_short", "MPI_Scatter", c_scatter_short},
    {"allgather_own", "MPI_Allgather", c_allgather_own},
    {"allgather_own_seg", "MPI_Allgather", c_allgather_own_seg},
    {"iallgather_own", "MPI_Iallgather", c_iallgather_own},
    {"gather_own", "MPI_Gather", c_gather_own},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* run one case with this process's stderr going to a file: under MPI_ERRORS_RETURN the
 * library must print nothing */
static void run_case(const mcase *k, int rank)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int must = 0;
    int rc = k->run(comm, rank, &must);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(tmp, 0, SEEK_END);
    long printed = ftell(tmp);
    if (printed > 0) {
        char line[256] = "";
        rewind(tmp);
        if (!fgets(line, sizeof line, tmp))
            line[0] = '\0';
        mtest_fail("%s: the library printed %ld bytes under MPI_ERRORS_RETURN: %s", k->name,
                   printed, line);
    }
    fclose(tmp);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (must)
        mtest_check(
            cls == MPI_ERR_TRUNCATE,
            "%s: rank %d receives more or fewer bytes than it expects: error class %d, expected "
            "MPI_ERR_TRUNCATE (%d)",
            k->name, rank, cls, MPI_ERR_TRUNCATE);
    else
        mtest_check(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "%s: rank %d: error class %d",
                    k->name, rank, cls);
    if (cls == MPI_ERR_TRUNCATE) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        mtest_check(strstr(msg, k->call) != NULL, "%s: the message does not name %s: %s", k->name,
                    k->call, msg);
    }
    /* the communicator is not used again (a mismatched collective leaves it undefined) */
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ibuf = mtest_malloc((size_t)N_BIG * sizeof(int));
    obuf = mtest_malloc((size_t)N_ALLBIG * sizeof(int));
    for (int i = 0; i < N_BIG; i++)
        ibuf[i] = i;
    const char *fatal = getenv("MISMATCH_FATAL");
    if (fatal) {
        /* the default handler: the rank that sees it ends the job */
        for (int i = 0; i < NCASES; i++) {
            if (strcmp(cases[i].name, fatal) == 0) {
                int must;
                cases[i].run(MPI_COMM_WORLD, rank, &must);
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    } else if (size < 3) {
        mtest_fail("needs 3 ranks or more");
    } else {
        for (int i = 0; i < NCASES; i++)
            run_case(&cases[i], rank);
    }
    free(obuf);
    free(ibuf);
    return mtest_finalize();
}
