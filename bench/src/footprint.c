/* Memory footprint per rank.  Peak resident set (VmHWM), current resident
 * set (VmRSS) and proportional set size (Pss, shared pages divided among the
 * processes that map them) are read from /proc before MPI_Init, after it, and
 * after every rank has exchanged a small and a large message with every
 * other rank (so lazily made connections exist).  Reported in KiB: median,
 * minimum and maximum over ranks.  Options: --large BYTES (default 256K)
 *
 * --alltoall BYTES (the footprint curve): instead of the pairwise exchange,
 * one warm-up and --reps N (default 20) MPI_Alltoall of BYTES per pair on
 * MPI_COMM_WORLD, the last one checked; --max-ms T stops the repetitions
 * after T ms (never before one after the warm-up; "reps" says how many ran).
 * Phases pre, init, buf (after the send and receive buffers, 2 x ranks x
 * BYTES, are allocated and touched) and a2a (after the alltoalls and a
 * barrier); besides VmHWM, VmRSS and Pss, each phase has Shared_Clean +
 * Shared_Dirty ("shared", from smaps_rollup), the resident shared memory
 * (RssShmem, from status) and its proportional share (Pss_Shmem).  Then,
 * between two barriers while every rank is alive:
 *   - every rank lists the shared mappings of files it has (an 's' in the
 *     permissions of /proc/self/maps: POSIX shm in /dev/shm, System V
 *     segments, memfd, MAP_SHARED|MAP_ANONYMOUS, files elsewhere such as
 *     Open MPI's session directory in /tmp), and rank 0 adds up each distinct
 *     file (device, inode) once over the job: its size and its allocated
 *     bytes (st_blocks x 512), in total and per kind.  Files unlinked once
 *     mapped count too (their size comes from /proc/self/map_files);
 *   - rank 0 adds up the entries of /dev/shm (files, and files one directory
 *     down) - every job's, not only this one's, and not the unlinked ones -
 *     and reads statvfs("/dev/shm") (the unlinked ones too, but again every
 *     job's: the driver subtracts what it saw before the launch).
 * Device mappings (/dev/... other than /dev/shm and /dev/zero) are left out;
 * so are the launcher's own processes (mpirun, daemons). */
#include "bench_common.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

enum { FP_HWM, FP_RSS, FP_PSS, FP_SHARED, FP_SHMEM, FP_PSS_SHMEM, FP_N };
enum { FP_PHASES = 4 };
/* Kinds of shared mapping, as counted in the job's total. */
enum { SK_DEVSHM, SK_SYSV, SK_MEMFD, SK_ANON, SK_FILE, SK_N };
static const char *sk_names[SK_N] = {"devshm", "sysv", "memfd", "anon", "file"};
enum { FP_MAXMAPS = 512 };

typedef struct {
    unsigned long long dev, ino, size, alloc, kind;
} fp_map;

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
    long sc = fp_read_kib("/proc/self/smaps_rollup", "Shared_Clean");
    long sd = fp_read_kib("/proc/self/smaps_rollup", "Shared_Dirty");
    out[FP_SHARED] = sc < 0 || sd < 0 ? -1.0 : (double)(sc + sd);
    out[FP_SHMEM] = (double)fp_read_kib("/proc/self/status", "RssShmem");
    out[FP_PSS_SHMEM] = (double)fp_read_kib("/proc/self/smaps_rollup", "Pss_Shmem");
}

/* Prints one figure (field) of phase p over the ranks; `all` holds nphase
 * phases of FP_N figures per rank. */
static void fp_report(const char *phase, const double *all, int nranks, int nphase, int p,
                      int field)
{
    static const char *names[FP_N] = {"hwm", "rss", "pss", "shared", "shmem", "pss_shmem"};
    double *v = malloc((size_t)nranks * sizeof *v);
    for (int r = 0; r < nranks; r++)
        v[r] = all[(size_t)r * nphase * FP_N + (size_t)p * FP_N + field];
    bc_stats s = bc_stats_of(v, nranks);
    printf(",\"%s_%s_kib_med\":%.0f,\"%s_%s_kib_min\":%.0f,\"%s_%s_kib_max\":%.0f", phase,
           names[field], s.median, phase, names[field], s.min, phase, names[field], s.max);
    free(v);
}

static int fp_classic(int argc, char **argv)
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
            for (int f = FP_HWM; f <= FP_PSS; f++)
                fp_report(phases[p], all, nranks, 3, p, f);
        printf("}\n");
        fflush(stdout);
        free(all);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

/* The kind of a shared mapping from its path in /proc/self/maps, or -1 for
 * one that is not counted (a device). */
