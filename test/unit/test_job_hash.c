/* Unit test of fab_job_hash (src/fabric/fabric.h): the job ids one mpirun gives its
 * jobs ("j<pid>_<rand>" and its spawned jobs "..._1", "..._2", ...) must name distinct
 * processes. The FNV-1a fold used before mapped "..._44" and "..._46" of some mpiruns to
 * one value (two spawned processes shared a name: the MPICH suite's
 * threads/spawn/th_taskmanager died with "announced its ring ..., which is not there"). */
#include "fabric/fabric.h"

#include <stdio.h>
#include <stdlib.h>

#define JOBS  4096
#define BASES 64

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    static uint64_t h[JOBS + 1];
    int errors = 0;
    /* the mpiruns of this failure, and a spread of pids and random parts */
    const char *seen[] = {"j52af_5de5", "j5501_4d4b", "j6fd7_6cb5"};
    for (int b = 0; b < BASES; b++) {
        char base[32];
        if (b < 3)
            snprintf(base, sizeof base, "%s", seen[b]);
        else
            snprintf(base, sizeof base, "j%x_%04x", 1000 + b * 7919 % 60000, (b * 40503u) & 0xffff);
        char id[48];
        for (int n = 1; n <= JOBS; n++) {
            snprintf(id, sizeof id, "%s_%d", base, n);
            h[n - 1] = fab_job_hash(id);
            if (h[n - 1] >> 40) {
                fprintf(stderr, "%s: hash %llx has more than 40 bits\n", id,
                        (unsigned long long)h[n - 1]);
                errors++;
            }
        }
        h[JOBS] = fab_job_hash(base);
        qsort(h, JOBS + 1, sizeof h[0], cmp);
        for (int i = 1; i <= JOBS; i++)
            if (h[i] == h[i - 1]) {
                fprintf(stderr, "%s: two of its jobs hash to %llx\n", base,
                        (unsigned long long)h[i]);
                errors++;
            }
    }
    /* distinct by more than their low bits: consecutive ids differ in many bits */
    int low = 0;
    for (int n = 1; n < 256; n++) {
        char a[32], c[32];
        snprintf(a, sizeof a, "j52af_5de5_%d", n);
        snprintf(c, sizeof c, "j52af_5de5_%d", n + 1);
        uint64_t d = fab_job_hash(a) ^ fab_job_hash(c);
        if (__builtin_popcountll(d) < 8)
            low++;
    }
    if (low > 2) {
        fprintf(stderr, "%d of 255 consecutive job ids differ in fewer than 8 of 40 bits\n", low);
        errors++;
    }
    if (errors == 0)
        printf("job hash: %d x %d job ids distinct\n", BASES, JOBS + 1);
    return errors != 0;
}
