/* Unit test of context-id allocation (src/mpi/comm/ctx.c) and of the
 * agreement rule of comm.h, simulated over NPROC processes, each with its
 * own bitmap: communicators are created in random disjoint subsets at the
 * same time (as MPI_Comm_split / MPI_Comm_create_group do), inter-
 * communicators between two disjoint sets, and freed at random. Checked
 * after every step: no process ever gets a pair it already holds, and two
 * live communicators that share a pair have no member in common. */
#include "mpi/comm/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPROC   12
#define MAXCOMM 4096

#include "ut_check.h"

static mpii_ctx_space proc[NPROC];
static struct sim_comm {
    int live;
    uint32_t ctx;
    unsigned members; /* bit per process */
} comms[MAXCOMM];
static int ncomms;

static void test_basic(void)
{
    mpii_ctx_space s;
    int p[3];
    mpii_ctx_space_init(&s);
    CHECK(mpii_ctx_pick(s.free, 1, p) == UTIL_OK && p[0] == 2, "first free pair is 2: %d", p[0]);
    CHECK(mpii_ctx_take(&s, 0) == UTIL_EINVAL && mpii_ctx_take(&s, 1) == UTIL_EINVAL,
          "world and self pairs are taken");
    CHECK(mpii_ctx_take(&s, 2) == UTIL_OK && mpii_ctx_take(&s, 2) == UTIL_EINVAL, "take twice");
    CHECK(mpii_ctx_pick(s.free, 2, p) == UTIL_OK && p[0] == 3 && p[1] == 4, "next two: %d %d", p[0],
          p[1]);
    mpii_ctx_release(&s, mpii_ctx_of_pair(2));
    CHECK(mpii_ctx_pick(s.free, 1, p) == UTIL_OK && p[0] == 2, "released pair comes back");
    mpii_ctx_release(&s, 0);
    mpii_ctx_release(&s, 3); /* odd ctx of pair 1 */
    CHECK(mpii_ctx_pick(s.free, 1, p) == UTIL_OK && p[0] == 2, "predefined pairs never released");
    CHECK(mpii_ctx_take(&s, MPII_CTX_PAIRS) == UTIL_EINVAL && mpii_ctx_take(&s, -1) == UTIL_EINVAL,
          "out of range");
    for (int i = 2; i < MPII_CTX_PAIRS; i++)
        mpii_ctx_take(&s, i);
    CHECK(mpii_ctx_pick(s.free, 1, p) == UTIL_ENOENT, "exhausted");
    mpii_ctx_release(&s, mpii_ctx_of_pair(MPII_CTX_PAIRS - 1));
    CHECK(mpii_ctx_pick(s.free, 1, p) == UTIL_OK && p[0] == MPII_CTX_PAIRS - 1, "last pair");
    CHECK(mpii_ctx_pick(s.free, 2, p) == UTIL_ENOENT, "only one left");
}

/* AND of the bitmaps of the processes in set */
static void sim_and(unsigned set, unsigned *mask)
{
    memset(mask, 0xff, MPII_CTX_WORDS * sizeof(unsigned));
    for (int q = 0; q < NPROC; q++)
        if (set & (1u << q))
            for (int w = 0; w < MPII_CTX_WORDS; w++)
                mask[w] &= proc[q].free[w];
}

static int sim_new(unsigned members, int pair)
{
    for (int q = 0; q < NPROC; q++)
        if (members & (1u << q))
            CHECK(mpii_ctx_take(&proc[q], pair) == UTIL_OK, "process %d already holds pair %d", q,
                  pair);
    int k = 0;
    while (k < ncomms && comms[k].live)
        k++;
    if (k == ncomms)
        ncomms++;
    comms[k] = (struct sim_comm){1, mpii_ctx_of_pair(pair), members};
    return k;
}

static void sim_free(int k)
{
    for (int q = 0; q < NPROC; q++)
        if (comms[k].members & (1u << q))
            mpii_ctx_release(&proc[q], comms[k].ctx);
    comms[k].live = 0;
}

/* split of a random live parent into random colors, every color at once:
 * the agreement runs over the whole parent, members of each color take it */
static void sim_split(unsigned parent)
{
    unsigned mask[MPII_CTX_WORDS];
    int pair;
    sim_and(parent, mask);
    if (mpii_ctx_pick(mask, 1, &pair) != UTIL_OK)
        return;
    unsigned color[4] = {0, 0, 0, 0};
    for (int q = 0; q < NPROC; q++)
        if (parent & (1u << q))
            color[rand() % 4] |= 1u << q; /* color 3: MPI_UNDEFINED */
    for (int c = 0; c < 3; c++)
        if (color[c])
            sim_new(color[c], pair);
}

/* create_group in disjoint subsets of a parent, concurrently: each subset
 * agrees among its own members only */
