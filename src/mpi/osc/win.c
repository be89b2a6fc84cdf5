/* Windows: creation of every flavour, the node segment, the choice of how
 * each target is reached, attributes, info, names, error handlers, dynamic
 * attach/detach, shared_query and free. See docs/rma.md. */
#include "mpi/osc/osc_impl.h"
#include "mpi/attr/attr.h"
#include "mpi/comm/comm.h"
#include "mpi/errhan/errhan.h"
#include "mpi/info/info.h"
#include "assist/assist.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

util_htab osc_win_tab;
int osc_win_inited;
static util_queue win_list; /* windows with message traffic, served by the poller */

/* a word every process exposes so that peers can test cross-memory attach */
#define OSC_PROBE_MAGIC 0x5052424f43534fULL
static volatile uint64_t osc_probe_word = OSC_PROBE_MAGIC;

static void win_init(void)
{
    if (osc_win_inited)
        return;
    util_htab_init(&osc_win_tab, sizeof(osc_win), 1);
    util_queue_init(&win_list);
    osc_win_inited = 1;
}

MPI_Win osc_win_handle(const osc_win *w) { return w->handle; }
mpii_group *osc_win_group(osc_win *w) { return w->group; }
int osc_win_size(osc_win *w) { return w->size; }
MPI_Errhandler osc_win_errhandler(osc_win *w) { return w->errh; }
mpii_attr **osc_win_attrs(osc_win *w) { return &w->attrs; }
char *osc_win_name(osc_win *w) { return w->name; }

void osc_win_set_errhandler(osc_win *w, MPI_Errhandler eh)
{
    mpii_errh_ref(eh);
    mpii_errh_release(w->errh);
    w->errh = eh;
}

MPI_Errhandler osc_errhandler_of(int handle)
{
    osc_win *w = osc_win_get(handle);
    return w ? w->errh : MPI_ERRHANDLER_NULL;
}

const char *osc_win_label(osc_win *w)
{
    if (w->name[0])
        snprintf(w->label, sizeof w->label, "window '%s'", w->name);
    else
        snprintf(w->label, sizeof w->label, "window 0x%08x", (unsigned)w->handle);
    return w->label;
}

