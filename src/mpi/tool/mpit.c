/* The MPI tool information interface (MPI 4.1 chapter 15.3), see docs/mpi_t.md.
 *
 * Control variables: one per tunable of src/util/tunables.c, named as its
 * environment variable, with its type (sizes as MPI_UNSIGNED_LONG, integers
 * and booleans as MPI_INT, choices as MPI_INT with an MPI_T_enum of the
 * choices) and help text. They are read at any time; written before the
 * library starts (MPI_Init or the first MPI_Session_init), when the value is
 * kept in place of the default and the environment, and afterwards only
 * those the library reads at each use (t_cvar_live).
 * Performance variables: the protocol counters of core_st (what DCFA_STATS
 * prints), continuous read-only counters of this process.
 * Categories group both by layer. There are no events (and no event sources).
 *
 * MPI_T calls return their error codes; they never call an error handler.
 * They work before MPI_Init and after MPI_Finalize. */
#include "mpi/mpii.h"
#include "mpi/coll/module.h"
#include "core/core.h"
#include "core/wire.h"
#include "binding/impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpii_runtime_state(void); /* init.c: 0 not started, 1 running, 2 shut down */

static int t_users; /* MPI_T_init_thread calls not yet finalized */

/* ---- strings: MPI_T's in/out length convention --------------------------------------------- */

/* buf of *len chars (or NULL / *len 0: only the length is asked); *len = chars + 1 */
static void t_str(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    size_t n = strlen(s);
    if (buf && *len > 0) {
        size_t k = n < (size_t)(*len - 1) ? n : (size_t)(*len - 1);
        memcpy(buf, s, k);
        buf[k] = '\0';
        *len = (int)k + 1;
    } else {
        *len = (int)n + 1;
    }
}

/* ---- categories --------------------------------------------------------------------------- */

/* Categories, category and scope of each control variable, and whether it may change while
 * the library runs: all from the registry (util/tunables.c). */
#define NCAT         UTIL_NCAT
#define CAT_PROTOCOL UTIL_CAT_PROTOCOL

static int t_cvar_live(const util_tunable *t) { return (t->flags & UTIL_TF_LIVE) != 0; }

/* settings that must agree between processes are ALL_EQ, the others per process; unless
 * live, read-only once the library has started */
static int t_cvar_scope(const util_tunable *t)
{
    if (!t_cvar_live(t) && mpii_runtime_state() != 0)
        return MPI_T_SCOPE_READONLY;
    return t->flags & UTIL_TF_AGREE ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_LOCAL;
}

/* a user's settings are USER verbosity, a tuner's TUNER, the rest MPIDEV */
static int t_cvar_verbosity(const util_tunable *t)
{
    switch (t->level) {
    case UTIL_LVL_USER:
        return MPI_T_VERBOSITY_USER_BASIC;
    case UTIL_LVL_TUNING:
        return MPI_T_VERBOSITY_TUNER_BASIC;
    default:
        return MPI_T_VERBOSITY_MPIDEV_DETAIL;
    }
}

/* ---- performance variables: the core's counters ------------------------------------------------
 */

typedef struct t_pvar {
    const char *name, *desc;
    const uint64_t *value;
} t_pvar;

