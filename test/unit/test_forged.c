/* Unit test of what the protocol engine takes on trust (docs/faults.md): two
 * forked processes talk through core_* over the shm fabric; process 1 writes
 * forged or malformed packets straight into its ring to process 0, which must
 * report them, naming the peer, and end (status 1) -- never match them or
 * corrupt memory. The MPI layer's lookup of "which process is rank src of
 * context ctx" is played by peer_of() below: context 7 (and its collective
 * twin 8) is a two-rank world where rank r is process r; context 9 becomes
 * known only when process 0 says so; every other context is unknown. */
#include "core/core_impl.h"
#include "ut_kvs.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static core_dt bytes_dt = {.size = 1,
                           .lb = 0,
                           .extent = 1,
                           .true_lb = 0,
                           .true_extent = 1,
                           .contig = 1,
                           .nruns = 1,
                           .runs = &(core_dt_run){0, 1}};
static int ctx9_known;

static int peer_of(uint32_t ctx, int32_t src)
{
    if (ctx != 7 && ctx != 8 && !(ctx == 9 && ctx9_known))
        return CORE_PEER_NO_CTX;
    if (src < 0 || src >= 2)
        return CORE_PEER_NO_RANK;
    return src;
}

/* process 1: write one packet into process 0's ring, as a peer that lies would */
static void forge(int type, uint16_t flags, uint32_t ctx, int32_t src, int32_t tag, int msg,
                  const void *payload, uint32_t len)
{
    core_conn *c = core_conn_get(0);
    wire_hdr *h;
    while (!(h = core_conn_tx_begin(c, len, 0)))
        core_progress();
    memset(h, 0, sizeof *h);
    h->type = (uint8_t)type;
    h->flags = flags;
    h->ctx = ctx;
    h->src = src;
    h->tag = tag;
    h->seq = msg ? ++c->tx_msg_seq : 0;
    h->len = len;
    if (len && payload)
        memcpy(h + 1, payload, len);
    core_conn_tx_end(c, h);
}

static void send_wait(const void *buf, size_t n, int to, int32_t src, int tag, uint32_t ctx)
{
    core_req *r;
    core_isend(buf, n, &bytes_dt, to, src, tag, ctx, CORE_SEND_STD, &r);
    core_wait(r);
    core_req_free(r);
}

static size_t recv_wait(void *buf, size_t n, int lpid, int32_t src, int tag, uint32_t ctx)
{
    core_req *r;
    core_irecv(buf, n, &bytes_dt, lpid, src, tag, ctx, &r);
    core_wait(r);
    size_t got = (size_t)r->status.count;
    core_req_free(r);
    return got;
}

/* process 0 tells process 1 that its receive is posted */
static void go(void)
{
    char x = 1;
    if (core_s.self == 0)
        send_wait(&x, 1, 1, 0, 1000, 7);
    else
        recv_wait(&x, 1, 0, 0, 1000, 7);
}

static void wait_forever(void)
{
    char x;
    recv_wait(&x, 1, 1, 1, 4242, 7); /* never sent */
}