int osc_err(osc_win *w, int cls, const char *fn, const char *fmt, ...)
{
    char body[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    return mpii_err(MPII_OBJ_WIN, w->handle, cls, fn, "%s (%s)", body, osc_win_label(w));
}

void *osc_win_predef_attr(osc_win *w, int keyval)
{
    switch (keyval) {
    case MPI_WIN_BASE:
        return w->base;
    case MPI_WIN_SIZE:
        return &w->size_attr;
    case MPI_WIN_DISP_UNIT:
        return &w->disp_unit_attr;
    case MPI_WIN_CREATE_FLAVOR:
        return &w->flavor_attr;
    case MPI_WIN_MODEL:
        return &w->model_attr;
    }
    return NULL;
}

/* ---- the list of windows with message traffic (served by am.c's poller) ---------------- */

void osc_win_list_add(osc_win *w)
{
    win_init();
    if (!w->in_list) {
        util_queue_push(&win_list, &w->qn);
        w->in_list = 1;
    }
}

void osc_win_list_remove(osc_win *w)
{
    if (w->in_list) {
        util_queue_remove(&w->qn);
        w->in_list = 0;
    }
}

util_queue *osc_win_list(void);
util_queue *osc_win_list(void)
{
    win_init();
    return &win_list;
}

/* ---- info ------------------------------------------------------------------------------------ */

static int info_bool(MPI_Info info, const char *key, int dflt)
{
    const char *v = info != MPI_INFO_NULL ? mpii_info_lookup(info, key) : NULL;
    if (!v)
        return dflt;
    return !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes");
}

static void win_info_apply(osc_win *w, MPI_Info info, int at_create)
{
    w->no_locks = info_bool(info, "no_locks", at_create ? 0 : w->no_locks);
    const char *v = info != MPI_INFO_NULL ? mpii_info_lookup(info, "accumulate_ordering") : NULL;
    if (v && strlen(v) < sizeof w->acc_ordering)
        snprintf(w->acc_ordering, sizeof w->acc_ordering, "%s", v);
    else if (at_create)
        strcpy(w->acc_ordering, "rar,raw,war,waw");
    v = info != MPI_INFO_NULL ? mpii_info_lookup(info, "accumulate_ops") : NULL;
    if (v && (!strcmp(v, "same_op") || !strcmp(v, "same_op_no_op")))
        snprintf(w->acc_ops, sizeof w->acc_ops, "%s", v);
    else if (at_create)
        strcpy(w->acc_ops, "same_op_no_op");
    w->same_size = info_bool(info, "same_size", at_create ? 0 : w->same_size);
    w->same_disp_unit = info_bool(info, "same_disp_unit", at_create ? 0 : w->same_disp_unit);
    /* used at creation; later it is only reported back */
    w->noncontig = info_bool(info, "alloc_shared_noncontig", at_create ? 0 : w->noncontig);
}

int osc_win_set_info(const char *fn, osc_win *w, MPI_Info info)
{
    (void)fn;
    win_info_apply(w, info, 0);
    return MPI_SUCCESS;
}

/* what passive-target progress this window guarantees, for its info */
static const char *win_progress_value(osc_win *w)
{
    if (!w->am_origin)
        return "direct";
    if (util_cfg.rma_assist)
        return w->am_origin && w->size > 1 ? "assist" : "direct";
    return "target-calls";
}

MPI_Info osc_win_get_info(osc_win *w)
{
    MPI_Info i = mpii_info_new();
    mpii_info_set(i, "no_locks", w->no_locks ? "true" : "false");
    mpii_info_set(i, "accumulate_ordering", w->acc_ordering);
    mpii_info_set(i, "accumulate_ops", w->acc_ops);
    mpii_info_set(i, "same_size", w->same_size ? "true" : "false");
    mpii_info_set(i, "same_disp_unit", w->same_disp_unit ? "true" : "false");
    if (w->flavor == MPI_WIN_FLAVOR_SHARED)
        mpii_info_set(i, "alloc_shared_noncontig", w->noncontig ? "true" : "false");
    mpii_info_set(i, "dcfa_passive_progress", win_progress_value(w));
    mpii_info_set(i, "dcfa_rma_mode", w->am_origin ? "am" : "direct");
    return i;
}

const char *osc_progress_claim(void)
{
    return "on one node (DCFA_RMA_MODE=auto) lock, unlock, flush, put, get, accumulate, "
           "get_accumulate, fetch_and_op and compare_and_swap complete without any action "
           "of the target process (shared segment or cross-memory attach; window info "
           "dcfa_passive_progress=direct); in message mode (another node, DCFA_RMA_MODE=am, "
           "no CMA) the target's assist thread serves them while it computes "
           "(DCFA_RMA_ASSIST=1: dcfa_passive_progress=assist; 0: target-calls)";
}

/* ---- the node segment -------------------------------------------------------------------- */

static size_t seg_align(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

typedef struct win_rec {
    uint64_t base; /* create: the window's base; else 0 */
    int64_t size;
    int64_t disp_unit;
    uint64_t node;    /* hash of util_node_key() */
    uint64_t probe;   /* address of osc_probe_word */
    uint64_t token;   /* random (no one else can guess the name), if this rank makes the
                         node's segment */
    int32_t am_force; /* DCFA_RMA_MODE=am here */
    int32_t pad;
} win_rec;

static uint64_t win_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

static void seg_name(char *buf, size_t len, int lpid, uint64_t token)
{
    snprintf(buf, len, "/dcfa-%s-win-%d-%016llx", assist_job_id(), lpid, (unsigned long long)token);
}

/* layout of the control area: where the data starts */
static size_t seg_ctl_bytes(int nlocal, int dynamic)
{
    size_t n = (size_t)nlocal;
    size_t off = sizeof(osc_seg_hdr) + n * sizeof(osc_seg_rank);
    off += 2 * n * n * sizeof(uint32_t);
    off = seg_align(off, 64);
    if (dynamic)
        off += n * OSC_ATTACH_MAX * sizeof(osc_seg_attach);
    return seg_align(off, 4096);
}

static void seg_wire(osc_win *w)
{
    char *p = w->seg;
    size_t n = (size_t)w->nlocal;
    w->hdr = (osc_seg_hdr *)p;
    w->lranks = (osc_seg_rank *)(p + sizeof(osc_seg_hdr));
    w->post = (_Atomic uint32_t *)(p + sizeof(osc_seg_hdr) + n * sizeof(osc_seg_rank));
    w->done = w->post + n * n;
    size_t off = seg_align(
        sizeof(osc_seg_hdr) + n * sizeof(osc_seg_rank) + 2 * n * n * sizeof(uint32_t), 64);
    w->attach = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (osc_seg_attach *)(p + off) : NULL;
}

/* the node's first rank makes the segment: exclusive create, mode 0600,
 * memory reserved now so that a full /dev/shm is an error here, not a SIGBUS later */
static int seg_create(osc_win *w, const char *name, size_t len, const int64_t *sizes)
{
    void *p;
    int rc = util_shm_create(name, len, "RMA window", &p);
    if (rc != UTIL_OK) {
        mpii_cause("cannot create shared segment %s (%zu bytes): %s", name, len, strerror(-rc));
        return rc == UTIL_ENOMEM ? UTIL_ENOMEM : UTIL_EIO;
    }
    w->seg = p;
    w->seg_len = len;
    seg_wire(w);
    size_t data = seg_ctl_bytes(w->nlocal, w->flavor == MPI_WIN_FLAVOR_DYNAMIC);
    w->hdr->magic = OSC_SEG_MAGIC;
    w->hdr->version = OSC_SEG_VERSION;
    w->hdr->nlocal = (uint32_t)w->nlocal;
    w->hdr->data_off = data;
    w->hdr->data_bytes = len - data;
    /* every local rank's memory: contiguous for allocate_shared (MPI 4.1 12.2.3),
     * else each on its own cache line (pages for alloc_shared_noncontig) */
    size_t off = data;
    size_t align = w->flavor == MPI_WIN_FLAVOR_SHARED ? (w->noncontig ? 4096 : 1) : 64;
    for (int l = 0; l < w->nlocal; l++) {
        off = seg_align(off, align);
        w->lranks[l].data_off = off;
        w->lranks[l].data_size = sizes ? (uint64_t)sizes[l] : 0;
        off += sizes ? (size_t)sizes[l] : 0;
    }
    atomic_store_explicit(&w->hdr->mapped, 1, memory_order_release);
    return UTIL_OK;
}

static int seg_open(osc_win *w, const char *name, size_t len)
{
    void *p;
    int rc = util_shm_attach(name, len, "RMA window", &p);
    if (rc != UTIL_OK) {
        mpii_cause("cannot open shared segment %s (%zu bytes): %s", name, len, strerror(-rc));
        return rc == UTIL_ENOMEM ? UTIL_ENOMEM : UTIL_EIO;
    }
    w->seg = p;
    w->seg_len = len;
    seg_wire(w);
    if (w->hdr->magic != OSC_SEG_MAGIC || w->hdr->version != OSC_SEG_VERSION ||
        w->hdr->nlocal != (uint32_t)w->nlocal) {
        mpii_cause("shared segment %s has an unexpected header", name);
        return UTIL_EPROTO;
    }
    atomic_fetch_add_explicit(&w->hdr->mapped, 1, memory_order_acq_rel);
    return UTIL_OK;
}

/* every rank of the window agrees on the worst status (collective) */
static int win_agree(osc_win *w, int status)
{
    int mine = status < 0 ? -status : 0, all = 0;
    if (mpii_allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, w->comm) != MPI_SUCCESS)
        return UTIL_EIO;
    return -all;
}

/* ---- creation ------------------------------------------------------------------------------ */

static void win_release_objects(osc_win *w)
{
    if (w->seg)
        munmap(w->seg, w->seg_len);
    w->seg = NULL;
    free(w->peers);
    free(w->scratch[0]);
    free(w->scratch[1]);
    free(w->local_rank);
    free(w->regions);
    if (w->group)
        mpii_group_release(w->group);
    if (w->comm)
        mpii_comm_release(w->comm);
    mpii_errh_release(w->errh);
    int idx = MPII_HANDLE_INDEX(w->handle);
    memset(w, 0, sizeof *w);
    util_htab_free(&osc_win_tab, idx);
}

/* is CMA usable towards every local peer: read its probe word */
static int win_probe_cma(osc_win *w, const win_rec *recs)
{
    for (int t = 0; t < w->size; t++) {
        osc_peer *p = &w->peers[t];
        if (t == w->rank || p->local < 0)
            continue;
        uint64_t v = 0;
        struct iovec iov = {&v, sizeof v};
        core_rma_ctx ctx;
        int rc = core_rma_capable(p->lpid)
                     ? core_rma_read(p->lpid, &iov, 1, recs[t].probe, 0, sizeof v, &ctx)
                     : UTIL_ECONN;
        while (rc == CORE_RMA_POSTED && !core_rma_test(&ctx))
            core_progress();
        if (rc == CORE_RMA_POSTED)
            rc = ctx.status;
        if (rc != UTIL_OK || v != OSC_PROBE_MAGIC)
            return UTIL_ECONN;
    }
    return UTIL_OK;
}

int osc_win_create(const char *fn, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit,
                   MPI_Info info, mpii_comm *c, void *base_out, MPI_Win *out)
{
    win_init();
    int idx, rc, err = MPI_SUCCESS;
    osc_win *w = util_htab_alloc(&osc_win_tab, &idx);
    w->handle = MPII_HANDLE(MPII_KIND_WIN, idx);
    w->flavor = flavor;
    w->errh = MPI_ERRHANDLER_NULL; /* never set: MPI_COMM_WORLD's (mpii_errh_or_default) */
    w->next_tag = 16;
    util_queue_init(&w->pend);
    win_info_apply(w, info, 1);
    rc = mpii_comm_dup_internal(c, &w->comm);
    if (rc != MPI_SUCCESS) {
        err = rc;
        goto fail_obj;
    }
    w->group = w->comm->group;
    mpii_group_ref(w->group);
    w->rank = w->comm->rank;
    w->size = w->comm->size;
    w->disp_unit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : disp_unit;
    w->bytes = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;

    /* who is where, with what */
    win_rec mine = {.base = flavor == MPI_WIN_FLAVOR_CREATE ? (uint64_t)(uintptr_t)base : 0,
                    .size = w->bytes,
                    .disp_unit = w->disp_unit,
                    .node = win_hash(util_node_key()),
                    .probe = (uint64_t)(uintptr_t)&osc_probe_word,
                    .am_force = util_cfg.rma_mode == 1,
                    .token = util_shm_token()};
    win_rec *recs = util_calloc((size_t)w->size, sizeof *recs);
    rc = mpii_allgather(&mine, (MPI_Aint)sizeof mine, MPI_BYTE, recs, (MPI_Aint)sizeof mine,
                        MPI_BYTE, w->comm);
    if (rc != MPI_SUCCESS) {
        err = rc;
        goto fail_recs;
    }
    w->peers = util_calloc((size_t)w->size, sizeof *w->peers);
    w->local_rank = util_calloc((size_t)w->size, sizeof(int));
    int am_force = 0, leader = -1;
    for (int t = 0; t < w->size; t++) {
        osc_peer *p = &w->peers[t];
        p->lpid = mpii_comm_peer_lpid(w->comm, t);
        p->base = recs[t].base;
        p->size = (MPI_Aint)recs[t].size;
        p->disp_unit = (MPI_Aint)recs[t].disp_unit;
        p->local = -1;
        am_force |= recs[t].am_force;
        if (recs[t].node == mine.node) {
            if (leader < 0)
                leader = t;
            p->local = w->nlocal;
            w->local_rank[w->nlocal++] = t;
        }
    }
    w->my_local = w->peers[w->rank].local;
    if (flavor == MPI_WIN_FLAVOR_SHARED && w->nlocal != w->size) {
        /* every rank knows every rank's node: all fail alike */
        err = MPI_ERR_RMA_SHARED;
        free(recs);
        win_release_objects(w);
        return mpii_err(MPII_OBJ_COMM, c->handle, err, fn,
                        "the communicator spans %s: MPI_Win_allocate_shared needs ranks that "
                        "share memory (split it with MPI_COMM_TYPE_SHARED)",
                        "several nodes");
    }

    /* the node segment: made by the node's first rank, mapped by the others */
    int dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC;
    int alloc = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    int64_t *lsizes = util_calloc((size_t)w->nlocal + 1, sizeof *lsizes);
    size_t data = 0;
    for (int l = 0; l < w->nlocal; l++) {
        lsizes[l] = alloc ? (int64_t)w->peers[w->local_rank[l]].size : 0;
        data += (size_t)lsizes[l] + (w->noncontig ? 4096 : 64);
    }
    size_t len = seg_ctl_bytes(w->nlocal, dynamic) + seg_align(data, 4096) + 4096;
    char name[128];
    seg_name(name, sizeof name, w->peers[leader].lpid, recs[leader].token);
    rc = w->rank == leader ? seg_create(w, name, len, lsizes) : UTIL_OK;
    free(lsizes);
    rc = win_agree(w, rc);
    if (rc != UTIL_OK) {
        err = MPI_ERR_NO_MEM;
        goto fail_seg;
    }
    if (w->rank != leader)
        rc = seg_open(w, name, len);
    /* direct access to user memory needs the connections up at both ends */
    int want_cma = !alloc && !am_force && util_cfg.cma && w->nlocal > 1;
    for (int l = 0; want_cma && rc == UTIL_OK && l < w->nlocal; l++)
        rc = core_rma_prepare(w->peers[w->local_rank[l]].lpid);
    rc = win_agree(w, rc);
    if (w->rank == leader && w->seg)
        util_shm_remove(name); /* every local rank has it mapped now */
    if (rc != UTIL_OK) {
        err = MPI_ERR_NO_MEM;
        goto fail_seg;
    }
    int cma_ok = want_cma && win_agree(w, win_probe_cma(w, recs)) == UTIL_OK;

    /* how each target is reached */
    for (int t = 0; t < w->size; t++) {
        osc_peer *p = &w->peers[t];
        if (alloc && p->local >= 0)
            p->map = (char *)w->seg + w->lranks[p->local].data_off;
        if (t == w->rank)
            p->mode = OSC_MODE_SELF;
        else if (p->local >= 0 && !am_force && alloc)
            p->mode = OSC_MODE_MAP;
        else if (p->local >= 0 && cma_ok)
            p->mode = OSC_MODE_CMA;
        else
            p->mode = OSC_MODE_AM;
        if (p->mode == OSC_MODE_AM)
            w->am_origin = w->am_target = 1;
    }
    free(recs);
    recs = NULL;
    if (flavor == MPI_WIN_FLAVOR_CREATE)
        w->peers[w->rank].map = base;
    w->base = flavor == MPI_WIN_FLAVOR_CREATE ? base : alloc ? w->peers[w->rank].map : NULL;
    if (alloc && w->bytes == 0 && flavor == MPI_WIN_FLAVOR_ALLOCATE)
        w->base = w->peers[w->rank].map; /* a valid, empty region */
    if (w->am_target) {
        rc = osc_am_setup(w);
        if (rc != MPI_SUCCESS) {
            err = rc;
            goto fail_seg;
        }
    }
    w->flavor_attr = flavor;
    w->model_attr = MPI_WIN_UNIFIED;
    w->disp_unit_attr = (int)w->disp_unit;
    w->size_attr = w->bytes;
    if (base_out)
        *(void **)base_out = w->base;
    *out = w->handle;
    /* the target may compute outside MPI while origins send it operations:
     * the assist thread serves them (last: it may start running now) */
    if (w->am_target && util_cfg.rma_assist && w->size > 1) {
        w->assist_held = 1;
        mpii_async_hold(1);
    }
    return MPI_SUCCESS;

fail_seg:
fail_recs:
    free(recs);
fail_obj:
    win_release_objects(w);
    return mpii_err(MPII_OBJ_COMM, c->handle, err, fn,
                    err == MPI_ERR_NO_MEM
                        ? "cannot set up the window's shared-memory segment (see the message above)"
                        : "window creation failed");
}

/* ---- free ---------------------------------------------------------------------------------- */

int osc_win_free(const char *fn, osc_win *w)
{
    if (w->nlocked || w->lock_all)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "a passive-target epoch is still open (MPI_Win_unlock%s first)",
                       w->lock_all ? "_all" : "");
    if (w->started || w->posted)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "a %s epoch is still open (MPI_Win_%s first)",
                       w->started ? "post/start access" : "post/start exposure",
                       w->started ? "complete" : "wait");
    int rc = mpii_attr_delete_all(MPII_OBJ_WIN, w->handle, &w->attrs);
    if (rc != MPI_SUCCESS)
        return osc_err(w, MPI_ERR_OTHER, fn, "an attribute delete callback returned %d", rc);
    /* operations of a fence epoch left open by messages: complete them, then
     * nobody touches anybody's memory after the barrier */
    for (int t = 0; w->am_origin && t < w->size; t++)
        if (w->peers[t].mode == OSC_MODE_AM && osc_am_pending(w, t))
            osc_am_flush(w, t, 0);
    mpii_barrier(w->comm);
    if (w->am_target || w->am_origin)
        osc_am_teardown(w);
    win_release_objects(w);
    return MPI_SUCCESS;
}