static const t_pvar t_pvars[] = {
    {"dcfa_eager_sent", "EAGER packets sent (header and whole message)", &core_st.sent[WIRE_EAGER]},
    {"dcfa_rts_sent", "RTS packets sent (sender-first rendezvous)", &core_st.sent[WIRE_RTS]},
    {"dcfa_rtr_sent", "RTR packets sent (receiver-first rendezvous)", &core_st.sent[WIRE_RTR]},
    {"dcfa_done_sent", "DONE packets sent (a bulk transfer finished)", &core_st.sent[WIRE_DONE]},
    {"dcfa_sync_sent", "SYNC packets sent (explicit credit updates)", &core_st.sent[WIRE_SYNC]},
    {"dcfa_cts_sent", "CTS packets sent (clear to send through the ring)", &core_st.sent[WIRE_CTS]},
    {"dcfa_data_sent", "DATA fragments sent through the ring", &core_st.sent[WIRE_DATA]},
    {"dcfa_ack_sent", "ACK packets sent (synchronous eager message matched)",
     &core_st.sent[WIRE_ACK]},
    {"dcfa_eager_received", "EAGER packets received", &core_st.received[WIRE_EAGER]},
    {"dcfa_half_sent",
     "of the EAGER packets sent, half packets (two to a ring block, DCFA_HALF_PACKETS)",
     &core_st.sent[WIRE_EAGER_HALF]},
    {"dcfa_half_received", "of the EAGER packets received, half packets",
     &core_st.received[WIRE_EAGER_HALF]},
    {"dcfa_rts_received", "RTS packets received", &core_st.received[WIRE_RTS]},
    {"dcfa_rtr_received", "RTR packets received", &core_st.received[WIRE_RTR]},
    {"dcfa_done_received", "DONE packets received", &core_st.received[WIRE_DONE]},
    {"dcfa_sync_received", "SYNC packets received", &core_st.received[WIRE_SYNC]},
    {"dcfa_data_received", "DATA fragments received", &core_st.received[WIRE_DATA]},
    {"dcfa_unexpected", "messages that arrived before their receive was posted",
     &core_st.unexpected},
    {"dcfa_backlog", "packets queued because the peer's ring had no credit", &core_st.backlog},
    {"dcfa_sleeps",
     "idle waits that slept in the kernel on the fabrics' descriptors (DCFA_SLEEP_US)",
     &core_st.sleeps},
    {"dcfa_cma_bytes", "bytes moved single-copy (process_vm_readv/writev)", &core_st.cma_bytes},
    {"dcfa_direct_bytes",
     "bytes this process moved by plain copies from or into a peer's MPI_Alloc_mem memory mapped "
     "here (DCFA_ALLOC_SHM), no system call",
     &core_st.direct_bytes},
    {"dcfa_copy_bytes", "bytes moved by copying (through the staging pool or the ring)",
     &core_st.copy_bytes},
    {"dcfa_stage_bytes", "of them, bytes moved through the staging pool", &core_st.stage_bytes},
    {"dcfa_stage_nt_bytes",
     "of them, bytes the sender copied into the pool with non-temporal stores (DCFA_STAGE_NT)",
     &core_st.stage_nt_bytes},
    {"dcfa_recv_nt_bytes",
     "bytes this receiver copied out of a peer's pool with non-temporal stores (DCFA_RECV_NT)",
     &core_st.recv_nt_bytes},
    {"dcfa_stage_eager", "messages sent eager in a chunk of the staging pool (DCFA_STAGE_EAGER)",
     &core_st.stage_eager},
    {"dcfa_split_written", "bytes written as the sender's part of a split read (DCFA_COOP_MIN)",
     &core_st.split_written},
    {"dcfa_split_back",
     "split reads whose sender's part this receiver read itself (the sender had not taken it)",
     &core_st.split_back},
    {"dcfa_split_sent", "SPLIT packets sent: reads offered to share with their sender",
     &core_st.sent[WIRE_SPLIT]},
    {"dcfa_connections", "connections to other processes made so far (either side opened them)",
     &core_st.connections},
    {"dcfa_coll_module_ops", "collectives built by the module-aware algorithms (DCFA_COLL_MODULE)",
     &coll_module_st[0]},
    {"dcfa_coll_module_cross", "messages those collectives send from one module to another",
     &coll_module_st[1]},
};
#define T_NPVARS ((int)(sizeof t_pvars / sizeof t_pvars[0]))

/* ---- enumerations: the choices of the UTIL_T_ENUM tunables ------------------------------------
 */

struct dcfa_t_enum {
    int cvar; /* index of its tunable */
};
static struct dcfa_t_enum *t_enums; /* one per tunable; used for the enum ones */

static int t_enum_count(const util_tunable *t)
{
    int n = 1;
    for (const char *p = t->choices; p && (p = strchr(p, ',')); p++)
        n++;
    return n;
}

