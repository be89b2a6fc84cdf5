/* Helpers shared by the benchmark programs: argument parsing, statistics,
 * buffers and timing.  Plain MPI only, so every program builds with any
 * mpicc.  Every function is static inline: each program is one file. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BC_MAX_SIZES 64

/* Value of "--name V" on the command line, or dflt.  Sizes accept a K, M or
 * G suffix (binary). */
static inline long bc_parse_size(const char *s)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end && (*end == 'K' || *end == 'k'))
        v <<= 10;
    else if (end && (*end == 'M' || *end == 'm'))
        v <<= 20;
    else if (end && (*end == 'G' || *end == 'g'))
        v <<= 30;
    return v;
}

static inline const char *bc_arg_str(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return dflt;
}

/* "--name" given, with no value */
static inline int bc_arg_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

static inline long bc_arg_long(int argc, char **argv, const char *name, long dflt)
{
    const char *s = bc_arg_str(argc, argv, name, NULL);
    return s ? bc_parse_size(s) : dflt;
}

/* "--sizes a,b,c" if given, otherwise 0 (when with_zero) then powers of two
 * from lo to hi.  Returns the number of sizes. */
static inline int bc_sizes(int argc, char **argv, long *out, int with_zero, long lo, long hi)
{
    const char *list = bc_arg_str(argc, argv, "--sizes", NULL);
    int n = 0;
    if (list) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s", list);
        for (char *tok = strtok(tmp, ","); tok && n < BC_MAX_SIZES; tok = strtok(NULL, ","))
            out[n++] = bc_parse_size(tok);
        return n;
    }
    if (with_zero)
        out[n++] = 0;
    for (long s = lo; s <= hi && n < BC_MAX_SIZES; s *= 2)
        out[n++] = s;
    return n;
}

static inline long bc_max_of(const long *v, int n)
{
    long m = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

static inline long bc_clamp(long v, long lo, long hi)
{
    if (v < lo)
        return lo;
    if (v > hi)
        return hi;
    return v;
}

typedef struct {
    double median, q1, q3, min, max;
} bc_stats;

static inline int bc_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile by linear interpolation on a sorted array. */
static inline double bc_quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* Sorts v in place. */
static inline bc_stats bc_stats_of(double *v, int n)
{
    bc_stats s = {0, 0, 0, 0, 0};
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof *v, bc_cmp_double);
    s.median = bc_quantile(v, n, 0.5);
    s.q1 = bc_quantile(v, n, 0.25);
    s.q3 = bc_quantile(v, n, 0.75);
    s.min = v[0];
    s.max = v[n - 1];
    return s;
}

/* Prints "name_med":..,"name_q1":..,"name_q3":.. (no braces) scaled by k. */
static inline void bc_print_stats(const char *name, bc_stats s, double k)
{
    printf("\"%s_med\":%.6g,\"%s_q1\":%.6g,\"%s_q3\":%.6g", name, s.median * k, name, s.q1 * k,
           name, s.q3 * k);
}

/* Page-aligned buffer, filled so its pages are touched; aborts the job on failure. */
/* where bc_alloc takes buffers: the heap, or with "--alloc mpi" (bc_alloc_from)
 * MPI_Alloc_mem, page-aligned (mpi_minimum_memory_alignment); bc_free gives them back */
static int bc_alloc_mpi;
static inline void bc_alloc_from(int argc, char **argv)
{
    bc_alloc_mpi = strcmp(bc_arg_str(argc, argv, "--alloc", "heap"), "mpi") == 0;
}

static inline void *bc_alloc(size_t n)
{
    void *p = NULL;
    if (n == 0)
        n = 1;
    if (bc_alloc_mpi) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
        int rc = MPI_Alloc_mem((MPI_Aint)n, info, &p);
        MPI_Info_free(&info);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "bench: MPI_Alloc_mem of %zu bytes failed\n", n);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } else if (posix_memalign(&p, 4096, n) != 0) {
        fprintf(stderr, "bench: cannot allocate %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
        return NULL;
    }
    memset(p, 1, n);
    return p;
}

static inline void bc_free(void *p)
{
    if (bc_alloc_mpi)
        MPI_Free_mem(p);
    else
        free(p);
}

/* Seconds on a monotonic clock, usable before MPI_Init and after MPI_Finalize. */
static inline double bc_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether another measured repetition runs, as rank 0 decides (broadcast,
 * outside the timed region): until `reps` are done, but once `min_reps` are
 * done, stop when `max_s` seconds (0: no limit) have passed since `t_begin`.
 * This bounds a sweep on a loaded machine. */
static inline int bc_more(int done, int reps, double t_begin, double max_s)
{
    int more = done < reps && (done < 3 || max_s <= 0 || MPI_Wtime() - t_begin < max_s);
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return more;
}

/* Before its first measurement each program that measures a data path
 * busy-waits --settle-ms milliseconds (default 300; 0: not at all), every
 * rank, then meets the others at a barrier: every library is then measured
 * from a machine in the same state, whatever its MPI_Init did before. On
 * the 2-core VM of docs/bench.md ("Settling") two ranks started moments
 * ago copied at 0.6-0.8 of their later speed for their first 100-200 ms
 * (bi-bandwidth of 1 MiB from one buffer: 12-18 GB/s, then 25); a library
 * whose MPI_Init takes 260 ms of busy polling (Open MPI's) was measured
 * after that, one whose MPI_Init takes 2 ms within it. */
static inline void bc_settle(int argc, char **argv)
{
    double ms = (double)bc_arg_long(argc, argv, "--settle-ms", 300);
    double t0 = MPI_Wtime();
    while (ms > 0 && (MPI_Wtime() - t0) * 1e3 < ms)
        ;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 reports a fatal setup problem as a JSON line, then the job ends. */
static inline int bc_fail(int rank, const char *bench, const char *why)
{
    if (rank == 0) {
        printf("{\"bench\":\"%s\",\"error\":\"%s\"}\n", bench, why);
        fflush(stdout);
    }
    MPI_Finalize();
    return 1;
}

#endif
