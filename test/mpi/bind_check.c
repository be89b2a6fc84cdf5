/*
 * bind_check MODE [INDEX]: each rank compares its CPU mask (sched_getaffinity)
 * with the mask mpirun's mapping and binding should have given it, worked
 * out here from /sys (not hwloc, which mpirun uses) and from BIND_ALLOWED,
 * the CPUs mpirun could use (its Cpus_allowed_list, e.g. "0-1"), passed with
 * -x by test/launcher/bind_test.sh.
 *
 *   MODE   none        every allowed CPU
 *          core        the i-th core (mod the cores): --map-by core --bind-to core
 *          hwthread    the i-th hardware thread: --map-by hwthread --bind-to hwthread
 *          socket      socket i mod the sockets: --map-by socket --bind-to socket
 *          ppr:N:core  core i/N: --map-by ppr:N:core --bind-to core
 *   INDEX  local       i = MPI_LOCALRANKID (default: one daemon)
 *          block:K     i = rank mod K (K ranks per host, in blocks)
 *          cyclic:H    i = rank / H (round robin over H hosts)
 *
 * Cores and sockets are ordered by their lowest allowed CPU, hardware
 * threads by core, then by number. Every rank prints "rank R cpus LIST".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include "mtest.h"

#include <errno.h>
#include <sched.h>

#define BC_MAX 1024

static int bc_parse_list(const char *s, unsigned char *set)
{
    memset(set, 0, BC_MAX);
    while (*s != '\0' && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0 || a >= BC_MAX)
            return -1;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (b < a || b >= BC_MAX)
            return -1;
        for (long c = a; c <= b; c++)
            set[c] = 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int bc_read_list(int cpu, const char *file, unsigned char *set)
{
    char path[128], buf[512];
    FILE *f;
    int rc = -1;

    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, file);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    if (fgets(buf, sizeof(buf), f) != NULL)
        rc = bc_parse_list(buf, set);
    fclose(f);
    return rc;
}

/* Groups the allowed CPUs by the sibling list file names: group_of[c] is
 * the group's lowest allowed CPU; the groups in order of it. */
static int bc_groups(const unsigned char *allowed, const char *file, int *first, int cap)
{
    static unsigned char sib[BC_MAX];
    int n = 0;

    for (int c = 0; c < BC_MAX; c++) {
        int low = c;
        if (!allowed[c])
            continue;
        if (bc_read_list(c, file, sib) == 0)
            for (int d = 0; d < BC_MAX; d++)
                if (sib[d] && allowed[d]) {
                    low = d;
                    break;
                }
        if (low == c && n < cap)
            first[n++] = c;
    }
    return n;
}

/* The allowed CPUs in the group of CPU first (by file) into set. */
static void bc_group_set(const unsigned char *allowed, const char *file, int first,
                         unsigned char *set)
{
    if (bc_read_list(first, file, set) != 0) {
        memset(set, 0, BC_MAX);
        set[first] = 1;
    }
    for (int c = 0; c < BC_MAX; c++)
        set[c] = set[c] && allowed[c];
}

static void bc_format(const unsigned char *set, char *out, size_t cap)
{
    size_t len = 0;

    out[0] = '\0';
    for (int c = 0; c < BC_MAX; c++) {
        int e = c;
        if (!set[c])
            continue;
        while (e + 1 < BC_MAX && set[e + 1])
            e++;
        len += (size_t)snprintf(out + len, cap - len, len > 0 ? ",%d" : "%d", c);
        if (e > c && len < cap)
            len += (size_t)snprintf(out + len, cap - len, "-%d", e);
        c = e;
        if (len >= cap)
            break;
    }
}

int main(int argc, char **argv)
{
    static unsigned char allowed[BC_MAX], want[BC_MAX], got[BC_MAX];
    static int cores[BC_MAX], socks[BC_MAX];
    const char *mode = argc > 1 ? argv[1] : "core", *idx = argc > 2 ? argv[2] : "local";
    const char *env = getenv("BIND_ALLOWED"), *lid = getenv("MPI_LOCALRANKID");
    char wtext[4 * BC_MAX], gtext[4 * BC_MAX];
    int rank, i = 0, ncores, nsocks, ppr = 0;
    cpu_set_t cs;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (env == NULL || bc_parse_list(env, allowed) != 0) {
        mtest_fail("BIND_ALLOWED not set or bad: '%s'", env != NULL ? env : "");
        return mtest_finalize();
    }
    if (strncmp(idx, "block:", 6) == 0)
        i = rank % atoi(idx + 6);
    else if (strncmp(idx, "cyclic:", 7) == 0)
        i = rank / atoi(idx + 7);
    else
        i = lid != NULL ? atoi(lid) : rank;
    ncores = bc_groups(allowed, "thread_siblings_list", cores, BC_MAX);
    nsocks = bc_groups(allowed, "package_cpus_list", socks, BC_MAX);
    if (nsocks == 0) /* older kernels: core_siblings_list is the package */
        nsocks = bc_groups(allowed, "core_siblings_list", socks, BC_MAX);
    if (strcmp(mode, "none") == 0) {
        memcpy(want, allowed, BC_MAX);
    } else if (strcmp(mode, "core") == 0 || sscanf(mode, "ppr:%d:core", &ppr) == 1) {
        int k = ppr > 0 ? i / ppr : i;
        bc_group_set(allowed, "thread_siblings_list", cores[k % ncores], want);
    } else if (strcmp(mode, "share") == 0) {
        /* the default with fewer ranks than cores: local rank i of n has
         * the cores [i * ncores / n, (i + 1) * ncores / n) */
        MPI_Comm node;
        int n = 1;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
        memset(want, 0, BC_MAX);
        for (int k = (int)((long)i * ncores / n); k < (int)((long)(i + 1) * ncores / n); k++) {
            unsigned char core[BC_MAX];
            bc_group_set(allowed, "thread_siblings_list", cores[k], core);
            for (int c = 0; c < BC_MAX; c++)
                want[c] |= core[c];
        }
    } else if (strcmp(mode, "hwthread") == 0) {
        static int pus[BC_MAX];
        int n = 0;
        for (int k = 0; k < ncores; k++) {
            unsigned char core[BC_MAX];
            bc_group_set(allowed, "thread_siblings_list", cores[k], core);
            for (int c = 0; c < BC_MAX; c++)
                if (core[c])
                    pus[n++] = c;
        }
        memset(want, 0, BC_MAX);
        if (n > 0)
            want[pus[i % n]] = 1;
    } else if (strcmp(mode, "socket") == 0) {
        if (nsocks > 0)
            bc_group_set(allowed, "package_cpus_list", socks[i % nsocks], want);
        else
            memcpy(want, allowed, BC_MAX);
    } else {
        mtest_fail("unknown mode '%s'", mode);
        return mtest_finalize();
    }
    CPU_ZERO(&cs);
    if (sched_getaffinity(0, sizeof(cs), &cs) != 0)
        mtest_fail("sched_getaffinity: %s", strerror(errno));
    for (int c = 0; c < BC_MAX; c++)
        got[c] = c < CPU_SETSIZE && CPU_ISSET(c, &cs);
    bc_format(want, wtext, sizeof(wtext));
    bc_format(got, gtext, sizeof(gtext));
    printf("rank %d cpus %s\n", rank, gtext);
    fflush(stdout);
    if (memcmp(want, got, BC_MAX) != 0)
        mtest_fail("mode %s, index %d (%s): bound to cpus %s, expected %s", mode, i, idx, gtext,
                   wtext);
    return mtest_finalize();
}