/* item i of a choices list into buf */
static void t_enum_item(const util_tunable *t, int i, char *buf, size_t len)
{
    const char *p = t->choices;
    for (int k = 0; k < i && p; k++) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    const char *comma = p ? strchr(p, ',') : NULL;
    size_t n = p ? (comma ? (size_t)(comma - p) : strlen(p)) : 0;
    if (n >= len)
        n = len - 1;
    memcpy(buf, p ? p : "", n);
    buf[n] = '\0';
}

/* ---- init / finalize ------------------------------------------------------------------------- */

int b_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    if (t_users++ == 0) {
        /* before the library starts, the values it would use: defaults and environment */
        if (mpii_runtime_state() == 0)
            util_tunables_load();
        if (!t_enums) {
            t_enums = calloc((size_t)util_ntunables, sizeof *t_enums);
            if (!t_enums) {
                t_users--;
                return MPI_T_ERR_MEMORY;
            }
            for (int i = 0; i < util_ntunables; i++)
                t_enums[i].cvar = i;
        }
    }
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    return MPI_SUCCESS;
}

int b_T_finalize(void)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    t_users--;
    return MPI_SUCCESS;
}

/* ---- enumerations ---------------------------------------------------------------------------- */

static int t_enum_ok(MPI_T_enum e)
{
    return t_enums && e >= t_enums && e < t_enums + util_ntunables &&
           util_tunables[e->cvar].type == UTIL_T_ENUM;
}

int b_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!t_enum_ok(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    const util_tunable *t = &util_tunables[enumtype->cvar];
    if (num)
        *num = t_enum_count(t);
    t_str(t->name, name, name_len);
    return MPI_SUCCESS;
}

int b_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!t_enum_ok(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    const util_tunable *t = &util_tunables[enumtype->cvar];
    if (index < 0 || index >= t_enum_count(t))
        return MPI_T_ERR_INVALID_ITEM;
    char item[64];
    t_enum_item(t, index, item, sizeof item);
    if (value)
        *value = index;
    t_str(item, name, name_len);
    return MPI_SUCCESS;
}

/* ---- control variables ------------------------------------------------------------------------
 */

struct dcfa_t_cvar_handle {
    int index;
};

int b_T_cvar_get_num(int *num_cvar)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = util_ntunables;
    return MPI_SUCCESS;
}

static MPI_Datatype t_cvar_type(const util_tunable *t)
{
    return t->type == UTIL_T_SIZE ? MPI_UNSIGNED_LONG : t->type == UTIL_T_STR ? MPI_CHAR : MPI_INT;
}

/* string control variables are read and written as MPI_CHAR arrays of this many bytes */
#define T_STR_MAX 256

int b_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                      MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                      int *bind, int *scope)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cvar_index < 0 || cvar_index >= util_ntunables)
        return MPI_T_ERR_INVALID_INDEX;
    const util_tunable *t = &util_tunables[cvar_index];
    t_str(t->name, name, name_len);
    char d[1024];
    snprintf(d, sizeof d, "%s (default %s%s%s)", t->help, t->defval,
             t->type == UTIL_T_ENUM ? "; one of " : "", t->type == UTIL_T_ENUM ? t->choices : "");
    t_str(d, desc, desc_len);
    if (verbosity)
        *verbosity = t_cvar_verbosity(t);
    if (datatype)
        *datatype = t_cvar_type(t);
    if (enumtype)
        *enumtype = t->type == UTIL_T_ENUM ? &t_enums[cvar_index] : MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = t_cvar_scope(t);
    return MPI_SUCCESS;
}

int b_T_cvar_get_index(const char *name, int *cvar_index)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < util_ntunables; i++) {
        if (!strcmp(util_tunables[i].name, name)) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

int b_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cvar_index < 0 || cvar_index >= util_ntunables)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    MPI_T_cvar_handle h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->index = cvar_index;
    *handle = h;
    *count = util_tunables[cvar_index].type == UTIL_T_STR ? T_STR_MAX : 1;
    return MPI_SUCCESS;
}

