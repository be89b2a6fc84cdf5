/*
 * session_reinit: the sessions model without MPI_Init (issue 38 items 5 and 7).
 *   - MPI_Session_init again after the last MPI_Session_finalize, three rounds: each makes
 *     a communicator from mpi://WORLD and exchanges data on it with a datatype made in the
 *     first round (MPI 4.1 keeps such handles valid from one session to the next). Before,
 *     the second MPI_Session_init was refused with MPI_ERR_SESSION;
 *   - info thread_level with a word that is no thread level: MPI_ERR_OTHER (as MPICH)
 *     through the errhandler argument, which is called once; a valid one is granted;
 *   - MPI_Session_init(..., NULL): MPI_ERR_ARG through the errhandler argument;
 *   - an error on a session's communicator returns through its MPI_ERRORS_RETURN (it
 *     ended the job);
 *   - with SESSION_REINIT_WORLD=1, MPI_Init after the sessions, MPI_Finalize at the end.
 * Rank 0 prints " No Errors" when no rank found one (the errors are summed over the last
 * session's communicator).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs, calls, last_code;

static void fail(const char *what, int rc)
{
    errs++;
    fprintf(stderr, "%s: %d\n", what, rc);
}

static void on_error(MPI_Session *s, int *code, ...)
{
    calls++;
    last_code = *code;
}

static int cls_of(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* one session: a communicator over mpi://WORLD, a ring exchange with `pair`; returns the
 * errors summed over it when sum is set */
static int round_trip(int round, MPI_Datatype pair, int sum)
{
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    if (rc != MPI_SUCCESS) {
        fail("MPI_Session_init (again)", rc);
        return errs;
    }
    MPI_Group g;
    MPI_Comm c;
    int total = errs;
    if ((rc = MPI_Group_from_session_pset(s, "mpi://WORLD", &g)) != MPI_SUCCESS)
        fail("MPI_Group_from_session_pset", rc);
    else if ((rc = MPI_Comm_create_from_group(g, "h38.session_reinit", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &c)) != MPI_SUCCESS)
        fail("MPI_Comm_create_from_group", rc);
    else {
        int rank, size;
        MPI_Comm_rank(c, &rank);
        MPI_Comm_size(c, &size);
        int out[2] = {rank, 100 * round + rank}, in[2] = {-1, -1};
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        rc = MPI_Sendrecv(out, 1, pair, to, round, in, 1, pair, from, round, c, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            fail("MPI_Sendrecv with the first round's datatype", rc);
        else if (in[0] != from || in[1] != 100 * round + from)
            fail("received pair", in[1]);
        /* an error on the session's communicator returns through its handler (it ended
         * the job: the errors of the sessions model were taken as before MPI_Init) */
        int x = 0, cls = cls_of(MPI_Send(&x, 1, MPI_INT, size, 0, c));
        if (cls != MPI_ERR_RANK)
            fail("MPI_Send to rank size on the session's communicator: class", cls);
        if (sum)
            MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, c);
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
    }
    if ((rc = MPI_Session_finalize(&s)) != MPI_SUCCESS || s != MPI_SESSION_NULL)
        fail("MPI_Session_finalize", rc);
    return total;
}

int main(int argc, char **argv)
{
    const char *w = getenv("SESSION_REINIT_WORLD");
    int world = w && !strcmp(w, "1");
    MPI_Errhandler eh;
    MPI_Session_create_errhandler(on_error, &eh);

    /* a thread_level that is none */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "THIS_IS_NOT_VALID");
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(info, eh, &s);
    if (cls_of(rc) != MPI_ERR_OTHER || calls != 1 || last_code != rc)
        fail("MPI_Session_init(thread_level=THIS_IS_NOT_VALID): class / handler calls",
             cls_of(rc) * 100 + calls);
    if (rc == MPI_SUCCESS)
        MPI_Session_finalize(&s);
    calls = 0;
    rc = MPI_Session_init(MPI_INFO_NULL, eh, NULL);
    if (cls_of(rc) != MPI_ERR_ARG || calls != 1)
        fail("MPI_Session_init(session NULL): class / handler calls", cls_of(rc) * 100 + calls);

    /* the first session: a datatype that outlives it */
    MPI_Info_set(info, "thread_level", "MPI_THREAD_SERIALIZED");
    rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &s);
    if (rc != MPI_SUCCESS) {
        fail("MPI_Session_init", rc);
        return 1;
    }
    MPI_Info got;
    char level[MPI_MAX_INFO_VAL];
    int len = sizeof level, flag = 0;
    MPI_Session_get_info(s, &got);
    MPI_Info_get_string(got, "thread_level", &len, level, &flag);
    if (!flag || strcmp(level, "MPI_THREAD_SERIALIZED"))
        fail("thread_level granted", flag);
    MPI_Info_free(&got);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Session_finalize(&s);
    MPI_Info_free(&info);

    int total = 0;
    for (int round = 1; round <= 3; round++)
        total = round_trip(round, pair, round == 3 && !world);
    if (world) {
        /* the world model after the sessions */
        MPI_Init(&argc, &argv);
        int rank, size, out[2], in[2];
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        out[0] = rank;
        out[1] = 400 + rank;
        MPI_Sendrecv(out, 1, pair, (rank + 1) % size, 0, in, 1, pair, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in[1] != 400 + (rank + size - 1) % size)
            fail("MPI_COMM_WORLD after the sessions", in[1]);
        MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Type_free(&pair);
        if (rank == 0)
            printf(total ? " Found %d errors\n" : " No Errors\n", total);
        MPI_Finalize();
        return total != 0;
    }
    /* rank 0 of the world pset reports: its rank in the last session's communicator */
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group g;
    int rank = -1;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Group_rank(g, &rank);
    MPI_Group_free(&g);
    MPI_Type_free(&pair);
    MPI_Errhandler_free(&eh);
    MPI_Session_finalize(&s);
    if (rank == 0)
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    return total != 0 || errs != 0;
}