static void sim_create_groups(unsigned parent)
{
    unsigned part[3] = {0, 0, 0};
    for (int q = 0; q < NPROC; q++)
        if (parent & (1u << q))
            part[rand() % 3] |= 1u << q;
    int pairs[3] = {-1, -1, -1};
    for (int c = 0; c < 3; c++) { /* all agreements first: they overlap in time */
        unsigned mask[MPII_CTX_WORDS];
        sim_and(part[c], mask);
        if (part[c] && mpii_ctx_pick(mask, 1, &pairs[c]) != UTIL_OK)
            pairs[c] = -1;
    }
    for (int c = 0; c < 3; c++)
        if (part[c] && pairs[c] >= 0)
            sim_new(part[c], pairs[c]);
}

/* an inter-communicator between two disjoint sets: each side ANDs, the
 * leaders AND the two results, two pairs (inter, local_comm) */
static void sim_inter(unsigned a, unsigned b)
{
    unsigned ma[MPII_CTX_WORDS], mb[MPII_CTX_WORDS];
    int pa[2], pb[2];
    sim_and(a, ma);
    sim_and(b, mb);
    for (int w = 0; w < MPII_CTX_WORDS; w++) {
        unsigned both = ma[w] & mb[w];
        ma[w] = mb[w] = both;
    }
    if (mpii_ctx_pick(ma, 2, pa) != UTIL_OK || mpii_ctx_pick(mb, 2, pb) != UTIL_OK)
        return;
    CHECK(pa[0] == pb[0] && pa[1] == pb[1], "leaders disagree");
    sim_new(a | b, pa[0]);
    sim_new(a, pa[1]);
    sim_new(b, pa[1]);
}

static void check_invariant(void)
{
    for (int i = 0; i < ncomms; i++)
        for (int j = i + 1; j < ncomms; j++)
            if (comms[i].live && comms[j].live && comms[i].ctx == comms[j].ctx)
                CHECK(!(comms[i].members & comms[j].members),
                      "communicators %d and %d share ctx %u and members %#x", i, j, comms[i].ctx,
                      comms[i].members & comms[j].members);
}

static unsigned random_set(void)
{
    unsigned s = 0;
    while (!s)
        s = (unsigned)rand() & ((1u << NPROC) - 1);
    return s;
}

static void test_simulation(void)
{
    srand(12345);
    for (int q = 0; q < NPROC; q++)
        mpii_ctx_space_init(&proc[q]);
    int made = 0;
    for (int step = 0; step < 4000 && !errors; step++) {
        int live = 0;
        for (int k = 0; k < ncomms; k++)
            live += comms[k].live;
        int op = rand() % 4;
        if (op == 0 || live > 300) {
            int k = rand() % (ncomms ? ncomms : 1);
            if (k < ncomms && comms[k].live)
                sim_free(k);
            continue;
        }
        unsigned s = random_set();
        if (op == 1)
            sim_split(s);
        else if (op == 2)
            sim_create_groups(s);
        else {
            unsigned a = s & 0x03f, b = s & 0xfc0;
            if (a && b)
                sim_inter(a, b);
        }
        made++;
        check_invariant();
    }
    CHECK(made > 500, "simulation made only %d constructions", made);
    for (int k = 0; k < ncomms; k++)
        if (comms[k].live)
            sim_free(k);
    mpii_ctx_space fresh;
    mpii_ctx_space_init(&fresh);
    for (int q = 0; q < NPROC; q++)
        CHECK(memcmp(proc[q].free, fresh.free, sizeof fresh.free) == 0,
              "process %d: pairs leaked after freeing everything", q);
}

/* ---- the agreement rule (mpii_ctxag_*) with agreements in flight together ----
 * Each simulated agreement runs over a set of processes; a round is over when
 * every participant has offered; then each decides on the AND. A process may
 * start an agreement only once others have completed (as a thread waiting
 * for another's communicator would), which is how a rule that lets an
 * agreement hold every pair while some participant is not in it yet
 * deadlocks (MPICH threads/comm/idup_deadlock). */
#define AG_MAX 8
typedef struct sim_ag {
    unsigned procs;                  /* participants */
    uint64_t key;
    unsigned after;                  /* agreements that must be done before ... */
    unsigned late;                   /* ... these participants start this one */
    int started[NPROC], done[NPROC];
    int round[NPROC];                /* the round a participant is in */
    int offered[NPROC];              /* it has offered in that round */
    int pair[NPROC];
    mpii_ctxag ag[NPROC];
    /* contributions by round parity: a participant is at most one round ahead */
    unsigned mine[2][NPROC][MPII_CTXAG_W];
} sim_ag;

static int sim_all_done(const sim_ag *a)
{
    for (int q = 0; q < NPROC; q++)
        if ((a->procs >> q & 1) && !a->done[q])
            return 0;
    return 1;
}

