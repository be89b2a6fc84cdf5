/* Context-id bitmaps: which ctx pairs a process has free (see comm.h for
 * the agreement protocol built on them). */
#include "mpi/comm/comm.h"

#include <string.h>

mpii_ctx_space mpii_ctx_st;

void mpii_ctx_space_init(mpii_ctx_space *s)
{
    memset(s, 0, sizeof *s);
    memset(s->free, 0xff, sizeof s->free);
    s->free[0] &= ~3u; /* pair 0: MPI_COMM_WORLD, pair 1: MPI_COMM_SELF */
}

int mpii_ctx_pick(const unsigned *mask, int n, int *pairs)
{
    int k = 0;
    for (int w = 0; w < MPII_CTX_WORDS && k < n; w++) {
        unsigned bits = mask[w];
        while (bits && k < n) {
            int b = __builtin_ctz(bits);
            pairs[k++] = w * 32 + b;
            bits &= bits - 1;
        }
    }
    return k == n ? UTIL_OK : UTIL_ENOENT;
}

int mpii_ctx_take(mpii_ctx_space *s, int pair)
{
    if (pair < 0 || pair >= MPII_CTX_PAIRS)
        return UTIL_EINVAL;
    unsigned bit = 1u << (pair % 32);
    if (!(s->free[pair / 32] & bit))
        return UTIL_EINVAL;
    s->free[pair / 32] &= ~bit;
    return UTIL_OK;
}

void mpii_ctx_release(mpii_ctx_space *s, uint32_t ctx)
{
    int pair = (int)(ctx / 2);
    if (pair < 2 || pair >= MPII_CTX_PAIRS)
        return; /* the predefined pairs are never released */
    s->free[pair / 32] |= 1u << (pair % 32);
}

/* ---- the agreement ---------------------------------------------------------------------
 *
 * No pair chosen twice: a contribution offers only pairs free and not held,
 * and holds them until its round is decided; a pair is taken only by the
 * agreement whose round offered it (the AND is a subset of every offer). So
 * two agreements in flight in one process never both take a pair, whatever
 * their rounds' order.
 *
 * No waiting for ever: a round may wait a long time when a participant has
 * not entered the agreement yet (a thread of it waits for something else,
 * perhaps for another agreement of this process to finish: MPICH's
 * threads/comm/idup_deadlock). Such a first round offers and holds a window
 * of at most MPII_CTXAG_WINDOW pairs, so it takes only those from the
 * others. Once a round is decided every participant is inside the agreement
 * (joined), and every later round ends after finite progress. In those
 * rounds only the joined agreement of lowest key in the process offers
 * anything (everything free and not held); the others offer nothing and
 * try again. The agreement of lowest key joined anywhere is joined in all
 * its participants soon after and offered everything by all of them from
 * some round on (another agreement's hold lasts one finite round), so it
 * completes; then the next. A first round in which the windows of the
 * participants overlap (the usual case: one thread, similar bitmaps)
 * completes the agreement at once. */

static void ctxag_unlink(mpii_ctx_space *s, mpii_ctxag *a)
{
    for (mpii_ctxag **p = &s->running; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    a->next = NULL;
}

static void ctxag_unhold(mpii_ctx_space *s, mpii_ctxag *a)
{
    if (!a->offered)
        return;
    for (int w = 0; w < MPII_CTX_WORDS; w++)
        s->held[w] &= ~a->mine[w];
    memset(a->mine, 0, sizeof a->mine);
    a->offered = 0;
}

void mpii_ctxag_begin(mpii_ctx_space *s, mpii_ctxag *a, uint64_t key)
{
    memset(a, 0, sizeof *a);
    a->key = key;
    a->next = s->running;
    s->running = a;
}

static int ctxag_lowest(const mpii_ctx_space *s, const mpii_ctxag *a)
{
    for (const mpii_ctxag *o = s->running; o; o = o->next)
        if (o != a && o->joined && o->key < a->key)
            return 0;
    return 1;
}

void mpii_ctxag_offer(mpii_ctx_space *s, mpii_ctxag *a, unsigned out[MPII_CTXAG_W])
{
    ctxag_unhold(s, a);
    int withheld = 0, nfree = 0;
    for (int w = 0; w < MPII_CTX_WORDS; w++) {
        withheld |= (s->free[w] & s->held[w]) != 0;
        nfree += __builtin_popcount(s->free[w] & ~s->held[w]);
    }
    int full = 0;
    if (!a->joined) {
        int k = 0;
        for (int w = 0; w < MPII_CTX_WORDS && k < MPII_CTXAG_WINDOW; w++) {
            unsigned bits = s->free[w] & ~s->held[w];
            while (bits && k < MPII_CTXAG_WINDOW) {
                unsigned low = bits & -bits;
                a->mine[w] |= low;
                bits &= bits - 1;
                k++;
            }
        }
        full = !withheld && nfree <= MPII_CTXAG_WINDOW;
    } else if (ctxag_lowest(s, a)) {
        for (int w = 0; w < MPII_CTX_WORDS; w++)
            a->mine[w] = s->free[w] & ~s->held[w];
        full = !withheld;
    }
    for (int w = 0; w < MPII_CTX_WORDS; w++) {
        s->held[w] |= a->mine[w];
        out[w] = a->mine[w];
    }
    out[MPII_CTX_WORDS] = full ? MPII_CTXAG_FULL : 0;
    a->offered = 1;
}

int mpii_ctxag_decide(mpii_ctx_space *s, mpii_ctxag *a, const unsigned all[MPII_CTXAG_W], int n,
                      int *pairs)
{
    ctxag_unhold(s, a);
    a->joined = 1;
    if (mpii_ctx_pick(all, n, pairs) == UTIL_OK) {
        ctxag_unlink(s, a);
        return UTIL_OK;
    }
    if (all[MPII_CTX_WORDS] & MPII_CTXAG_FULL) {
        ctxag_unlink(s, a);
        return UTIL_ENOENT;
    }
    return UTIL_EAGAIN;
}

void mpii_ctxag_end(mpii_ctx_space *s, mpii_ctxag *a)
{
    ctxag_unhold(s, a);
    ctxag_unlink(s, a);
}

int mpii_ctxag_would_wait(const mpii_ctx_space *s, const mpii_ctxag *a)
{
    if (a->joined && !ctxag_lowest(s, a))
        return 1;
    int avail = 0, held = 0;
    for (int w = 0; w < MPII_CTX_WORDS; w++) {
        avail |= (s->free[w] & ~s->held[w]) != 0;
        held |= s->held[w] != 0;
    }
    return !avail && held;
}
