/* libFuzzer target: the packet decoder (core_wire_check and the dispatch of a
 * ring block to its protocol, src/core/conn.c) and everything a packet
 * reaches (matching, the unexpected queue, rendezvous and copy-path state,
 * cancel, the envelope check against the connection).
 *
 * One process plays process 0 of a two-process job on the shm fabric; the
 * fuzzer plays process 1 by writing packets straight into process 0's receive
 * ring, as a peer that lies would. Process 1 does not exist: its door segment
 * is faked so the connection can be made, and its pid in the pair header is 0
 * (single-copy reads fail and fall back to the copy path).
 *
 * Input: byte 0 chooses the requests posted first (bit 0 a receive from rank
 * 1, bit 1 an CORE_ANY_SOURCE receive, bit 2 a rendezvous send to process 1,
 * bit 3 a synchronous eager send, bit 4 a large receive); byte 1 which header
 * fields the harness makes valid (bit 0 version, bit 1 message sequence
 * number, bit 2 credit). Then packets: 32 header bytes (the mark is set by the
 * harness) and as many payload bytes as the header's len, taken from the input
 * (zeros when it runs out). A packet the decoder rejects ends "the process"
 * (util_die): the harness catches that (util_die_hook), resets the core and
 * goes on. Memory errors are what the fuzzer looks for.
 *
 * Built by test/fuzz/run.sh (clang -fsanitize=fuzzer,address,undefined) with
 * the util, fabric and core sources; without -DFUZZ_LIBFUZZER it is a plain
 * program that runs the files named on its command line (the regression
 * corpus, test/fuzz/corpus-packet/, run by ctest). */
#include "core/core_impl.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char job[32];
static jmp_buf die_jump;
static int inited;
static uint8_t sbuf[1 << 16], rbuf[3][1 << 16];
static core_dt bytes_dt = {.size = 1,
                           .extent = 1,
                           .true_extent = 1,
                           .contig = 1,
                           .nruns = 1,
                           .runs = &(core_dt_run){0, 1}};

/* context 7 (and 8) is a two-rank world, rank r = process r; the rest unknown */
static int peer_of(uint32_t ctx, int32_t src)
{
    if (ctx != 7 && ctx != 8)
        return CORE_PEER_NO_CTX;
    return src >= 0 && src < 2 ? src : CORE_PEER_NO_RANK;
}

static _Noreturn void on_die(void) { longjmp(die_jump, 1); }

/* the key/value exchange of a job of two where process 1 is never started: its
 * card names this process (so single-copy reads reach our own memory) and carries a
 * name key of the harness's (its door is made here) */
static char my_cards[1024];
static const uint64_t peer_key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
static int kv_put(const char *key, const char *value)
{
    snprintf(my_cards, sizeof my_cards, "%s", value);
    return UTIL_OK;
}
static int kv_fence(void) { return UTIL_OK; }
static int kv_get(const char *key, char *value, int maxlen)
{
    int n = strcmp(key, "dcfa-card-1") == 0
                /* it offers the largest ring: the connection takes this process's */
                ? snprintf(value, (size_t)maxlen, "shm:%s:%d/%s/2/%u/%016llx%016llx",
                           util_node_key(), (int)getpid(), job, 1u << 24,
                           (unsigned long long)peer_key[0], (unsigned long long)peer_key[1])
                : snprintf(value, (size_t)maxlen, "%s", my_cards);
    return n < maxlen ? UTIL_OK : -ENOSPC;
}

static void start(void)
{
    core_params cp = {.self = 0, .nprocs = 2, .local_nprocs = 2, .job_id = job,
                      .kvs = {.put = kv_put, .fence = kv_fence, .get = kv_get}};
    if (core_init(&cp) != UTIL_OK)
        abort();
    core_set_peer_lookup(peer_of);
}

/* the peer is this harness, which never finalizes: its FIN counts as exchanged */
static void peer_finished(void)
{
    for (int i = 0; i < core_s.nactive; i++)
        core_s.active[i]->fin_in = core_s.active[i]->fin_out = 1;
}

/* the name of process 0's (this process's) ring for process 1: its name key is the
 * last field of its shm card */
static void ring_name(char *name, size_t len)
{
    uint64_t key[2] = {0, 0};
    (void)fab_shm_card_key(my_cards, key);
    fab_shm_name(name, len, job, 0, key, 'r', FAB_GID(fab_job_hash(job), 1), 0);
}