int b_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!handle || !*handle)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int b_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!handle)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const util_tunable *t = &util_tunables[handle->index];
    if (t->type == UTIL_T_SIZE)
        *(unsigned long *)buf = (unsigned long)*(size_t *)t->ptr;
    else if (t->type == UTIL_T_STR)
        snprintf(buf, T_STR_MAX, "%s", *(const char **)t->ptr ? *(const char **)t->ptr : "");
    else
        *(int *)buf = *(int *)t->ptr;
    return MPI_SUCCESS;
}

int b_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!handle)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const util_tunable *t = &util_tunables[handle->index];
    int state = mpii_runtime_state();
    if (state != 0 && !t_cvar_live(t))
        return state == 1 ? MPI_T_ERR_CVAR_SET_NOT_NOW : MPI_T_ERR_CVAR_SET_NEVER;
    if (t->type == UTIL_T_STR) {
        /* the string is kept for the rest of the process (tunables point at it) */
        if (strnlen(buf, T_STR_MAX) == T_STR_MAX)
            return MPI_T_ERR_INVALID;
        *(const char **)t->ptr = util_strdup(buf);
        util_tunable_fix(handle->index);
        return MPI_SUCCESS;
    }
    int v = *(const int *)buf;
    switch (t->type) {
    case UTIL_T_STR:
        break;
    case UTIL_T_SIZE:
        *(size_t *)t->ptr = (size_t) * (const unsigned long *)buf;
        break;
    case UTIL_T_BOOL:
        if (v != 0 && v != 1)
            return MPI_T_ERR_INVALID;
        *(int *)t->ptr = v;
        break;
    case UTIL_T_ENUM:
        if (v < 0 || v >= t_enum_count(t))
            return MPI_T_ERR_INVALID;
        *(int *)t->ptr = v;
        break;
    case UTIL_T_INT:
        *(int *)t->ptr = v;
        break;
    }
    util_tunable_fix(handle->index);
    return MPI_SUCCESS;
}

/* ---- performance variables ------------------------------------------------------------------- */

struct dcfa_t_pvar_session {
    int live;
};
struct dcfa_t_pvar_handle {
    MPI_T_pvar_session session;
    int index;
};

int b_T_pvar_get_num(int *num_pvar)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = T_NPVARS;
    return MPI_SUCCESS;
}

int b_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                      MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                      int *bind, int *readonly, int *continuous, int *atomic)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (pvar_index < 0 || pvar_index >= T_NPVARS)
        return MPI_T_ERR_INVALID_INDEX;
    const t_pvar *v = &t_pvars[pvar_index];
    t_str(v->name, name, name_len);
    t_str(v->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_DETAIL;
    if (var_class)
        *var_class = MPI_T_PVAR_CLASS_COUNTER;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 1;
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}

int b_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < T_NPVARS; i++) {
        if (!strcmp(t_pvars[i].name, name) && var_class == MPI_T_PVAR_CLASS_COUNTER) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

int b_T_pvar_session_create(MPI_T_pvar_session *session)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!session)
        return MPI_T_ERR_INVALID;
    MPI_T_pvar_session s = malloc(sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    s->live = 1;
    *session = s;
    return MPI_SUCCESS;
}

int b_T_pvar_session_free(MPI_T_pvar_session *session)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!session || !*session)
        return MPI_T_ERR_INVALID_SESSION;
    free(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

int b_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                          MPI_T_pvar_handle *handle, int *count)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= T_NPVARS)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    MPI_T_pvar_handle h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->session = session;
    h->index = pvar_index;
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}

int b_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    if (!handle || !*handle || *handle == MPI_T_PVAR_ALL_HANDLES || (*handle)->session != session)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

static int t_pvar_handle_ok(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_SUCCESS;
    if (!handle || handle->session != session)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_SUCCESS;
}

/* every counter is continuous: there is nothing to start or stop */
int b_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = t_pvar_handle_ok(session, handle);
    if (rc != MPI_SUCCESS || handle == MPI_T_PVAR_ALL_HANDLES)
        return rc;
    return MPI_T_ERR_PVAR_NO_STARTSTOP;
}

int b_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = t_pvar_handle_ok(session, handle);
    if (rc != MPI_SUCCESS || handle == MPI_T_PVAR_ALL_HANDLES)
        return rc;
    return MPI_T_ERR_PVAR_NO_STARTSTOP;
}

