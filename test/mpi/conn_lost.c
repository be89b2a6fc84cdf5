/* A collective whose processes cannot connect must fail, not hang (issue 33 item
 * 5: a test deleting every new /dev/shm/dcfa-* entry removed the segments of a
 * job running beside it; two processes that then could not reach each other
 * each waited for ever for the other's message in an inter-communicator
 * barrier). Each rank deletes its own shm door right after MPI_Init (as that
 * test did), both wait until both have (marker files), then MPI_Barrier runs
 * with messages (DCFA_COLL_BARRIER=dissemination in the test list): every
 * connection fails ("has no door segment"), and the barrier must end with an
 * error (MPI_ERR_PROC_ABORTED, fatal) within seconds. The markers are
 * ${TMPDIR}/dcfa-<job>-*, which mpirun removes with the job. */
#include "mtest.h"
#include <dirent.h>

static void touch_and_wait(const char *job, int rank, int size)
{
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/dcfa-%s-connlost-%d", tmp && *tmp ? tmp : "/tmp", job, rank);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    for (int r = 0; r < size; r++) {
        snprintf(path, sizeof path, "%s/dcfa-%s-connlost-%d", tmp && *tmp ? tmp : "/tmp", job, r);
        for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
            mtest_sleep_ms(10);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *job = getenv("DCFA_JOBID");
    if (!job) { /* not under our mpirun: no doors to delete */
        fprintf(stderr, "conn_lost: no DCFA_JOBID\n");
        return 1;
    }
    char prefix[128];
    int n = snprintf(prefix, sizeof prefix, "dcfa-%s-%d-d", job, rank), gone = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, (size_t)n) == 0) {
            char path[600];
            snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
            gone += unlink(path) == 0;
        }
    if (d)
        closedir(d);
    if (gone != 1)
        fprintf(stderr, "rank %d: deleted %d doors\n", rank, gone);
    touch_and_wait(job, rank, size);
    MPI_Barrier(MPI_COMM_WORLD); /* fails: nobody can reach anybody */
    fprintf(stderr, "rank %d: the barrier returned\n", rank);
    return mtest_finalize();
}
