/* Unit test of util_copy_nt (src/util/util.c), the sender's copy into its staging
 * pool: with non-temporal stores (DCFA_STAGE_NT) it copies a head up to the
 * destination's next cache line, a body of whole 128-byte steps streamed, and a tail.
 * Every destination alignment within a line, a few source alignments and lengths
 * around those steps must give exactly the source's bytes and leave the bytes on either
 * side untouched; below the threshold, or with it at 0, nothing is streamed.
 * The same for the small-message path's helpers (src/util/util.h): util_copy_small
 * (overlapping moves up to 16 bytes, memcpy above) and util_zero (16-byte stores and a
 * tail), at every length up to a few steps past their cases and every alignment. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 256
#define MAXLEN (70 * 1024)

static int errors;

static void one(unsigned char *dbuf, const unsigned char *sbuf, size_t doff, size_t soff, size_t n,
                size_t want_streamed_min)
{
    memset(dbuf, 0xA5, MAXLEN + 2 * GUARD + 64);
    unsigned char *d = dbuf + GUARD + doff;
    const unsigned char *s = sbuf + soff;
    size_t streamed = util_copy_nt(d, s, n, util_cfg.stage_nt);
    if (memcmp(d, s, n) != 0) {
        for (size_t i = 0; i < n; i++)
            if (d[i] != s[i]) {
                fprintf(stderr, "length %zu, destination +%zu, source +%zu: byte %zu is %#x, want %#x\n", n,
                        doff, soff, i, d[i], s[i]);
                break;
            }
        errors++;
        return;
    }
    for (size_t i = 0; i < GUARD + doff; i++)
        if (dbuf[i] != 0xA5) {
            fprintf(stderr, "length %zu, destination +%zu: wrote %zu bytes before it\n", n, doff, GUARD + doff - i);
            errors++;
            return;
        }
    for (size_t i = 0; i < GUARD; i++)
        if (d[n + i] != 0xA5) {
            fprintf(stderr, "length %zu, destination +%zu: wrote byte %zu after it\n", n, doff, i);
            errors++;
            return;
        }
    if (streamed != 0 && streamed != n) {
        fprintf(stderr, "length %zu: says %zu bytes streamed, neither 0 nor all\n", n, streamed);
        errors++;
    }
    if (streamed < want_streamed_min) {
        fprintf(stderr, "length %zu, threshold %zu: %zu bytes streamed, want at least %zu\n", n,
                util_cfg.stage_nt, streamed, want_streamed_min);
        errors++;
    }
}

/* the bytes of dbuf outside [at, at + n) still hold fill */
static int untouched(const unsigned char *dbuf, size_t size, size_t at, size_t n, unsigned char fill)
{
    for (size_t i = 0; i < size; i++)
        if ((i < at || i >= at + n) && dbuf[i] != fill)
            return 0;
    return 1;
}

/* util_copy_small and util_zero at lengths 0-80 and every alignment within 16 bytes */
static void small_helpers(const unsigned char *sbuf)
{
    enum { SIZE = 160 };
    unsigned char dbuf[SIZE];
    for (size_t n = 0; n <= 80; n++)
        for (size_t doff = 0; doff < 16; doff++)
            for (size_t soff = 0; soff < 16; soff += 5) {
                memset(dbuf, 0x5A, sizeof dbuf);
                util_copy_small(dbuf + 32 + doff, sbuf + soff, n);
                if (memcmp(dbuf + 32 + doff, sbuf + soff, n) != 0 ||
                    !untouched(dbuf, SIZE, 32 + doff, n, 0x5A)) {
                    fprintf(stderr, "util_copy_small: length %zu, destination +%zu, source +%zu wrong\n", n,
                            doff, soff);
                    errors++;
                    return;
                }
                if (soff)
                    continue;
                memset(dbuf, 0x5A, sizeof dbuf);
                util_zero(dbuf + 32 + doff, n);
                int zeroed = 1;
                for (size_t i = 0; i < n; i++)
                    zeroed &= dbuf[32 + doff + i] == 0;
                if (!zeroed || !untouched(dbuf, SIZE, 32 + doff, n, 0x5A)) {
                    fprintf(stderr, "util_zero: length %zu, destination +%zu wrong\n", n, doff);
                    errors++;
                    return;
                }
            }
}

int main(void)
{
    /* C11: the size a multiple of the alignment */
    size_t dsize = (MAXLEN + 2 * GUARD + 64 + 4095) & ~(size_t)4095, ssize = (MAXLEN + 4096 + 4095) & ~(size_t)4095;
    unsigned char *dbuf = aligned_alloc(4096, dsize);
    unsigned char *sbuf = aligned_alloc(4096, ssize);
    if (!dbuf || !sbuf)
        return 1;
    for (size_t i = 0; i < MAXLEN + 4096; i++)
        sbuf[i] = (unsigned char)(i * 131 + (i >> 8) * 7 + 1);

    const size_t lens[] = {0, 1, 63, 255, 256, 257, 300, 383, 384, 4095, 4096, 4097, 4096 + 127,
                           65536, 65536 + 13, MAXLEN - 64};
    const size_t soffs[] = {0, 1, 8, 33, 64};
    const size_t nlens = sizeof lens / sizeof *lens, nsoffs = sizeof soffs / sizeof *soffs;
#if defined(__x86_64__)
    const int streams = 1;
#else
    const int streams = 0;      /* memcpy everywhere else */
#endif
    /* streamed from 256 bytes (the least it streams) */
    util_cfg.stage_nt = 1;
    for (size_t l = 0; l < nlens; l++)
        for (size_t doff = 0; doff < 64; doff++)
            for (size_t k = 0; k < nsoffs; k++)
                one(dbuf, sbuf, doff, soffs[k], lens[l], streams && lens[l] >= 256 ? lens[l] : 0);
    /* the default threshold: below it plain memcpy, from it streamed */
    util_cfg.stage_nt = 4096;
    for (size_t l = 0; l < nlens; l++)
        for (size_t doff = 0; doff < 64; doff += 7)
            one(dbuf, sbuf, doff, 3, lens[l], streams && lens[l] >= 4096 ? lens[l] : 0);
    /* off */
    util_cfg.stage_nt = 0;
    for (size_t l = 0; l < nlens; l++) {
        one(dbuf, sbuf, 5, 0, lens[l], 0);
        if (util_copy_nt(dbuf, sbuf, lens[l], util_cfg.stage_nt) != 0) {
            fprintf(stderr, "DCFA_STAGE_NT=0: length %zu streamed\n", lens[l]);
            errors++;
        }
    }
    small_helpers(sbuf);
    free(dbuf);
    free(sbuf);
    if (errors)
        fprintf(stderr, "%d errors\n", errors);
    else
        printf("util_copy_nt: %zu lengths x 64 destination x %zu source alignments; util_copy_small, "
               "util_zero: lengths 0-80 x 16 alignments; no errors\n", nlens, nsoffs);
    return errors != 0;
}