/* a fresh core and a fresh pair segment for the next input */
static void reset(void)
{
    peer_finished();
    for (int i = 0; i < core_s.nactive; i++) {
        util_qnode *n;
        while ((n = util_queue_first(&core_s.active[i]->backlog))) {
            util_queue_remove(n);
            free(UTIL_CONTAINER(n, core_pend, qn));
        }
    }
    core_s.in_progress = 0;
    char name[96];
    ring_name(name, sizeof name);
    core_finalize();
    shm_unlink(name);
    start();
}

static void cleanup(void)
{
    char name[96];
    ring_name(name, sizeof name);
    shm_unlink(name);
    fab_shm_name(name, sizeof name, job, 1, peer_key, 'd', 0, 0);
    shm_unlink(name);
    peer_finished();
    core_finalize();
}

static void init_once(void)
{
    if (inited)
        return;
    inited = 1;
    snprintf(job, sizeof job, "fz%d", (int)getpid());
    setenv("DCFA_MAX_CREDIT", "8", 1);
    setenv("DCFA_BLOCK_SIZE", "512", 1);
    setenv("DCFA_EAGER_LIMIT", "512", 1);
    setenv("DCFA_CTX_WAIT", "0", 1);
    util_tunables_load();
    util_backoff_configure(2);
    util_log_fd = getenv("FUZZ_VERBOSE") ? 2 : -1;
    util_die_hook = on_die;
    /* process 1's door, so that connecting to it does not wait for it */
    char name[96];
    fab_shm_name(name, sizeof name, job, 1, peer_key, 'd', 0, 0);
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    /* the door's exact size: its header (64 bytes), 64 slots of 8 bytes for processes of
     * other jobs, and a flag per process of the job */
    if (fd < 0 || ftruncate(fd, 64 + 64 * 8 + 2) != 0)
        abort();
    close(fd);
    start();
    atexit(cleanup);
}

static void post_requests(uint8_t what)
{
    core_req *r;
    if (what & 1)
        core_irecv(rbuf[0], 200, &bytes_dt, 1, 1, 5, 7, &r);
    if (what & 2)
        core_irecv(rbuf[1], 100, &bytes_dt, -1, CORE_ANY_SOURCE, CORE_ANY_TAG, 7, &r);
    if (what & 4)
        core_isend(sbuf, 5000, &bytes_dt, 1, 0, 9, 7, CORE_SEND_STD, &r);
    if (what & 8)
        core_isend(sbuf, 16, &bytes_dt, 1, 0, 10, 7, CORE_SEND_SYNC, &r);
    if (what & 16)
        core_irecv(rbuf[2], sizeof rbuf[2], &bytes_dt, 1, 1, 11, 7, &r);
}

static void one_input(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    uint8_t what = data[0], fix = data[1];
    size_t at = 2;
    core_conn *c = core_conn_get(1);
    if (!c)
        abort();
    post_requests(what);
    for (int k = 0; k < 64 && at + sizeof(wire_hdr) <= size; k++) {
        wire_hdr h;
        memcpy(&h, data + at, sizeof h);
        at += sizeof h;
        if (fix & 1)
            h.version = WIRE_VERSION;
        if ((fix & 2) && (h.type == WIRE_EAGER || h.type == WIRE_RTS))
            h.seq = c->rx_msg_seq + 1;
        if (fix & 4)
            h.credit = 0;
        /* a packet may cover the blocks up to the ring's end */
        uint32_t at_block = c->rx_count % c->nblocks;
        uint8_t *block = c->rx_ring + (size_t)at_block * core_s.block_size;
        size_t room = (size_t)(c->nblocks - at_block) * core_s.block_size - sizeof h;
        size_t n = h.len < room ? h.len : room;
        size_t avail = size - at < n ? size - at : n;
        memset(block + sizeof h, 0, room);
        memcpy(block + sizeof h, data + at, avail);
        at += avail;
        h.mark = 0;
        memcpy(block, &h, sizeof h);
        __atomic_store_n((uint32_t *)block, c->rx_count + 1, __ATOMIC_RELEASE);
        for (int p = 0; p < 3; p++)
            core_progress();
    }
    core_idle_check();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    if (setjmp(die_jump) == 0)
        one_input(data, size);
    reset();
    return 0;
}

#ifndef FUZZ_LIBFUZZER
/* regression mode: run each file given */
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        printf("ok %s (%zu bytes)\n", argv[i], n);
    }
    return 0;
}
#endif
