/* mpirun: mapping job 0's ranks of this host onto its cores and binding
 * them (hwloc for the topology, sched_setaffinity in the child). One plan
 * per daemon process: the ranks of job 0 on this host, in order. */
#include "bind.h"

#include <errno.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const bind_names[] = {"none", "hwthread", "core", "numa", "socket", "node"};

static hwloc_topology_t bind_topo; /* loaded by the first plan that needs it */
static int bind_n;                 /* ranks planned */
static hwloc_obj_t *bind_target;   /* [bind_n]: what each is bound to, NULL = not bound */
static int *bind_width;            /* [bind_n]: > 1: bound to this many cores from bind_target */
static cpu_set_t *bind_masks;      /* [bind_n]: the same as a mask */
static char bind_host[256];

static int bind_res_of(const char *s, int allow_none, int allow_node)
{
    if (strcmp(s, "package") == 0 || strcmp(s, "sockets") == 0)
        s = "socket";
    else if (strcmp(s, "cores") == 0)
        s = "core";
    else if (strcmp(s, "hwthreads") == 0)
        s = "hwthread";
    for (int r = 0; r < (int)(sizeof(bind_names) / sizeof(bind_names[0])); r++)
        if (strcmp(s, bind_names[r]) == 0) {
            if ((r == MPIRUN_RES_NONE && !allow_none) || (r == MPIRUN_RES_NODE && !allow_node))
                return -1;
            return r;
        }
    return -1;
}

int mpirun_bind_parse_bind(struct mpirun_bind *b, const char *opt, const char *value)
{
    int r = value != NULL ? bind_res_of(value, 1, 0) : -1;

    if (value == NULL) {
        fprintf(stderr, "mpirun: %s needs core, hwthread, socket, numa or none\n", opt);
        return -EINVAL;
    }
    if (r < 0) {
        fprintf(stderr,
                "mpirun: %s %s: not a level to bind to (core, hwthread, socket, numa or none)\n",
                opt, value);
        return -EINVAL;
    }
    b->bind = r;
    b->bind_given = 1;
    return 0;
}

int mpirun_bind_parse_map(struct mpirun_bind *b, const char *opt, const char *value)
{
    char res[32];
    int r, n = 0, used = 0;

    if (value == NULL) {
        fprintf(stderr, "mpirun: %s needs core, hwthread, socket, numa, node or ppr:N:resource\n",
                opt);
        return -EINVAL;
    }
    if (strncmp(value, "ppr:", 4) == 0) {
        /* ppr:N:resource, N in 1..4096 */
        if (sscanf(value, "ppr:%d:%31[a-z]%n", &n, res, &used) != 2 || value[used] != '\0' ||
            strchr(value + 4, ':') == NULL || value[4] < '0' || value[4] > '9') {
            fprintf(stderr, "mpirun: %s %s: expected ppr:N:resource, e.g. ppr:2:socket\n", opt,
                    value);
            return -EINVAL;
        }
        if (n < 1 || n > 4096) {
            fprintf(stderr, "mpirun: %s %s: N ranks per resource must be 1 to 4096\n", opt, value);
            return -EINVAL;
        }
        if ((r = bind_res_of(res, 0, 1)) < 0) {
            fprintf(stderr,
                    "mpirun: %s %s: unknown resource '%s' (core, hwthread, socket, numa or "
                    "node)\n",
                    opt, value, res);
            return -EINVAL;
        }
        b->map = r;
        b->ppr = n;
        return 0;
    }
    if (strcmp(value, "slot") == 0)
        value = "core";
    if ((r = bind_res_of(value, 0, 1)) < 0) {
        fprintf(stderr,
                "mpirun: %s %s: not a way to map (core, hwthread, socket, numa, node or "
                "ppr:N:resource)\n",
                opt, value);
        return -EINVAL;
    }
    b->map = r;
    b->ppr = 0;
    return 0;
}

/* ---- the topology ---------------------------------------------------------- */

/* hwloc dlopens every plugin it finds at its first hwloc_topology_init: PCI,
 * OpenCL, GL (with X11) and libxml2, a dozen libraries and about 3 ms on this
 * machine, more than the rest of a one-rank launch. Binding asks for cores,
 * caches and NUMA nodes only, so unless the user chose hwloc's plugins or
 * components, mpirun loads none (and gives the ranks the environment back). */
#define BIND_NO_PLUGINS                                                                  \
    "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml,hwloc_cuda,hwloc_nvml,hwloc_rsmi," \
    "hwloc_levelzero"