void osc_dump_pending(void)
{
    if (!osc_win_inited)
        return;
    for (int i = 1; i < osc_win_tab.next_unused; i++) {
        osc_win *w = util_htab_get(&osc_win_tab, i);
        if (!w || !w->handle)
            continue;
        util_log("  %s: %d ranks, %s%s%s%s%s, %d target(s) locked", osc_win_label(w), w->size,
                 w->fence ? "fence epoch " : "", w->lock_all ? "lock_all epoch " : "",
                 w->started ? "access epoch (MPI_Win_start) " : "",
                 w->posted ? "exposure epoch (MPI_Win_post) " : "",
                 w->am_origin ? "message mode" : "direct", w->nlocked);
        if (w->am_origin || w->am_target)
            osc_am_dump(w);
    }
}

void osc_finalize(void)
{
    if (!osc_win_inited)
        return;
    for (int i = 1; i < osc_win_tab.next_unused; i++) {
        osc_win *w = util_htab_get(&osc_win_tab, i);
        if (!w || !w->handle)
            continue;
        osc_win_list_remove(w);
        mpii_attr_drop_all(&w->attrs);
        if (w->am_target || w->am_origin)
            osc_am_teardown(w);
        win_release_objects(w);
    }
}

/* ---- dynamic windows ------------------------------------------------------------------------ */