/* round r is over when every participant has offered in it (or beyond) */
static int sim_round_over(const sim_ag *a, int r)
{
    for (int p = 0; p < NPROC; p++)
        if ((a->procs >> p & 1) && !a->done[p] && (a->round[p] < r || (a->round[p] == r && !a->offered[p])))
            return 0;
    return 1;
}

/* run the agreements in random interleavings until all are done; 0 if stuck */
static int sim_agreements(sim_ag *ags, int n, unsigned seed)
{
    srand(seed);
    for (int q = 0; q < NPROC; q++)
        mpii_ctx_space_init(&proc[q]);
    for (int step = 0; step < 400000; step++) {
        int all = 1;
        for (int i = 0; i < n; i++)
            all &= sim_all_done(&ags[i]);
        if (all)
            return 1;
        sim_ag *a = &ags[rand() % n];
        int q = rand() % NPROC;
        if (!(a->procs >> q & 1) || a->done[q])
            continue;
        if (!a->started[q]) {
            int ready = 1;
            if (a->late >> q & 1)
                for (int i = 0; i < n; i++)
                    if ((a->after >> i & 1) && !ags[i].done[q])
                        ready = 0;
            if (!ready)
                continue;
            mpii_ctxag_begin(&proc[q], &a->ag[q], a->key);
            a->started[q] = 1;
        }
        int r = a->round[q];
        if (!a->offered[q]) {
            mpii_ctxag_offer(&proc[q], &a->ag[q], a->mine[r & 1][q]);
            a->offered[q] = 1;
            continue;
        }
        if (!sim_round_over(a, r))
            continue;
        unsigned and_[MPII_CTXAG_W];
        memset(and_, 0xff, sizeof and_);
        for (int p = 0; p < NPROC; p++)
            if (a->procs >> p & 1)
                for (int w = 0; w < MPII_CTXAG_W; w++)
                    and_[w] &= a->mine[r & 1][p][w];
        int pr;
        int rc = mpii_ctxag_decide(&proc[q], &a->ag[q], and_, 1, &pr);
        CHECK(rc != UTIL_ENOENT, "agreement exhausted the pairs");
        if (rc == UTIL_OK) {
            CHECK(mpii_ctx_take(&proc[q], pr) == UTIL_OK, "process %d: pair %d chosen twice", q, pr);
            a->pair[q] = pr;
            a->done[q] = 1;
        }
        a->round[q]++;
        a->offered[q] = 0;
    }
    return 0;
}

static void test_agreements(void)
{
    for (unsigned seed = 1; seed <= 200 && !errors; seed++) {
        /* MPICH idup_deadlock: four communicators over processes 0..3; on
         * processes 0 and 2 the agreements of keys 0 and 2 start only after
         * those of keys 1 and 3 are done */
        sim_ag ags[4];
        memset(ags, 0, sizeof ags);
        for (int i = 0; i < 4; i++) {
            ags[i].procs = 0xf;
            ags[i].key = (uint64_t)i;
            if (i % 2 == 0) {
                ags[i].after = 0xa;
                ags[i].late = 0x5;
            }
        }
        CHECK(sim_agreements(ags, 4, seed), "seed %u: agreements deadlocked", seed);
        for (int q = 0; q < 4; q++)
            for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < 4; j++)
                    CHECK(ags[i].pair[q] != ags[j].pair[q], "process %d: two pairs %d", q,
                          ags[i].pair[q]);
        for (int i = 0; i < 4; i++)
            for (int q = 1; q < 4; q++)
                CHECK(ags[i].pair[q] == ags[i].pair[0], "agreement %d: processes disagree", i);
        /* random overlapping sets with random keys, all at once */
        sim_ag r[AG_MAX];
        memset(r, 0, sizeof r);
        for (int i = 0; i < AG_MAX; i++) {
            r[i].procs = random_set();
            r[i].key = (uint64_t)rand() << 8 | (uint64_t)i;
        }
        CHECK(sim_agreements(r, AG_MAX, seed * 7919u), "seed %u: random agreements stuck", seed);
        for (int q = 0; q < NPROC; q++)
            for (int i = 0; i < AG_MAX; i++)
                for (int j = i + 1; j < AG_MAX; j++)
                    if ((r[i].procs & r[j].procs) >> q & 1)
                        CHECK(r[i].pair[q] != r[j].pair[q], "process %d: pair %d twice", q,
                              r[i].pair[q]);
    }
}

int main(void)
{
    test_basic();
    test_simulation();
    test_agreements();
    if (errors)
        fprintf(stderr, "test_ctx: %d failures\n", errors);
    else
        printf("test_ctx: ok\n");
    return errors ? 1 : 0;
}
