/* SipHash-2-4 (util.h "names no one else can guess"): in a file of its own so that the
 * assist daemon (tools/mpirun) can use it too, for the MACs of its messages to other daemons. */
#include "util/util.h"

static inline uint64_t util_rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

/* one SipRound on the four state words */
static inline void util_sipround(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = util_rotl(v[1], 13) ^ v[0];
    v[0] = util_rotl(v[0], 32);
    v[2] += v[3];
    v[3] = util_rotl(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = util_rotl(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = util_rotl(v[1], 17) ^ v[2];
    v[2] = util_rotl(v[2], 32);
}

uint64_t util_siphash(const uint64_t key[2], const void *data, size_t len)
{
    const unsigned char *in = data;
    uint64_t v[4] = {key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
                     key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
    /* the message in little-endian 64-bit words; the last one carries the length in its
     * top byte */
    for (size_t off = 0;; off += 8) {
        uint64_t m = 0;
        size_t n = len - off < 8 ? len - off : 8;
        for (size_t i = 0; i < n; i++)
            m |= (uint64_t)in[off + i] << (8 * i);
        if (n < 8)
            m |= (uint64_t)(len & 0xff) << 56;
        v[3] ^= m;
        util_sipround(v);
        util_sipround(v);
        v[0] ^= m;
        if (n < 8)
            break;
    }
    v[2] ^= 0xff;
    for (int i = 0; i < 4; i++)
        util_sipround(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}
