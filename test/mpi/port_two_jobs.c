/* Two separately started jobs connect (driven by port_two_jobs.sh):
 *   port_two_jobs server FILE   rank 0 opens a port and writes its name to
 *                               FILE (FILE.tmp, then rename); all accept;
 *   port_two_jobs client FILE   rank 0 waits for FILE (at most 30 s) and reads
 *                               the name; all connect.
 * Then, on both sides: remote size, point-to-point both ways (MPI_ANY_SOURCE
 * with MPI_SOURCE checked), MPI_Bcast each way (MPI_ROOT / MPI_PROC_NULL),
 * MPI_Allreduce, MPI_Intercomm_merge (server low) with an allreduce,
 * MPI_Comm_disconnect; the server closes the port. Each job ends with mtest's
 * usual " No Errors". */
#include "mtest.h"
#include <errno.h>
#include <unistd.h>

#define FILE_WAIT_MS 30000

static int write_port(const char *file, const char *port)
{
    char tmp[4096];
    FILE *f;
    int ok;

    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    f = fopen(tmp, "w");
    if (f == NULL)
        return 0;
    ok = fprintf(f, "%s\n", port) > 0;
    ok = fclose(f) == 0 && ok;
    return ok && rename(tmp, file) == 0;
}

static int read_port(const char *file, char *port)
{
    FILE *f = NULL;
    int waited;
    size_t n;

    for (waited = 0; waited < FILE_WAIT_MS; waited += 50) {
        f = fopen(file, "r");
        if (f != NULL)
            break;
        mtest_sleep_ms(50);
    }
    if (f == NULL)
        return 0;
    if (fgets(port, MPI_MAX_PORT_NAME, f) == NULL) {
        fclose(f);
        return 0;
    }
    fclose(f);
    n = strlen(port);
    if (n > 0 && port[n - 1] == '\n')
        port[--n] = '\0';
    return n > 0;
}

static void use_intercomm(MPI_Comm inter, int server)
{
    int rank, size, rsize = -1, i, n = 0, out[2], got[2], v[2] = {-1, -1}, sum = -1;
    int mrank = -1, msize = -1, *seen;
    MPI_Comm merged;
    MPI_Request req;
    MPI_Status st;

    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check(rsize >= 1 && rsize <= 4096, "remote size %d", rsize);
    if (rsize < 1 || rsize > 4096)
        MPI_Abort(MPI_COMM_WORLD, 3);

    /* {side, rank} to remote rank % rsize; one from each remote r with r % size == rank. */
    out[0] = server;
    out[1] = rank;
    MPI_Isend(out, 2, MPI_INT, rank % rsize, 50 + server, inter, &req);
    for (i = 0; i < rsize; i++)
        if (i % size == rank)
            n++;
    seen = mtest_malloc(sizeof(int) * (size_t)rsize);
    memset(seen, 0, sizeof(int) * (size_t)rsize);
    for (i = 0; i < n; i++) {
        got[0] = got[1] = -1;
        MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, 50 + !server, inter, &st);
        if (!mtest_check(got[0] == !server && got[1] >= 0 && got[1] < rsize,
                         "unexpected message {%d,%d}", got[0], got[1]))
            continue;
        seen[got[1]]++;
        mtest_check(st.MPI_SOURCE == got[1], "MPI_SOURCE %d for a message of remote rank %d",
                    st.MPI_SOURCE, got[1]);
    }
    for (i = 0; i < rsize; i++)
        mtest_check(seen[i] == (i % size == rank), "%d messages from remote rank %d", seen[i], i);
    free(seen);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    /* Bcast server -> client, then client -> server. */
    if (server) {
        v[0] = 2718;
        v[1] = size;
        MPI_Bcast(v, 2, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
        v[0] = v[1] = -1;
        MPI_Bcast(v, 2, MPI_INT, 0, inter);
        mtest_check(v[0] == 3141 && v[1] == rsize, "bcast from the client: {%d,%d}", v[0], v[1]);
    } else {
        MPI_Bcast(v, 2, MPI_INT, 0, inter);
        mtest_check(v[0] == 2718 && v[1] == rsize, "bcast from the server: {%d,%d}", v[0], v[1]);
        v[0] = 3141;
        v[1] = size;
        MPI_Bcast(v, 2, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    }

    /* Allreduce: the sum of the other side's (rank + 1). */
    i = rank + 1;
    MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, inter);
    mtest_check_int("allreduce over the intercomm", sum, rsize * (rsize + 1) / 2);

    /* Merge, server low. */
    MPI_Intercomm_merge(inter, !server, &merged);
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    mtest_check_int("merged size", msize, size + rsize);
    mtest_check_int("merged rank", mrank, server ? rank : rsize + rank);
    sum = -1;
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    mtest_check_int("allreduce on the merged comm", sum, msize * (msize - 1) / 2);
    MPI_Comm_free(&merged);
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME];
    int rank, server, rc;
    MPI_Comm inter = MPI_COMM_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
        mtest_fail("usage: port_two_jobs server|client FILE");
        return mtest_finalize();
    }
    server = strcmp(argv[1], "server") == 0;
    memset(port, 0, sizeof port);
    if (rank == 0) {
        if (server) {
            rc = MPI_Open_port(MPI_INFO_NULL, port);
            mtest_check_rc("MPI_Open_port", rc);
            if (!write_port(argv[2], port))
                mtest_fail("cannot write the port name to %s: %s", argv[2], strerror(errno));
        } else if (!read_port(argv[2], port)) {
            /* the server never wrote it: nothing to connect to */
            fprintf(stderr, "[rank 0] no port name in %s after %d ms\n", argv[2], FILE_WAIT_MS);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }

    if (server)
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    else
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    if (mtest_check_rc(server ? "MPI_Comm_accept" : "MPI_Comm_connect", rc)) {
        use_intercomm(inter, server);
        MPI_Comm_disconnect(&inter);
        mtest_check(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle set");
    }
    if (server && rank == 0) {
        rc = MPI_Close_port(port);
        mtest_check_rc("MPI_Close_port", rc);
    }
    return mtest_finalize();
}
