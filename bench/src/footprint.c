/* Memory footprint per rank.  Peak resident set (VmHWM), current resident
 * set (VmRSS) and proportional set size (Pss, shared pages divided among the
 * processes that map them) are read from /proc before MPI_Init, after it, and
 * after every rank has exchanged a small and a large message with every
 * other rank (so lazily made connections exist).  Reported in KiB: median,
 * minimum and maximum over ranks.  Options: --large BYTES (default 256K) */
#include "bench_common.h"

enum { FP_HWM, FP_RSS, FP_PSS, FP_N };

static long fp_read_kib(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long v = -1;
    size_t klen = strlen(key);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtol(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static void fp_sample(double *out)
{
    out[FP_HWM] = (double)fp_read_kib("/proc/self/status", "VmHWM");
    out[FP_RSS] = (double)fp_read_kib("/proc/self/status", "VmRSS");
    out[FP_PSS] = (double)fp_read_kib("/proc/self/smaps_rollup", "Pss");
}

static void fp_report(const char *phase, const double *all, int nranks, int field)
{
    double *v = malloc((size_t)nranks * sizeof *v);
    for (int r = 0; r < nranks; r++)
        v[r] = all[(size_t)r * 3 * FP_N + field];
    bc_stats s = bc_stats_of(v, nranks);
    static const char *names[FP_N] = {"hwm", "rss", "pss"};
    printf(",\"%s_%s_kib_med\":%.0f,\"%s_%s_kib_min\":%.0f,\"%s_%s_kib_max\":%.0f", phase,
           names[field % FP_N], s.median, phase, names[field % FP_N], s.min, phase,
           names[field % FP_N], s.max);
    free(v);
}

int main(int argc, char **argv)
{
    long large = bc_arg_long(argc, argv, "--large", 256L << 10);
    char *sbuf = bc_alloc((size_t)large), *rbuf = bc_alloc((size_t)large);
    double mine[3 * FP_N];
    fp_sample(mine);
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    fp_sample(mine + FP_N);
    for (int k = 1; k < nranks; k++) {
        int dst = (rank + k) % nranks, src = (rank - k + nranks) % nranks;
        MPI_Sendrecv(sbuf, 8, MPI_BYTE, dst, 1, rbuf, 8, MPI_BYTE, src, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(sbuf, (int)large, MPI_BYTE, dst, 2, rbuf, (int)large, MPI_BYTE, src, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fp_sample(mine + 2 * FP_N);
    double *all = rank == 0 ? malloc((size_t)nranks * 3 * FP_N * sizeof *all) : NULL;
    MPI_Gather(mine, 3 * FP_N, MPI_DOUBLE, all, 3 * FP_N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        static const char *phases[3] = {"pre", "init", "exch"};
        printf("{\"bench\":\"footprint\",\"ranks\":%d,\"large\":%ld", nranks, large);
        for (int p = 0; p < 3; p++)
            for (int f = 0; f < FP_N; f++)
                fp_report(phases[p], all, nranks, p * FP_N + f);
        printf("}\n");
        fflush(stdout);
        free(all);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
