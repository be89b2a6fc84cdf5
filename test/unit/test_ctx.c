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

static int errors;

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stderr, "line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);           \
            fputc('\n', stderr);                    \
            errors++;                               \
        }                                           \
    } while (0)

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

int main(void)
{
    test_basic();
    test_simulation();
    if (errors)
        fprintf(stderr, "test_ctx: %d failures\n", errors);
    else
        printf("test_ctx: ok\n");
    return errors ? 1 : 0;
}
