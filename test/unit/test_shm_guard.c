/* Another local user must not be able to stop a job, or read its messages, by
 * planting its shared-memory segments (issue 15 item 8, issue 33 item 4): a
 * process of uid nobody creates names, mode 0666, for a pair of processes.
 *   - The names the pair's rings and door had before names took a token no one
 *     else can guess (/dcfa-<job>-0-1, -1-0, -1, -0-s), planted before the pair
 *     starts: the pair must run as if nothing were there (it was stopped with
 *     "made by someone else" before).
 *   - The true names of its rings, planted after start-up and before the first
 *     message by someone who knows the name keys in the pair's cards (which no
 *     other user can learn: the key/value exchange is the job's): the pair must
 *     refuse them loudly (non-zero exit, a message naming the segment and its
 *     owner; the sender's status UTIL_EACCES, MPI_ERR_ACCESS in MPI, not "a peer
 *     process has aborted"), and nothing may be written into them.
 * SipHash-2-4 (the names' tokens) is checked against its published vectors first.
 * Needs root (to act as nobody); without it the test says so and is skipped. */
#include "core/core_impl.h"
#include "mpi/mpii.h"
#include "ut_kvs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_EACCES 10 /* the sender's core_isend said UTIL_EACCES */

static core_dt bytes_dt = {.size = 1, .lb = 0, .extent = 1, .true_lb = 0, .true_extent = 1,
                           .contig = 1, .nruns = 1, .runs = &(core_dt_run){0, 1}};

/* shared with the pair: set once the names are planted */
static _Atomic int *go;

/* as uid/gid 65534, create /dev/shm<name> with mode 0666 */
static int plant(const char *name)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        umask(0);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
        _exit(fd >= 0 ? 0 : 3);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int rank_main(int rank, const char *job)
{
    util_tunables_load();
    util_backoff_configure(2);
    util_log_rank = rank;
    core_params cp = {.self = rank, .nprocs = 2, .local_nprocs = 2, .job_id = job,
                      .kvs = {.put = ut_kvs_put, .fence = ut_kvs_fence, .get = ut_kvs_get}};
    if (core_init(&cp) != UTIL_OK)
        return 3;
    while (!atomic_load(go))
        usleep(1000);
    char secret[64] = "the secret of rank 0";
    core_req *r = NULL;
    int rc = rank == 0 ? core_isend(secret, sizeof secret, &bytes_dt, 1, 0, 1, 7, CORE_SEND_STD, &r)
                       : core_irecv(secret, sizeof secret, &bytes_dt, 0, 0, 1, 7, &r);
    if (rc == UTIL_EACCES && mpii_errclass(rc) == MPI_ERR_ACCESS)
        return EXIT_EACCES;
    if (!r)
        return 4;
    core_wait(r); /* a refused connection ends the process with a message */
    if (rank == 1 && strcmp(secret, "the secret of rank 0") != 0)
        return 5;
    core_finalize();
    return 0;
}

/* process `rank`'s name key: the last field of its shm card in the pair's exchange */
static int card_key(int rank, uint64_t key[2])
{
    char k[32], card[1024];
    snprintf(k, sizeof k, "dcfa-card-%d", rank);
    if (ut_kvs_get(k, card, sizeof card) != UTIL_OK)
        return -1;
    return fab_shm_card_key(card, key) == UTIL_OK ? 0 : -1;
}

/* the planted names: fixed ones (old[], "%s" the job) before the pair starts, or the
 * rings of `rings` ("01": process 0's for 1, "10", "both") made from the cards' keys after
 * start-up. expect_run: the pair must run, else refuse. 0 when it went as expected. */
