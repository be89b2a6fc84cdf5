/* MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name within one job of
 * >= 2 ranks:
 *   1. rank 0 opens a port and publishes it as "dcfa-test-svc-<its pid>"
 *      (the pid keeps concurrent runs apart; the name goes to the others by
 *      MPI_Bcast, the port name too, to compare with); a barrier; every other
 *      rank looks the name up and gets exactly the port name;
 *   2. rank 0 accepts (MPI_COMM_SELF) and the others connect (their own
 *      communicator, root 0) with the looked-up name: data both ways and an
 *      allreduce, then disconnect;
 *   3. rank 0 unpublishes; a barrier; a lookup (with MPI_ERRORS_RETURN on
 *      MPI_COMM_WORLD) fails with MPI_ERR_NAME on every rank;
 *   4. rank 0 publishes a second name twice (two ports): the standard leaves
 *      it undefined, so the second call may fail (any error class) or succeed
 *      (then a lookup gives one of the two ports); after unpublishing what
 *      was published, the name is gone (MPI_ERR_NAME). */
#include "mtest.h"
#include <unistd.h>

static void lookup_fails(const char *svc, const char *when)
{
    char got[MPI_MAX_PORT_NAME];
    int rc;

    got[0] = '\0';
    rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got);
    mtest_check_class(when, rc, MPI_ERR_NAME);
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME], port2[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME];
    char svc[64], svc2[80];
    int rank, size, rc, rc2 = MPI_SUCCESS, i, v, sum = -1;
    MPI_Comm others, inter;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        mtest_fail("name_publish needs at least 2 ranks");
        return mtest_finalize();
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1. publish, look up */
    memset(port, 0, sizeof port);
    memset(svc, 0, sizeof svc);
    if (rank == 0) {
        snprintf(svc, sizeof svc, "dcfa-test-svc-%d", (int)getpid());
        rc = MPI_Open_port(MPI_INFO_NULL, port);
        mtest_check_rc("MPI_Open_port", rc);
        rc = MPI_Publish_name(svc, MPI_INFO_NULL, port);
        mtest_check_rc("MPI_Publish_name", rc);
    }
    MPI_Bcast(svc, sizeof svc, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(port, sizeof port, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(got, 0, sizeof got);
    if (rank != 0) {
        rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got);
        if (mtest_check_rc("MPI_Lookup_name", rc))
            mtest_check(strcmp(got, port) == 0, "MPI_Lookup_name gave '%s', published '%s'", got,
                        port);
    }

    /* 2. accept / connect over the looked-up name */
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0, rank, &others);
    if (rank == 0)
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    else
        rc = MPI_Comm_connect(got, MPI_INFO_NULL, 0, others, &inter);
    if (mtest_check_rc(rank == 0 ? "MPI_Comm_accept" : "MPI_Comm_connect", rc)) {
        int rsize = -1;

        MPI_Comm_remote_size(inter, &rsize);
        mtest_check_int("remote size", rsize, rank == 0 ? size - 1 : 1);
        if (rank == 0) {
            for (i = 0; i < size - 1; i++) {
                MPI_Status st;

                v = -1;
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st);
                mtest_check(v == 100 + st.MPI_SOURCE + 1, "from remote rank %d: %d", st.MPI_SOURCE,
                            v);
                v = 200 + st.MPI_SOURCE;
                MPI_Send(&v, 1, MPI_INT, st.MPI_SOURCE, 4, inter);
            }
        } else {
            v = 100 + rank;
            MPI_Send(&v, 1, MPI_INT, 0, 3, inter);
            v = -1;
            MPI_Recv(&v, 1, MPI_INT, 0, 4, inter, MPI_STATUS_IGNORE);
            mtest_check_int("reply of rank 0", v, 200 + rank - 1);
        }
        v = rank;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
        mtest_check_int("allreduce over the intercomm", sum, rank == 0 ? size * (size - 1) / 2 : 0);
        MPI_Comm_disconnect(&inter);
    }
    MPI_Comm_free(&others);

    /* 3. unpublish; the name is gone */
    if (rank == 0) {
        rc = MPI_Unpublish_name(svc, MPI_INFO_NULL, port);
        mtest_check_rc("MPI_Unpublish_name", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    lookup_fails(svc, "MPI_Lookup_name after MPI_Unpublish_name");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4. the same name published twice */
    if (rank == 0) {
        snprintf(svc2, sizeof svc2, "%s-twice", svc);
        rc = MPI_Open_port(MPI_INFO_NULL, port2);
        mtest_check_rc("MPI_Open_port (2nd)", rc);
        rc = MPI_Publish_name(svc2, MPI_INFO_NULL, port);
        mtest_check_rc("MPI_Publish_name (first of two)", rc);
        rc2 = MPI_Publish_name(svc2, MPI_INFO_NULL, port2);
        /* undefined by the standard: an error, or a name with two ports */
        if (rc2 == MPI_SUCCESS) {
            got[0] = '\0';
            rc = MPI_Lookup_name(svc2, MPI_INFO_NULL, got);
            if (mtest_check_rc("MPI_Lookup_name of a name published twice", rc))
                mtest_check(strcmp(got, port) == 0 || strcmp(got, port2) == 0,
                            "name published twice: lookup gave '%s'", got);
            rc = MPI_Unpublish_name(svc2, MPI_INFO_NULL, port2);
            mtest_check_rc("MPI_Unpublish_name (second port)", rc);
            /* the first one may have been replaced: either answer */
            MPI_Unpublish_name(svc2, MPI_INFO_NULL, port);
        } else {
            rc = MPI_Unpublish_name(svc2, MPI_INFO_NULL, port);
            mtest_check_rc("MPI_Unpublish_name (after a refused second publish)", rc);
        }
        lookup_fails(svc2, "MPI_Lookup_name after unpublishing a name published twice");
        MPI_Close_port(port2);
        rc = MPI_Close_port(port);
        mtest_check_rc("MPI_Close_port", rc);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize();
}