int osc_win_attach(const char *fn, osc_win *w, void *base, MPI_Aint size)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return osc_err(w, MPI_ERR_RMA_FLAVOR, fn,
                       "only windows made by MPI_Win_create_dynamic take attached memory");
    uint64_t lo = (uint64_t)(uintptr_t)base, hi = lo + (uint64_t)size;
    for (int i = 0; i < w->nregions; i++) {
        uint64_t a = (uint64_t)w->regions[2 * i], b = a + (uint64_t)w->regions[2 * i + 1];
        if (size > 0 && lo < b && a < hi)
            return osc_err(w, MPI_ERR_RMA_ATTACH, fn,
                           "[%p, +%ld) overlaps memory already attached at %p", base, (long)size,
                           (void *)(uintptr_t)a);
    }
    if (w->nregions == w->regions_cap) {
        w->regions_cap = w->regions_cap ? 2 * w->regions_cap : 8;
        w->regions = util_realloc(w->regions, (size_t)w->regions_cap * 2 * sizeof(MPI_Aint));
    }
    w->regions[2 * w->nregions] = (MPI_Aint)lo;
    w->regions[2 * w->nregions + 1] = size;
    w->nregions++;
    /* publish it for the origins of this node */
    osc_seg_rank *me = &w->lranks[w->my_local];
    osc_seg_attach *tab = w->attach + (size_t)w->my_local * OSC_ATTACH_MAX;
    uint32_t n = atomic_load_explicit(&me->nattach, memory_order_relaxed);
    uint32_t slot = n;
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load_explicit(&tab[i].size, memory_order_relaxed) == 0) {
            slot = i;
            break;
        }
    if (slot == OSC_ATTACH_MAX) {
        /* origins can no longer check ranges towards me: they rely on the
         * kernel refusing unmapped addresses (docs/rma.md) */
        atomic_store_explicit(&me->attach_overflow, 1, memory_order_release);
        return MPI_SUCCESS;
    }
    atomic_store_explicit(&tab[slot].base, lo, memory_order_relaxed);
    atomic_store_explicit(&tab[slot].size, (uint64_t)size ? (uint64_t)size : 1,
                          memory_order_release);
    if (slot == n)
        atomic_store_explicit(&me->nattach, n + 1, memory_order_release);
    return MPI_SUCCESS;
}

