/* Context-id bitmaps: which ctx pairs a process has free (see comm.h for
 * the agreement protocol built on them). */
#include "mpi/comm/comm.h"

#include <string.h>

mpii_ctx_space mpii_ctx_st;

void mpii_ctx_space_init(mpii_ctx_space *s)
{
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
