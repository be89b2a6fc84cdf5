/* mpiinfo: what this DCFA-MPI installation is and can do: version, fabrics,
 * every tunable with its current value and help, protocol sizes, and which
 * MPI functions are implemented. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding/api_table.h"
#include "core/core.h"
#include "fabric/fabric.h"
#include "util/util.h"
#include "mpi/osc/osc.h"

static void usage(void)
{
    printf("usage: mpiinfo [--all] [--tunables] [--functions [--missing]]\n"
           "  (no option)   version, fabrics, the count of implemented functions, and the\n"
           "                environment variables a user sets\n"
           "  --tunables    the DCFA_* environment variables a user sets, with value and meaning\n"
           "  --all         everything: every DCFA_* variable of every level (user, tuning,\n"
           "                developer, test, and those the launcher sets), every function\n"
           "  --functions   every MPI function, marked implemented or missing\n"
           "  --missing     with --functions: only the missing ones\n");
}

static void show_var(const util_tunable *t)
{
    char val[64] = "";
    if (t->ptr)
        util_tunable_format(t, val, sizeof val);
    else
        snprintf(val, sizeof val, "%s", getenv(t->name) ? getenv(t->name) : t->defval);
    printf("  %-24s = %-10s %s%s\n", t->name, val, t->flags & UTIL_TF_AGREE ? "[agree] " : "",
           t->help);
    if (t->choices)
        printf("  %-24s   %-10s (one of: %s)\n", "", "", t->choices);
}

/* the variables of the user level, or (all) of every level, a heading per level */
static void show_tunables(int all)
{
    util_tunables_load();
    printf("Environment variables (current value from this environment; [agree]: must be the\n"
           "same on every rank, checked at MPI_Init)%s:\n",
           all ? "" : ", those a user sets (mpiinfo --all: every level)");
    for (int lvl = 0; lvl < (all ? UTIL_NLVL : UTIL_LVL_USER + 1); lvl++) {
        if (all)
            printf(" %s level:\n", util_tunable_level_names[lvl]);
        for (int i = 0; i < util_nvars; i++)
            if (util_var(i)->level == lvl)
                show_var(util_var(i));
    }
    /* what the tunables give once the core has shaped the ring (rounding, the eager limit) */
    char ring[1024];
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
    int functions = 0, missing = 0, tunables = 0, all = 0, summary = argc == 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--functions"))
            functions = 1;
        else if (!strcmp(argv[i], "--missing"))
            functions = missing = 1;
        else if (!strcmp(argv[i], "--tunables"))
            tunables = 1;
        else if (!strcmp(argv[i], "--all"))
            all = summary = functions = 1;
        else {
            usage();
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (summary) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(v, &len);
        printf("%s\n", v);
        printf("MPI standard: %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
        printf("Bindings: C (mpi.h, mpicc, mpicxx); Fortran: %s\n", DCFA_FORTRAN_BINDINGS);
        char fabs[512];
        util_tunables_load();
        fab_select_report(fabs, sizeof fabs);
        printf("Fabrics: %s\n", fabs);
        int impl, total;
        count_functions(&impl, &total);
        printf("MPI functions: %d of %d implemented (mpiinfo --functions lists them)\n", impl,
               total);
        util_tunables_load();
        printf("RMA passive-target progress: %s\n", osc_progress_claim());
        tunables = 1;
    }
    if (tunables)
        show_tunables(all);
    if (functions)
        show_functions(missing);
    return 0;
}
