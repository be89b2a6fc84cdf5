/* mpiinfo: what this DCFA-MPI installation is and can do: version, fabrics,
 * every tunable with its current value and help, protocol sizes, and which
 * MPI functions are implemented. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binding/api_table.h"
#include "core/core.h"
#include "fabric/fabric.h"
#include "fabric/gw/gw_route.h"
#include "util/util.h"
#include "mpi/osc/osc.h"

static void usage(void)
{
    printf("usage: mpiinfo [--all] [--tunables] [--functions [--missing]] [--routes]\n"
           "  (no option)   version, fabrics, the count of implemented functions, and the\n"
           "                environment variables a user sets\n"
           "  --tunables    the DCFA_* environment variables a user sets, with value and meaning\n"
           "  --all         everything: every DCFA_* variable of every level (user, tuning,\n"
           "                developer, test, and those the launcher sets), every function\n"
           "  --functions   every MPI function, marked implemented or missing\n"
           "  --missing     with --functions: only the missing ones\n"
           "  --routes      run as the ranks of a job (mpirun ... mpiinfo --routes): rank 0\n"
           "                prints how each pair of ranks talks: on one host, directly over a\n"
           "                common network, or through which gateway (docs/gateway.md)\n");
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

/* what the pair (a on host ha with networks na, b on hb with nb) goes through, by the rules
 * the library follows: shm on one host, a common network, else the gw fabric's choice */
static void route_of(const gw_known *gws, int ngw, const gw_rule *rules, int nrules, int a,
                     const char *ha, const util_net *na, int nna, int b, const char *hb,
                     const util_net *nb, int nnb, char *buf, size_t len)
{
    int rule;
    if (strcmp(ha, hb) == 0) {
        snprintf(buf, len, "one host (shm)");
        return;
    }
    if (util_net_common(na, nna, nb, nnb)) {
        snprintf(buf, len, "direct (a network in common)");
        return;
    }
    int g = gw_route_pick(gws, ngw, rules, nrules, a, ha, na, nna, b, hb, nb, nnb, &rule);
    if (g < 0)
        snprintf(buf, len, "none: no network in common and no gateway between them");
    else if (rule >= 0)
        snprintf(buf, len, "gateway %s (route file line %d)", gws[g].host, rules[rule].line);
    else
        snprintf(buf, len, "gateway %s", gws[g].host);
}

/* mpiinfo --routes under mpirun: every rank gives rank 0 its host and networks */
static int show_routes(int *argc, char ***argv)
{
    enum { ENTRY = 512 };
    int rank, size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char me[ENTRY] = "", host[GW_ROUTE_NAME_MAX] = "unknown";
    const util_net *all;
    util_net mine[UTIL_NET_MAX];
    int nall = util_net_list(&all), nmine = 0;
    for (int i = 0; i < nall; i++)
        if ((all[i].addr >> 24) != 127)
            mine[nmine++] = all[i];
    gethostname(host, sizeof host - 1);
    int off = snprintf(me, sizeof me, "%s=", host);
    util_net_format(mine, nmine, me + off, sizeof me - (size_t)off);
    char *every = rank == 0 ? malloc((size_t)size * ENTRY) : NULL;
    MPI_Gather(me, ENTRY, MPI_CHAR, every, ENTRY, MPI_CHAR, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        util_tunables_load();
        gw_known gws[16];
        gw_rule rules[GW_ROUTES_MAX];
        int ngw = 0, nrules = 0;
        char err[200];
        for (const char *s = util_cfg.gateways; s && *s && ngw < 16;) {
            size_t k = strcspn(s, ";");
            unsigned port;
            if (gw_known_parse(s, k, &gws[ngw], &port) == UTIL_OK)
                gws[ngw++].usable = 1;
            s += k + (s[k] == ';');
        }
        if (util_cfg.gateway_routes && *util_cfg.gateway_routes &&
            (nrules = gw_routes_parse(util_cfg.gateway_routes, ';', rules, GW_ROUTES_MAX, err,
                                      sizeof err)) < 0) {
            fprintf(stderr, "mpiinfo: DCFA_GATEWAY_ROUTES: %s\n", err);
            nrules = 0;
            rc = 1;
        }
        printf("Routes of this job: %d ranks, %d gateway%s", size, ngw, ngw == 1 ? "" : "s");
        for (int g = 0; g < ngw; g++)
            printf("%s%s", g ? ", " : " (", gws[g].host);
        printf("%s, %d route file rule%s\n", ngw ? ")" : "", nrules, nrules == 1 ? "" : "s");
        for (int a = 0; a < size; a++) {
            char *ea = every + (size_t)a * ENTRY, *qa = strchr(ea, '=');
            util_net na[UTIL_NET_MAX];
            *qa = 0;
            int nna = util_net_parse(qa + 1, strlen(qa + 1), na, UTIL_NET_MAX);
            for (int b = a + 1; b < size; b++) {
                char *eb = every + (size_t)b * ENTRY, *qb = strchr(eb, '=');
                util_net nb[UTIL_NET_MAX];
                int nnb =
                    util_net_parse(qb ? qb + 1 : "", qb ? strlen(qb + 1) : 0, nb, UTIL_NET_MAX);
                char hb[GW_ROUTE_NAME_MAX], r[160];
                snprintf(hb, sizeof hb, "%.*s", qb ? (int)(qb - eb) : 0, eb);
                route_of(gws, ngw, rules, nrules, a, ea, na, nna < 0 ? 0 : nna, b, hb, nb,
                         nnb < 0 ? 0 : nnb, r, sizeof r);
                printf("  rank %d (%s) - rank %d (%s): %s\n", a, ea, b, hb, r);
            }
        }
        free(every);
    }
    MPI_Finalize();
    return rc;
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
    if (argc == 2 && !strcmp(argv[1], "--routes"))
        return show_routes(&argc, &argv);
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
