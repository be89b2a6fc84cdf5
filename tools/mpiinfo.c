/* mpiinfo: what this DCFA-MPI installation is and can do: version, fabrics,
 * every tunable with its current value and help, protocol sizes, and which
 * MPI functions are implemented. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "binding/api_table.h"
#include "core/core.h"
#include "fabric/fabric.h"
#include "util/util.h"
#include "mpi/osc/osc.h"

static void usage(void)
{
    printf("usage: mpiinfo [--all | --tunables | --functions [--missing]]\n"
           "  (no option)   version, fabrics, tunables and the count of implemented functions\n"
           "  --tunables    every DCFA_* environment variable with its value and meaning\n"
           "  --functions   every MPI function, marked implemented or missing\n"
           "  --missing     with --functions: only the missing ones\n");
}

static void show_tunables(void)
{
    util_tunables_load();
    printf("Tunables (environment variables; current value from this environment;\n"
           "[agree]: must be the same on every rank, checked at MPI_Init):\n");
    for (int i = 0; i < util_ntunables; i++) {
        char val[64];
        util_tunable_format(&util_tunables[i], val, sizeof val);
        printf("  %-24s = %-10s %s%s\n", util_tunables[i].name, val,
               util_tunables[i].flags & UTIL_TF_AGREE ? "[agree] " : "", util_tunables[i].help);
        if (util_tunables[i].choices)
            printf("  %-24s   %-10s (one of: %s)\n", "", "", util_tunables[i].choices);

    }
    /* what the tunables give once the core has shaped the ring (rounding, the eager limit) */
    char ring[512];
    core_ring_describe(ring, sizeof ring);
    printf("Memory per connected peer: %s\n", ring);
    core_copy_describe(ring, sizeof ring);
    printf("DCFA_CMA_MIN on this machine: %s\n", ring);
}

static void count_functions(int *impl, int *total)
{
    *impl = 0;
    *total = dcfa_api_count;
    for (int i = 0; i < dcfa_api_count; i++)
        *impl += dcfa_api_implemented(i);
}

static void show_functions(int only_missing)
{
    for (int i = 0; i < dcfa_api_count; i++) {
        int ok = dcfa_api_implemented(i);
        if (only_missing && ok)
            continue;
        printf("%-12s %s\n", ok ? "implemented" : "missing", dcfa_api_table[i].name);
    }
    int impl, total;
    count_functions(&impl, &total);
    printf("%d of %d MPI functions implemented, %d missing\n", impl, total, total - impl);
}

int main(int argc, char **argv)
{
    int functions = 0, missing = 0, tunables = 0, all = argc == 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--functions"))
            functions = 1;
        else if (!strcmp(argv[i], "--missing"))
            functions = missing = 1;
        else if (!strcmp(argv[i], "--tunables"))
            tunables = 1;
        else if (!strcmp(argv[i], "--all"))
            all = functions = 1;
        else {
            usage();
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (all) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(v, &len);
        printf("%s\n", v);
        printf("MPI standard: %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
        char fabs[512];
        util_tunables_load();
        fab_select_report(fabs, sizeof fabs);
        printf("Fabrics: %s\n", fabs);
        int impl, total;
        count_functions(&impl, &total);
        printf("MPI functions: %d of %d implemented (mpiinfo --functions lists them)\n", impl, total);
        util_tunables_load();
        printf("RMA passive-target progress: %s\n", osc_progress_claim());
        tunables = 1;
    }
    if (tunables)
        show_tunables();
    if (functions)
        show_functions(missing);
    return 0;
}