static int fp_kind(const char *path)
{
    if (strncmp(path, "/dev/shm/", 9) == 0)
        return SK_DEVSHM;
    if (strncmp(path, "/SYSV", 5) == 0)
        return SK_SYSV;
    if (strncmp(path, "/memfd:", 7) == 0)
        return SK_MEMFD;
    if (strncmp(path, "/dev/zero", 9) == 0 || path[0] == '\0')
        return SK_ANON;
    if (strncmp(path, "/dev/", 5) == 0 || path[0] == '[')
        return -1;
    return SK_FILE;
}

/* This process's shared mappings, one entry per distinct file; returns
 * their number, or -1 when there were more than `max`. */
static int fp_shared_maps(fp_map *out, int max)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int n = 0, over = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off, ino;
        unsigned maj, min;
        char perms[8];
        int used = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj, &min,
                   &ino, &used) < 7 ||
            perms[3] != 's')
            continue;
        char *path = line + used;
        path[strcspn(path, "\n")] = '\0';
        int kind = fp_kind(path);
        if (kind < 0)
            continue;
        unsigned long long dev = ((unsigned long long)maj << 32) | min;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = out[i].dev == dev && out[i].ino == ino;
        if (seen)
            continue;
        if (n == max) {
            over = 1;
            continue;
        }
        /* map_files names the mapped file even once it is unlinked (root,
         * or the process's own maps with CAP_CHECKPOINT_RESTORE) */
        char mf[128];
        struct stat st;
        snprintf(mf, sizeof mf, "/proc/self/map_files/%llx-%llx", lo, hi);
        fp_map m = {dev, ino, hi - lo, hi - lo, (unsigned long long)kind};
        if (stat(mf, &st) == 0) {
            m.size = (unsigned long long)st.st_size;
            m.alloc = (unsigned long long)st.st_blocks * 512ULL;
        }
        out[n++] = m;
    }
    fclose(f);
    return over ? -1 : n;
}

/* Bytes allocated (st_blocks x 512) and apparent size of the entries of dir,
 * descending `depth` more directories. */
static void fp_dir_usage(const char *dir, int depth, unsigned long long *alloc,
                         unsigned long long *size, long *files)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char p[4096];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0)
                fp_dir_usage(p, depth - 1, alloc, size, files);
            continue;
        }
        *alloc += (unsigned long long)st.st_blocks * 512ULL;
        *size += (unsigned long long)st.st_size;
        (*files)++;
    }
    closedir(d);
}

static int fp_cmp_map(const void *a, const void *b)
{
    const fp_map *x = a, *y = b;
    if (x->dev != y->dev)
        return (x->dev > y->dev) - (x->dev < y->dev);
    return (x->ino > y->ino) - (x->ino < y->ino);
}