/* Returns the process's exit status for scenarios that end normally. */
static int scenario(const char *name)
{
    int me = core_s.self;
    char buf[64] = "payload";
    if (!strcmp(name, "posted")) {
        /* a receive posted for rank 0 (this very process) takes nothing from process 1 */
        if (me == 0) {
            core_req *r;
            core_irecv(buf, sizeof buf, &bytes_dt, 0, 0, 5, 7, &r);
            go();
            core_wait(r);
            return 0; /* reached only if the forged message was matched */
        }
        go();
        forge(WIRE_EAGER, 0, 7, 0, 5, 1, buf, 8);
    } else if (!strcmp(name, "anysource")) {
        if (me == 0) {
            core_req *r;
            core_irecv(buf, sizeof buf, &bytes_dt, -1, CORE_ANY_SOURCE, 5, 7, &r);
            go();
            core_wait(r);
            return 0;
        }
        go();
        forge(WIRE_EAGER, 0, 7, 0, 5, 1, buf, 8);
    } else if (!strcmp(name, "unexpected")) {
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_EAGER, 0, 7, 0, 5, 1, buf, 8);
    } else if (!strcmp(name, "rts")) {
        /* an RTS claiming another rank: its buffer address would be read from the wrong process */
        wire_rndv rv = {.addr = 4096, .size = 1 << 20, .req = 1};
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_RTS, 0, 7, 0, 5, 1, &rv, sizeof rv);
    } else if (!strcmp(name, "norank")) {
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_EAGER, 0, 7, 5, 5, 1, buf, 8);
    } else if (!strcmp(name, "unknownctx")) {
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_EAGER, 0, 99, 1, 5, 1, buf, 8);
    } else if (!strcmp(name, "latectx")) {
        /* legitimate: the message comes before the communicator of context 9 exists here */
        if (me == 1) {
            send_wait("late", 5, 0, 1, 6, 9);
            go();
            return 0;
        }
        char x;
        core_req *r;
        core_irecv(&x, 1, &bytes_dt, 1, 1, 4242, 7, &r); /* never completes */
        for (int i = 0; i < 2000 && !core_s.nheld; i++) {
            core_progress();
            usleep(1000);
        }
        if (!core_s.nheld) {
            fprintf(stderr, "latectx: the message for context 9 was not held\n");
            return 2;
        }
        ctx9_known = 1;
        core_idle_check();
        size_t got = recv_wait(buf, sizeof buf, 1, 1, 6, 9);
        go();
        if (got != 5 || strcmp(buf, "late") != 0 || core_s.nheld != 0) {
            fprintf(stderr, "latectx: got %zu bytes '%s', %d held\n", got, buf, core_s.nheld);
            return 2;
        }
        return 0;
    } else if (!strcmp(name, "heldforged")) {
        /* held while context 9 was unknown, then found to claim the wrong rank at match time */
        if (me == 1) {
            forge(WIRE_EAGER, 0, 9, 0, 6, 1, buf, 8);
            go();
        } else {
            for (int i = 0; i < 2000 && !core_s.nheld; i++) {
                core_progress();
                usleep(1000);
            }
            ctx9_known = 1;
            core_req *r;
            core_irecv(buf, sizeof buf, &bytes_dt, 0, 0, 6, 9, &r);
            core_wait(r);
            return 0;
        }
    } else if (!strcmp(name, "badlen")) {
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_EAGER, 0, 7, 1, 5, 1, NULL, (uint32_t)core_payload_max() + 1);
    } else if (!strcmp(name, "badpad")) {
        /* a PAD must cover the ring up to its end: one block early in the ring does not */
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_PAD, 0, 0, 0, 0, 0, NULL, 0);
    } else if (!strcmp(name, "baddone")) {
        wire_done d = {.req = 12345, .size = 8};
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_DONE, 0, 0, 0, 0, 0, &d, sizeof d);
    } else if (!strcmp(name, "badsplit")) {
        /* a SPLIT naming a send that does not exist, then DONE(SPLIT) for no split */
        wire_split sp = {.req = 777, .peer_req = 1, .off = 0, .len = 4096};
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_SPLIT, 0, 0, 0, 0, 0, &sp, sizeof sp);
    } else if (!strcmp(name, "badsplitdone")) {
        wire_done d = {.req = 1, .size = 4096};
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_DONE, WIRE_F_SPLIT, 0, 0, 0, 0, &d, sizeof d);
    } else if (!strcmp(name, "baddata")) {
        wire_frag f = {.req = 1, .offset = 1u << 30};
        if (me == 0)
            wait_forever();
        else
            forge(WIRE_DATA, 0, 0, 0, 0, 0, &f, sizeof f);
    }
    /* the forger: its peer must die of it; the parent ends us */
    for (;;)
        pause();
}

static int run_rank(int rank, const char *job, const char *name, const char *errfile)
{
    int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
    }
    setenv("DCFA_CTX_WAIT", "1", 1);
    util_tunables_load();
    util_backoff_configure(2);
    util_log_rank = rank;
    core_params cp = {.self = rank, .nprocs = 2, .local_nprocs = 2, .job_id = job,
                      .kvs = {.put = ut_kvs_put, .fence = ut_kvs_fence, .get = ut_kvs_get}};
    if (core_init(&cp) != UTIL_OK)
        return 3;
    core_set_peer_lookup(peer_of);
    util_wait_idle = core_idle_check;
    int rc = scenario(name);
    if (rc == 0)
        core_finalize();
    return rc;
}