static int bind_topo_init(void)
{
    int ours = getenv("HWLOC_PLUGINS_BLACKLIST") == NULL && getenv("HWLOC_COMPONENTS") == NULL;
    int rc;

    if (ours)
        setenv("HWLOC_PLUGINS_BLACKLIST", BIND_NO_PLUGINS, 1);
    rc = hwloc_topology_init(&bind_topo);
    if (ours)
        unsetenv("HWLOC_PLUGINS_BLACKLIST");
    if (rc != 0)
        return -1;
    /* no I/O objects and no instruction caches; the linux component knows the
     * rest without the x86 one's CPUID walk */
    hwloc_topology_set_io_types_filter(bind_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(bind_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (ours)
        hwloc_topology_set_components(bind_topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
    return 0;
}

static int bind_topo_load(void)
{
    hwloc_bitmap_t own;

    if (bind_topo != NULL)
        return 0;
    if (bind_topo_init() != 0) {
        bind_topo = NULL;
        return -1;
    }
    if (hwloc_topology_load(bind_topo) != 0) {
        hwloc_topology_destroy(bind_topo);
        bind_topo = NULL;
        return -1;
    }
    /* only the CPUs mpirun may use (taskset, a cgroup, a batch system) */
    own = hwloc_bitmap_alloc();
    if (own != NULL && hwloc_get_cpubind(bind_topo, own, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_iszero(own))
        hwloc_topology_restrict(bind_topo, own, HWLOC_RESTRICT_FLAG_REMOVE_CPULESS);
    hwloc_bitmap_free(own);
    return 0;
}

static hwloc_obj_type_t bind_type(int res)
{
    switch (res) {
    case MPIRUN_RES_HWTHREAD:
        return HWLOC_OBJ_PU;
    case MPIRUN_RES_CORE:
        return HWLOC_OBJ_CORE;
    case MPIRUN_RES_NUMA:
        return HWLOC_OBJ_NUMANODE;
    case MPIRUN_RES_SOCKET:
        return HWLOC_OBJ_PACKAGE;
    default:
        return HWLOC_OBJ_MACHINE;
    }
}

/* Objects of a level on this host: cores fall back to hardware threads,
 * sockets and NUMA nodes to the whole machine when the topology has none. */
static int bind_count(int res)
{
    int n = hwloc_get_nbobjs_by_type(bind_topo, bind_type(res));

    if (n <= 0 && res == MPIRUN_RES_CORE)
        n = hwloc_get_nbobjs_by_type(bind_topo, HWLOC_OBJ_PU);
    return n > 0 ? n : 1;
}

static hwloc_obj_t bind_obj(int res, int i)
{
    hwloc_obj_type_t t = bind_type(res);

    if (hwloc_get_nbobjs_by_type(bind_topo, t) <= 0)
        t = res == MPIRUN_RES_CORE ? HWLOC_OBJ_PU : HWLOC_OBJ_MACHINE;
    if (t == HWLOC_OBJ_MACHINE)
        return hwloc_get_root_obj(bind_topo);
    return hwloc_get_obj_by_type(bind_topo, t, (unsigned)(i % bind_count(res)));
}

/* The k-th core (or hardware thread) inside obj, wrapping around. */
static hwloc_obj_t bind_inside(hwloc_obj_t obj, int leaf, int k)
{
    hwloc_obj_type_t t = bind_type(leaf);
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(bind_topo, obj->cpuset, t);

    if (n <= 0 && t == HWLOC_OBJ_CORE) {
        t = HWLOC_OBJ_PU;
        n = hwloc_get_nbobjs_inside_cpuset_by_type(bind_topo, obj->cpuset, t);
    }
    if (n <= 0)
        return obj;
    return hwloc_get_obj_inside_cpuset_by_type(bind_topo, obj->cpuset, t, (unsigned)(k % n));
}

/* Where --map-by puts local rank i: a core, or a hardware thread when
 * mapping by them. */
static hwloc_obj_t bind_place(const struct mpirun_bind *b, int i)
{
    int leaf = b->map == MPIRUN_RES_HWTHREAD ? MPIRUN_RES_HWTHREAD : MPIRUN_RES_CORE;

    switch (b->map) {
    case MPIRUN_RES_NUMA:
    case MPIRUN_RES_SOCKET: {
        int n = bind_count(b->map);
        if (b->ppr > 0) { /* fill each with ppr ranks, then the next */
            int cap = b->ppr * n;
            return bind_inside(bind_obj(b->map, (i / b->ppr) % n), leaf,
                               i % b->ppr + b->ppr * (i / cap));
        }
        return bind_inside(bind_obj(b->map, i % n), leaf, i / n); /* round robin */
    }
    case MPIRUN_RES_HWTHREAD:
    case MPIRUN_RES_CORE:
        return bind_obj(leaf, b->ppr > 0 ? i / b->ppr : i);
    default: /* node: one after the other */
        return bind_obj(leaf, i);
    }
}

/* What a rank placed on leaf is bound to at level res. */
static hwloc_obj_t bind_widen(int res, hwloc_obj_t leaf)
{
    hwloc_obj_t o;

    switch (res) {
    case MPIRUN_RES_HWTHREAD:
        if (leaf->type == HWLOC_OBJ_PU)
            return leaf;
        o = hwloc_get_obj_inside_cpuset_by_type(bind_topo, leaf->cpuset, HWLOC_OBJ_PU, 0);
        return o != NULL ? o : leaf;
    case MPIRUN_RES_CORE:
        o = leaf->type == HWLOC_OBJ_CORE
                ? leaf
                : hwloc_get_ancestor_obj_by_type(bind_topo, HWLOC_OBJ_CORE, leaf);
        return o != NULL ? o : leaf;
    case MPIRUN_RES_SOCKET:
        o = hwloc_get_ancestor_obj_by_type(bind_topo, HWLOC_OBJ_PACKAGE, leaf);
        return o != NULL ? o : hwloc_get_root_obj(bind_topo);
    case MPIRUN_RES_NUMA:
        for (int k = 0; k < hwloc_get_nbobjs_by_type(bind_topo, HWLOC_OBJ_NUMANODE); k++) {
            o = hwloc_get_obj_by_type(bind_topo, HWLOC_OBJ_NUMANODE, (unsigned)k);
            if (o != NULL && hwloc_bitmap_isincluded(leaf->cpuset, o->cpuset))
                return o;
        }
        return hwloc_get_root_obj(bind_topo);
    default:
        return NULL;
    }
}

/* How many ranks may be bound to obj: one per hardware thread when binding
 * to them, else one per core inside. */
static int bind_room(int res, hwloc_obj_t obj)
{
    int n;

    if (res == MPIRUN_RES_HWTHREAD || res == MPIRUN_RES_CORE)
        return 1;
    n = hwloc_get_nbobjs_inside_cpuset_by_type(bind_topo, obj->cpuset, HWLOC_OBJ_CORE);
    if (n <= 0)
        n = hwloc_get_nbobjs_inside_cpuset_by_type(bind_topo, obj->cpuset, HWLOC_OBJ_PU);
    return n > 0 ? n : 1;
}

/* "core 3", "socket 0", "machine" */
static void bind_obj_name(hwloc_obj_t o, char *out, size_t cap)
{
    const char *name = "machine";

    switch (o->type) {
    case HWLOC_OBJ_PU:
        name = "hwthread";
        break;
    case HWLOC_OBJ_CORE:
        name = "core";
        break;
    case HWLOC_OBJ_NUMANODE:
        name = "numa";
        break;
    case HWLOC_OBJ_PACKAGE:
        name = "socket";
        break;
    default:
        snprintf(out, cap, "%s", name);
        return;
    }
    snprintf(out, cap, "%s %u", name, o->logical_index);
}

void mpirun_bind_plan_free(void)
{
    free(bind_target);
    free(bind_width);
    free(bind_masks);
    bind_target = NULL;
    bind_width = NULL;
    bind_masks = NULL;
    bind_n = 0;
    if (bind_topo != NULL)
        hwloc_topology_destroy(bind_topo);
    bind_topo = NULL;
}

int mpirun_bind_ppr_size(const struct mpirun_bind *b)
{
    if (b->ppr <= 0 || bind_topo_load() != 0)
        return 1;
    return b->ppr * (b->map == MPIRUN_RES_NODE ? 1 : bind_count(b->map));
}

/* The first rank that would share its object beyond its room: -1 if none. */
static int bind_overload(int n, int res, int *count)
{
    for (int i = 0; i < n; i++) {
        int c = 1;
        for (int j = 0; j < i; j++)
            c += bind_target[j] == bind_target[i];
        if (c > bind_room(res, bind_target[i])) {
            *count = 0;
            for (int j = 0; j < n; j++)
                *count += bind_target[j] == bind_target[i];
            return i;
        }
    }
    return -1;
}

/* The CPUs of local rank i's plan into set (bind_target[i] not NULL). */
static void bind_set_of(int i, hwloc_bitmap_t set)
{
    hwloc_bitmap_copy(set, bind_target[i]->cpuset);
    for (int k = 1; k < bind_width[i]; k++) {
        hwloc_obj_t o = bind_obj(MPIRUN_RES_CORE, (int)bind_target[i]->logical_index + k);
        hwloc_bitmap_or(set, set, o->cpuset);
    }
}

/* Each planned rank's CPUs as the mask mpirun_bind_apply sets; none bound
 * when the set cannot be allocated. */
static int bind_fill_masks(int n)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();

    if (set == NULL) {
        memset(bind_target, 0, (size_t)n * sizeof(*bind_target));
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (bind_target[i] != NULL) {
            bind_set_of(i, set);
            hwloc_cpuset_to_glibc_sched_affinity(bind_topo, set, &bind_masks[i],
                                                 sizeof(bind_masks[i]));
        }
    hwloc_bitmap_free(set);
    return 0;
}

/* The default when n ranks fit on this host's ncores cores: the cores are
 * shared out, each rank bound to a block of adjacent ones (ncores / n, the
 * first ncores % n ranks one more), so the threads of a hybrid job (OpenMP,
 * a progress thread) have cores of their own; as many ranks as cores is a
 * core each. */
static int bind_share(int n, int ncores)
{
    for (int i = 0; i < n; i++) {
        int first = (int)((long)i * ncores / n), end = (int)((long)(i + 1) * ncores / n);
        bind_target[i] = bind_obj(MPIRUN_RES_CORE, first);
        bind_width[i] = end - first;
    }
    return bind_fill_masks(n);
}

int mpirun_bind_plan(const struct mpirun_bind *b, int n, const char *host, char *msg, size_t cap)
{
    int res = b->bind, ncores, over, count;
    char what[64];

    mpirun_bind_plan_free();
    if (host != NULL)
        snprintf(bind_host, sizeof(bind_host), "%s", host);
    else if (gethostname(bind_host, sizeof(bind_host) - 1) != 0)
        snprintf(bind_host, sizeof(bind_host), "localhost");
    if (n <= 0 || (b->bind_given && res == MPIRUN_RES_NONE && !b->report))
        return 0;
    if (bind_topo_load() != 0) {
        if (!b->bind_given || res == MPIRUN_RES_NONE)
            return 0; /* the default: no binding without a topology */
        snprintf(msg, cap, "mpirun: cannot read the topology of host '%s' to bind ranks",
                 bind_host);
        return -1;
    }
    bind_target = calloc((size_t)n, sizeof(*bind_target));
    bind_width = calloc((size_t)n, sizeof(*bind_width));
    bind_masks = calloc((size_t)n, sizeof(*bind_masks));
    if (bind_target == NULL || bind_width == NULL || bind_masks == NULL) {
        snprintf(msg, cap, "mpirun: out of memory");
        return -1;
    }
    bind_n = n;
    ncores = bind_count(MPIRUN_RES_CORE);
    if (b->ppr > 0 && !b->oversubscribe) {
        int room = mpirun_bind_ppr_size(b);
        if (n > room) {
            snprintf(msg, cap,
                     "mpirun: --map-by ppr:%d:%s on host '%s': %d ranks but room for %d (%d per "
                     "%s, %d %s%s); add --oversubscribe to place more",
                     b->ppr, bind_names[b->map], bind_host, n, room, b->ppr, bind_names[b->map],
                     room / b->ppr, bind_names[b->map], room / b->ppr > 1 ? "s" : "");
            return -1;
        }
    }
    if (!b->bind_given) {
        /* the default: bind to what the ranks are mapped by (a core when by
         * node) as long as they fit on this host's cores, else not at all */
        res = b->map == MPIRUN_RES_NODE || b->map == MPIRUN_RES_NONE ? MPIRUN_RES_CORE : b->map;
        if (n > ncores)
            res = MPIRUN_RES_NONE;
        else if (res == MPIRUN_RES_CORE && b->ppr == 0)
            return bind_share(n, ncores);
    }
    for (int i = 0; i < n && res != MPIRUN_RES_NONE; i++)
        bind_target[i] = bind_widen(res, bind_place(b, i));
    if (res != MPIRUN_RES_NONE && (over = bind_overload(n, res, &count)) >= 0) {
        if (!b->bind_given) {
            memset(bind_target, 0, (size_t)n * sizeof(*bind_target)); /* default: none */
        } else if (!b->oversubscribe) {
            bind_obj_name(bind_target[over], what, sizeof(what));
            if (res == MPIRUN_RES_CORE || res == MPIRUN_RES_HWTHREAD)
                snprintf(msg, cap,
                         "mpirun: --bind-to %s on host '%s': %d ranks but %d %s%s, so %d would "
                         "share %s; add --oversubscribe to allow it, or --bind-to none",
                         bind_names[res], bind_host, n, bind_count(res), bind_names[res],
                         bind_count(res) > 1 ? "s" : "", count, what);
            else
                snprintf(msg, cap,
                         "mpirun: --bind-to %s on host '%s': %d ranks on %s, which has %d "
                         "core%s; add --oversubscribe to allow it, or --bind-to none",
                         bind_names[res], bind_host, count, what, bind_room(res, bind_target[over]),
                         bind_room(res, bind_target[over]) > 1 ? "s" : "");
            return -1;
        }
    }
    return bind_fill_masks(n);
}

void mpirun_bind_apply(int i)
{
    if (i >= 0 && i < bind_n && bind_target != NULL && bind_target[i] != NULL)
        sched_setaffinity(0, sizeof(bind_masks[i]), &bind_masks[i]);
}

/* "[B./../..][../..]": per socket, per core, one character per hardware
 * thread, B when set is in it. */
static void bind_diagram(hwloc_const_bitmap_t set, char *out, size_t cap)
{
    int nsock = hwloc_get_nbobjs_by_type(bind_topo, HWLOC_OBJ_PACKAGE);
    size_t len = 0;

    out[0] = '\0';
    for (int s = 0; s < (nsock > 0 ? nsock : 1) && len + 8 < cap; s++) {
        hwloc_obj_t sock = nsock > 0
                               ? hwloc_get_obj_by_type(bind_topo, HWLOC_OBJ_PACKAGE, (unsigned)s)
                               : hwloc_get_root_obj(bind_topo);
        int nc = hwloc_get_nbobjs_inside_cpuset_by_type(bind_topo, sock->cpuset, HWLOC_OBJ_CORE);
        out[len++] = '[';
        for (int c = 0; c < (nc > 0 ? nc : 1) && len + 8 < cap; c++) {
            hwloc_obj_t core = nc > 0 ? hwloc_get_obj_inside_cpuset_by_type(
                                            bind_topo, sock->cpuset, HWLOC_OBJ_CORE, (unsigned)c)
                                      : sock;
            int np = hwloc_get_nbobjs_inside_cpuset_by_type(bind_topo, core->cpuset, HWLOC_OBJ_PU);
            if (c > 0)
                out[len++] = '/';
            for (int p = 0; p < np && len + 8 < cap; p++) {
                hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(bind_topo, core->cpuset,
                                                                     HWLOC_OBJ_PU, (unsigned)p);
                out[len++] = hwloc_bitmap_isset(set, pu->os_index) ? 'B' : '.';
            }
        }
        out[len++] = ']';
        out[len] = '\0';
    }
}

void mpirun_bind_report(int i, int rank, pid_t pid, char *out, size_t cap)
{
    char *cpus = NULL, what[64], diagram[512];
    hwloc_obj_t o = i >= 0 && i < bind_n && bind_target != NULL ? bind_target[i] : NULL;
    hwloc_bitmap_t set;

    if (bind_topo == NULL) {
        snprintf(out, cap, "[%s:%ld] rank %d not bound\n", bind_host, (long)pid, rank);
        return;
    }
    if (o == NULL) {
        hwloc_const_bitmap_t all = hwloc_topology_get_allowed_cpuset(bind_topo);
        if (hwloc_bitmap_list_asprintf(&cpus, all) < 0)
            cpus = NULL;
        snprintf(out, cap, "[%s:%ld] rank %d not bound: cpus %s\n", bind_host, (long)pid, rank,
                 cpus != NULL ? cpus : "?");
        free(cpus);
        return;
    }
    if ((set = hwloc_bitmap_alloc()) == NULL) {
        snprintf(out, cap, "[%s:%ld] rank %d bound\n", bind_host, (long)pid, rank);
        return;
    }
    bind_set_of(i, set);
    if (bind_width[i] > 1)
        snprintf(what, sizeof(what), "cores %u-%u", o->logical_index,
                 o->logical_index + (unsigned)bind_width[i] - 1);
    else
        bind_obj_name(o, what, sizeof(what));
    if (hwloc_bitmap_list_asprintf(&cpus, set) < 0)
        cpus = NULL;
    bind_diagram(set, diagram, sizeof(diagram));
    snprintf(out, cap, "[%s:%ld] rank %d bound to %s (cpus %s): %s\n", bind_host, (long)pid, rank,
             what, cpus != NULL ? cpus : "?", diagram);
    free(cpus);
    hwloc_bitmap_free(set);
}