static int run(const char *what, const char *const *old, int nold, const char *rings,
               int expect_run)
{
    char job[64], log[64], names[8][128];
    int n = 0;
    snprintf(job, sizeof job, "ug%d", (int)getpid());
    snprintf(log, sizeof log, "/tmp/test_shm_guard.%d.log", (int)getpid());
    for (int i = 0; i < nold; i++) {
        snprintf(names[n], sizeof names[n], old[i], job);
        if (plant(names[n++]) != 0) {
            fprintf(stderr, "FAIL %s: cannot plant %s as nobody\n", what, names[n - 1]);
            return 1;
        }
    }
    ut_kvs_make(2);
    atomic_store(go, 0);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
            dup2(fd, 2);
            alarm(20); /* a hang is a failure too */
            _exit(rank_main(r, job));
        }
    }
    int fails = 0;
    if (rings) {
        uint64_t key[2][2];
        for (int t = 0; t < 2000 && (card_key(0, key[0]) != 0 || card_key(1, key[1]) != 0); t++)
            usleep(10000);
        uint64_t jh = fab_job_hash(job);
        for (int owner = 0; owner < 2; owner++) {
            if (strcmp(rings, "both") != 0 && rings[0] - '0' != owner)
                continue;
            if (card_key(owner, key[owner]) != 0) {
                fprintf(stderr, "FAIL %s: no card of process %d\n", what, owner);
                fails++;
                continue;
            }
            fab_shm_name(names[n], sizeof names[n], job, owner, key[owner], 'r',
                         FAB_GID(jh, 1 - owner), 0);
            if (plant(names[n++]) != 0) {
                fprintf(stderr, "FAIL %s: cannot plant %s as nobody\n", what, names[n - 1]);
                fails++;
            }
        }
    }
    atomic_store(go, 1);
    /* as mpirun does: the first rank to fail ends the other */
    int refused = 0, st, st0 = -1;
    pid_t first = wait(&st);
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        refused = 1;
    else if (WIFSIGNALED(st))
        fprintf(stderr, "FAIL %s: rank %d died of signal %d\n", what, first == pids[0] ? 0 : 1,
                WTERMSIG(st));
    if (first == pids[0])
        st0 = st;
    pid_t other = first == pids[0] ? pids[1] : pids[0];
    if (refused)
        kill(other, SIGKILL);
    waitpid(other, &st, 0);
    if (other == pids[0])
        st0 = st;
    if (!refused && WIFEXITED(st) && WEXITSTATUS(st) != 0)
        refused = 1;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "grep -q 'someone else' %s", log);
    int said = system(cmd) == 0;
    if (expect_run && (refused || said)) {
        fprintf(stderr, "FAIL %s: the pair did not run beside names another user planted\n", what);
        fails++;
    }
    if (!expect_run && !refused) {
        fprintf(stderr, "FAIL %s: the pair ran over segments another user planted\n", what);
        fails++;
    }
    if (!expect_run && !said) {
        fprintf(stderr, "FAIL %s: no message about the planted segment\n", what);
        fails++;
    }
    /* the sender that meets the planted ring gets UTIL_EACCES, not "peer gone" */
    if (!expect_run && strcmp(rings, "10") != 0 &&
        !(WIFEXITED(st0) && WEXITSTATUS(st0) == EXIT_EACCES)) {
        fprintf(stderr, "FAIL %s: the sender did not return UTIL_EACCES (MPI_ERR_ACCESS)\n", what);
        fails++;
    }
    if (fails) {
        fprintf(stderr, "the ranks said:\n");
        snprintf(cmd, sizeof cmd, "cat %s >&2", log);
        if (system(cmd) != 0)
            fails++;
    }
    for (int i = 0; i < n; i++) {
        struct stat sb;
        char path[160];
        snprintf(path, sizeof path, "/dev/shm%s", names[i]);
        if (stat(path, &sb) != 0 || sb.st_size != 0 || sb.st_uid != 65534) {
            fprintf(stderr, "FAIL %s: planted %s was used (%s, %lld bytes)\n", what, path,
                    stat(path, &sb) != 0 ? "gone" : "there", (long long)sb.st_size);
            fails++;
        }
        unlink(path);
    }
    snprintf(cmd, sizeof cmd, "rm -f /dev/shm/dcfa-%s-* %s", job, log);
    if (system(cmd) != 0)
        fails++;
    return fails;
}

/* SipHash-2-4 with key 00 01 .. 0f over the messages 00 01 .. (len-1): the reference
 * implementation's vectors for lengths 0, 7, 8 and 15 */
static int siphash_vectors(void)
{
    static const struct {
        size_t len;
        uint64_t want;
    } v[] = {{0, 0x726fdb47dd0e0e31ull},
             {7, 0xab0200f58b01d137ull},
             {8, 0x93f5f5799a932462ull},
             {15, 0xa129ca6149be45e5ull}};
    const uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    unsigned char msg[16];
    int fails = 0;
    for (int i = 0; i < 16; i++)
        msg[i] = (unsigned char)i;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint64_t got = util_siphash(key, msg, v[i].len);
        if (got != v[i].want) {
            fprintf(stderr, "FAIL siphash of %zu bytes: %016llx, expected %016llx\n", v[i].len,
                    (unsigned long long)got, (unsigned long long)v[i].want);
            fails++;
        }
    }
    return fails;
}

int main(void)
{
    if (siphash_vectors() != 0)
        return 1;
    if (geteuid() != 0) {
        printf("SKIP: acting as another user (nobody) needs root\n");
        return 77;
    }
    go = mmap(NULL, sizeof *go, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int failed = 0, n = 0;
    /* the names a job's segments had before they took tokens: nothing to the pair now */
    failed += run("old names",
                  (const char *const[]){"/dcfa-%s-0-1", "/dcfa-%s-1-0", "/dcfa-%s-1", "/dcfa-%s-0",
                                        "/dcfa-%s-0-s", "/dcfa-%s-1-s"},
                  6, NULL, 1) != 0;
    n++;
    /* the true names, by someone who knows the keys: refused */
    failed += run("rings", NULL, 0, "both", 0) != 0;
    n++;
    /* the sender's ring only: it refuses, with UTIL_EACCES */
    failed += run("sender's ring", NULL, 0, "01", 0) != 0;
    n++;
    /* the receiver's ring only (the sender's stays its own): the receiver refuses */
    failed += run("receiver's ring", NULL, 0, "10", 0) != 0;
    n++;
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}