int osc_win_detach(const char *fn, osc_win *w, const void *base)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return osc_err(w, MPI_ERR_RMA_FLAVOR, fn,
                       "only windows made by MPI_Win_create_dynamic have attached memory");
    uint64_t lo = (uint64_t)(uintptr_t)base;
    int found = -1;
    for (int i = 0; i < w->nregions; i++)
        if ((uint64_t)w->regions[2 * i] == lo)
            found = i;
    if (found < 0)
        return osc_err(w, MPI_ERR_RMA_ATTACH, fn, "base=%p is not the start of attached memory",
                       base);
    w->regions[2 * found] = w->regions[2 * (w->nregions - 1)];
    w->regions[2 * found + 1] = w->regions[2 * (w->nregions - 1) + 1];
    w->nregions--;
    osc_seg_rank *me = &w->lranks[w->my_local];
    osc_seg_attach *tab = w->attach + (size_t)w->my_local * OSC_ATTACH_MAX;
    uint32_t n = atomic_load_explicit(&me->nattach, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load_explicit(&tab[i].base, memory_order_relaxed) == lo &&
            atomic_load_explicit(&tab[i].size, memory_order_relaxed) != 0) {
            atomic_store_explicit(&tab[i].size, 0, memory_order_release);
            break;
        }
    return MPI_SUCCESS;
}