int b_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = t_pvar_handle_ok(session, handle);
    if (rc != MPI_SUCCESS)
        return rc;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    *(unsigned long long *)buf = (unsigned long long)*t_pvars[handle->index].value;
    return MPI_SUCCESS;
}

/* read-only counters */
int b_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = t_pvar_handle_ok(session, handle);
    if (rc != MPI_SUCCESS)
        return rc;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_PVAR_NO_WRITE;
}

int b_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = t_pvar_handle_ok(session, handle);
    if (rc != MPI_SUCCESS || handle == MPI_T_PVAR_ALL_HANDLES)
        return rc;
    return MPI_T_ERR_PVAR_NO_WRITE;
}

int b_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = t_pvar_handle_ok(session, handle);
    if (rc != MPI_SUCCESS)
        return rc;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_PVAR_NO_WRITE;
}

/* ---- categories --------------------------------------------------------------------------------
 */

int b_T_category_get_num(int *num_cat)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = NCAT;
    return MPI_SUCCESS;
}

static int t_cat_cvars(int cat, int len, int *indices)
{
    int n = 0;
    for (int i = 0; i < util_ntunables; i++) {
        if (util_tunables[i].cat != cat)
            continue;
        if (indices && n < len)
            indices[n] = i;
        n++;
    }
    return n;
}

/* the counters are the protocol's */
static int t_cat_pvars(int cat, int len, int *indices)
{
    if (cat != CAT_PROTOCOL)
        return 0;
    for (int i = 0; indices && i < len && i < T_NPVARS; i++)
        indices[i] = i;
    return T_NPVARS;
}

int b_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                          int *num_cvars, int *num_pvars, int *num_categories)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    t_str(util_tunable_cat_names[cat_index][0], name, name_len);
    t_str(util_tunable_cat_names[cat_index][1], desc, desc_len);
    if (num_cvars)
        *num_cvars = t_cat_cvars(cat_index, 0, NULL);
    if (num_pvars)
        *num_pvars = t_cat_pvars(cat_index, 0, NULL);
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}

int b_T_category_get_num_events(int cat_index, int *num_events)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

int b_T_category_get_index(const char *name, int *cat_index)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NCAT; i++) {
        if (!strcmp(util_tunable_cat_names[i][0], name)) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

int b_T_category_get_cvars(int cat_index, int len, int indices[])
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    t_cat_cvars(cat_index, len, indices);
    return MPI_SUCCESS;
}

int b_T_category_get_pvars(int cat_index, int len, int indices[])
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    t_cat_pvars(cat_index, len, indices);
    return MPI_SUCCESS;
}

int b_T_category_get_events(int cat_index, int len, int indices[])
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0)
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

int b_T_category_get_categories(int cat_index, int len, int indices[])
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0)
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

/* the variables and categories never change after start-up */
int b_T_category_changed(int *update_number)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0;
    return MPI_SUCCESS;
}

/* ---- events: there are none, and no event sources ----------------------------------------------
 */

int b_T_source_get_num(int *num_sources)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 0;
    return MPI_SUCCESS;
}

int b_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                        MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                        MPI_Count *max_ticks, MPI_Info *info)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_INDEX;
}

int b_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_INDEX;
}

int b_T_event_get_num(int *num_events)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

int b_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                       MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                       int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                       int *desc_len, int *bind)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_INDEX;
}

int b_T_event_get_index(const char *name, int *event_index)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return name && event_index ? MPI_T_ERR_INVALID_NAME : MPI_T_ERR_INVALID;
}

int b_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                           MPI_T_event_registration *event_registration)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_INDEX;
}

int b_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_register_callback(MPI_T_event_registration event_registration,
                                MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                MPI_T_event_cb_function *event_cb_function)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                MPI_T_cb_safety cb_safety, MPI_Info info)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                          MPI_T_event_free_cb_function *free_cb_function)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                  MPI_T_event_dropped_cb_function dropped_cb_function)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}

int b_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    if (t_users == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return MPI_T_ERR_INVALID_HANDLE;
}