/* Runs a scenario; process 0 must exit with `want` and, if `msg`, say it on stderr. */
static int run_pair(const char *name, int want, const char *msg)
{
    char job[64], err[2][128];
    snprintf(job, sizeof job, "uf%d", (int)getpid());
    pid_t pids[2];
    ut_kvs_make(2);
    for (int r = 0; r < 2; r++) {
        snprintf(err[r], sizeof err[r], "/tmp/dcfa-test-forged-%d-%d.err", (int)getpid(), r);
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(run_rank(r, job, name, err[r]));
    }
    int st0 = -1, st1 = -1, fails = 0;
    /* process 0 decides (within 60 s, or both are ended); the forger is ended
     * once it has (it waits forever) */
    for (int ms = 0; waitpid(pids[0], &st0, WNOHANG) == 0; ms += 10) {
        if (ms >= 60000) {
            fprintf(stderr, "FAIL %s: process 0 still running after 60 s\n", name);
            kill(pids[0], SIGKILL);
            waitpid(pids[0], &st0, 0);
            want = -1;
            break;
        }
        usleep(10000);
    }
    if (want != 0)
        kill(pids[1], SIGKILL);
    waitpid(pids[1], &st1, 0);
    char text[2048] = "";
    FILE *f = fopen(err[0], "r");
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
    }
    if (want < 0 || !WIFEXITED(st0) || WEXITSTATUS(st0) != want) {
        fprintf(stderr, "FAIL %s: process 0 ended with status 0x%x, expected exit %d\n", name, st0,
                want);
        fails++;
    }
    if (want == 0 && (!WIFEXITED(st1) || WEXITSTATUS(st1) != 0)) {
        fprintf(stderr, "FAIL %s: process 1 ended with status 0x%x\n", name, st1);
        fails++;
    }
    if (msg && !strstr(text, msg)) {
        fprintf(stderr, "FAIL %s: process 0 did not report '%s'\n", name, msg);
        fails++;
    }
    if (fails)
        fprintf(stderr, "---- stderr of process 0 (%s):\n%s----\n", name, text);
    else
        printf("ok %s: %s", name, text[0] ? text : "(no message)\n");
    unlink(err[0]);
    unlink(err[1]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -f /dev/shm/dcfa-%s-*", job);
    if (system(cmd) != 0)
        fails++;
    return fails;
}

int main(void)
{
    static const struct {
        const char *name;
        int status;
        const char *msg;
    } cases[] = {
        {"posted", 1, "from rank 1: it claims to be rank 0 of context 7, which is rank 0"},
        {"anysource", 1, "from rank 1: it claims to be rank 0 of context 7, which is rank 0"},
        {"unexpected", 1, "from rank 1: it claims to be rank 0 of context 7, which is rank 0"},
        {"rts", 1, "from rank 1: it claims to be rank 0 of context 7, which is rank 0"},
        {"norank", 1, "from rank 1: it claims to be rank 5 of context 7, which has no such rank"},
        {"unknownctx", 1, "rank 1 sent messages for context 99, which no communicator"},
        {"latectx", 0, NULL},
        {"heldforged", 1, "from rank 1: it claims to be rank 0 of context 9, which is rank 0"},
        {"badlen", 1, "malformed packet from rank 1: payload longer than the largest packet"},
        {"badpad", 1, "malformed packet from rank 1: padding that does not end at the ring's end"},
        {"baddone", 1, "malformed packet from rank 1: DONE names request 12345"},
        {"baddata", 1, "malformed packet from rank 1: DATA names request 1"},
        {"badsplit", 1, "malformed packet from rank 1: SPLIT names request 777"},
        {"badsplitdone", 1, "malformed packet from rank 1: DONE (split) names request 1"},
    };
    int n = (int)(sizeof cases / sizeof cases[0]), fails = 0;
    for (int i = 0; i < n; i++)
        fails += run_pair(cases[i].name, cases[i].status, cases[i].msg) ? 1 : 0;
    printf("%d passed, %d failed\n", n - fails, fails);
    return fails ? 1 : 0;
}