/* a range of my own dynamic window is attached (am server, self) */
int osc_win_local_attached(osc_win *w, uint64_t lo, uint64_t hi);
int osc_win_local_attached(osc_win *w, uint64_t lo, uint64_t hi)
{
    /* covered by attached regions, which may be adjacent (an access may span them) */
    uint64_t at = lo;
    for (int progress = 1; progress && at < hi;) {
        progress = 0;
        for (int i = 0; i < w->nregions; i++) {
            uint64_t a = (uint64_t)w->regions[2 * i], b = a + (uint64_t)w->regions[2 * i + 1];
            if (at >= a && at < b) {
                at = b;
                progress = 1;
            }
        }
    }
    return at >= hi && (lo < hi || w->nregions > 0);
}

/* ---- shared memory queries ---------------------------------------------------------------- */

int osc_win_shared_query(const char *fn, osc_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                         void *baseptr)
{
    /* MPI 4.1 12.2.3: any flavor but dynamic may be queried; memory that this process cannot
     * reach by load and store is reported as size 0 and a NULL base */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return osc_err(w, MPI_ERR_RMA_FLAVOR, fn,
                       "a window made by MPI_Win_create_dynamic has no memory to query");
    int alloc = w->flavor == MPI_WIN_FLAVOR_SHARED || w->flavor == MPI_WIN_FLAVOR_ALLOCATE;
    if (!alloc) {
        /* MPI_Win_create: the user's memory, mapped only in its owner */
        int mine = rank == w->rank;
        *size = mine ? (MPI_Aint)w->bytes : 0;
        *disp_unit = rank == MPI_PROC_NULL ? w->disp_unit : w->peers[rank].disp_unit;
        *(void **)baseptr = mine ? w->base : NULL;
        return MPI_SUCCESS;
    }
    if (rank == MPI_PROC_NULL) {
        /* the first rank of the node with memory (MPI 4.1 12.2.3) */
        for (int l = 0; l < w->nlocal; l++) {
            osc_peer *p = &w->peers[w->local_rank[l]];
            if (p->size > 0) {
                *size = p->size;
                *disp_unit = p->disp_unit;
                *(void **)baseptr = p->map;
                return MPI_SUCCESS;
            }
        }
        *size = 0;
        *disp_unit = w->disp_unit;
        *(void **)baseptr = NULL;
        return MPI_SUCCESS;
    }
    osc_peer *p = &w->peers[rank];
    if (p->local < 0) {
        if (w->flavor == MPI_WIN_FLAVOR_SHARED)
            return osc_err(w, MPI_ERR_RMA_SHARED, fn,
                           "rank=%d is on another node: its memory is not shared", rank);
        *size = 0; /* MPI_Win_allocate: another node's memory */
        *disp_unit = p->disp_unit;
        *(void **)baseptr = NULL;
        return MPI_SUCCESS;
    }
    *size = p->size;
    *disp_unit = p->disp_unit;
    *(void **)baseptr = p->size > 0 ? p->map : NULL;
    return MPI_SUCCESS;
}