static int fp_alltoall(int argc, char **argv, long bytes)
{
    int reps = (int)bc_arg_long(argc, argv, "--reps", 20);
    long max_ms = bc_arg_long(argc, argv, "--max-ms", 0);
    double mine[FP_PHASES * FP_N];
    fp_sample(mine);
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    fp_sample(mine + FP_N);
    if (bytes < 1 || bytes > INT_MAX / nranks)
        return bc_fail(rank, "footprint", "--alltoall BYTES out of range");
    size_t total = (size_t)nranks * (size_t)bytes;
    unsigned char *sbuf = bc_alloc(total), *rbuf = bc_alloc(total);
    for (int j = 0; j < nranks; j++)
        memset(sbuf + (size_t)j * bytes, (rank * 31 + j) & 0xff, (size_t)bytes);
    fp_sample(mine + 2 * FP_N);
    double *times = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *times);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    double t_begin = MPI_Wtime();
    int done = 0;
    while (done < reps) {
        /* past max_ms, stop after the first measured call (rank 0 decides) */
        int more = done < 1 || max_ms <= 0 || (MPI_Wtime() - t_begin) * 1e3 < (double)max_ms;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!more)
            break;
        memset(rbuf, 0, total);
        double t0 = MPI_Wtime();
        MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        times[done++] = MPI_Wtime() - t0;
    }
    int bad = 0;
    for (int i = 0; i < nranks && done > 0; i++) {
        unsigned char want = (unsigned char)((i * 31 + rank) & 0xff);
        const unsigned char *blk = rbuf + (size_t)i * bytes;
        bad |= blk[0] != want || blk[bytes - 1] != want || blk[bytes / 2] != want;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fp_sample(mine + 3 * FP_N);

    /* Shared memory, sampled with every rank alive, between two barriers. */
    fp_map *maps = calloc(FP_MAXMAPS, sizeof *maps);
    int nmaps = fp_shared_maps(maps, FP_MAXMAPS);
    unsigned long long dsh_alloc = 0, dsh_size = 0, vfs_used = 0;
    long dsh_files = 0;
    if (rank == 0) {
        struct statvfs vs;
        fp_dir_usage("/dev/shm", 1, &dsh_alloc, &dsh_size, &dsh_files);
        if (statvfs("/dev/shm", &vs) == 0)
            vfs_used = (unsigned long long)(vs.f_blocks - vs.f_bfree) * vs.f_frsize;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    double *all = rank == 0 ? malloc((size_t)nranks * FP_PHASES * FP_N * sizeof *all) : NULL;
    MPI_Gather(mine, FP_PHASES * FP_N, MPI_DOUBLE, all, FP_PHASES * FP_N, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    int *counts = rank == 0 ? malloc((size_t)nranks * sizeof *counts) : NULL;
    int *displs = rank == 0 ? malloc((size_t)nranks * sizeof *displs) : NULL;
    int mine_n = nmaps < 0 ? FP_MAXMAPS : nmaps, over = nmaps < 0, any_over = 0, any_bad = 0;
    MPI_Reduce(&over, &any_over, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    int words = mine_n * 5;
    MPI_Gather(&words, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    fp_map *jobmaps = NULL;
    long njob = 0;
    if (rank == 0) {
        for (int r = 0; r < nranks; r++) {
            displs[r] = (int)(njob * 5);
            njob += counts[r] / 5;
        }
        jobmaps = malloc((size_t)(njob > 0 ? njob : 1) * sizeof *jobmaps);
    }
    MPI_Gatherv(maps, words, MPI_UNSIGNED_LONG_LONG, jobmaps, counts, displs,
                MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        static const char *phases[FP_PHASES] = {"pre", "init", "buf", "a2a"};
        printf(
            "{\"bench\":\"footprint\",\"mode\":\"alltoall\",\"ranks\":%d,\"bytes\":%ld,\"reps\":%d,"
            "\"buf_kib\":%.0f",
            nranks, bytes, done, 2.0 * (double)total / 1024.0);
        if (done > 0) {
            bc_stats ts = bc_stats_of(times, done);
            printf(",\"a2a_ms_med\":%.4g,\"a2a_ms_max\":%.4g", ts.median * 1e3, ts.max * 1e3);
        }
        for (int p = 0; p < FP_PHASES; p++)
            for (int f = 0; f < FP_N; f++)
                fp_report(phases[p], all, nranks, FP_PHASES, p, f);
        /* the job's proportional memory: Pss summed over ranks */
        double pss_sum = 0;
        for (int r = 0; r < nranks; r++)
            pss_sum += all[(size_t)r * FP_PHASES * FP_N + 3 * FP_N + FP_PSS];
        printf(",\"a2a_pss_kib_sum\":%.0f", pss_sum);
        qsort(jobmaps, (size_t)njob, sizeof *jobmaps, fp_cmp_map);
        unsigned long long size[SK_N] = {0}, alloc[SK_N] = {0}, tsize = 0, talloc = 0;
        long files[SK_N] = {0}, tfiles = 0;
        for (long i = 0; i < njob; i++) {
            if (i > 0 && fp_cmp_map(&jobmaps[i], &jobmaps[i - 1]) == 0)
                continue;
            int k = (int)jobmaps[i].kind;
            size[k] += jobmaps[i].size;
            alloc[k] += jobmaps[i].alloc;
            files[k]++;
            tsize += jobmaps[i].size;
            talloc += jobmaps[i].alloc;
            tfiles++;
        }
        printf(",\"shm_map_bytes\":%llu,\"shm_map_alloc_bytes\":%llu,\"shm_map_files\":%ld", tsize,
               talloc, tfiles);
        for (int k = 0; k < SK_N; k++)
            if (files[k])
                printf(",\"shm_map_%s_bytes\":%llu,\"shm_map_%s_alloc_bytes\":%llu,\"shm_map_%s_"
                       "files\":%ld",
                       sk_names[k], size[k], sk_names[k], alloc[k], sk_names[k], files[k]);
        if (any_over)
            printf(",\"shm_map_truncated\":1");
        printf(",\"devshm_alloc_bytes\":%llu,\"devshm_size_bytes\":%llu,\"devshm_files\":%ld,"
               "\"devshm_statvfs_used_bytes\":%llu",
               dsh_alloc, dsh_size, dsh_files, vfs_used);
        if (any_bad)
            printf(",\"error\":\"MPI_Alltoall delivered wrong data\"");
        printf("}\n");
        fflush(stdout);
        free(all);
        free(counts);
        free(displs);
        free(jobmaps);
    }
    free(maps);
    free(times);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    long a2a = bc_arg_long(argc, argv, "--alltoall", 0);
    return a2a > 0 ? fp_alltoall(argc, argv, a2a) : fp_classic(argc, argv);
}
