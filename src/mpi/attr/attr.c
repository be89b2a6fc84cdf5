/* Attribute caching: keyvals (a handle table of callbacks) and per-object
 * attribute lists, newest first. See attr.h. */
#include "mpi/attr/attr.h"
#include "mpi/comm/comm.h"
#include "mpi/errhan/errhan.h"

#include <stdlib.h>

typedef struct attr_keyval {
    int kind;     /* MPII_KIND_COMM / _DTYPE / _WIN; 0 for an unused slot */
    int refcount; /* the user's handle + one per attached attribute */
    int freed;    /* the user freed the handle */
    mpii_attr_fn copy, del;
    void *extra;
} attr_keyval;

struct mpii_attr {
    mpii_attr *next;
    int keyval;
    void *val;
};

static util_htab attr_keyvals;
static int attr_inited;
/* values of the predefined communicator keys, pointed to by MPI_Comm_get_attr */
static int attr_predef_val[MPII_KEYVAL_PREDEF_LAST + 1];

static void attr_init(void)
{
    if (attr_inited)
        return;
    util_htab_init(&attr_keyvals, sizeof(attr_keyval), MPII_KEYVAL_PREDEF_LAST + 1);
    for (int i = 1; i <= MPII_KEYVAL_PREDEF_LAST; i++) {
        attr_keyval *k = util_htab_get(&attr_keyvals, i);
        k->kind = i <= MPI_APPNUM ? MPII_KIND_COMM : MPII_KIND_WIN;
        k->refcount = 1;
    }
    attr_inited = 1;
}

void mpii_attr_finalize(void)
{
    if (!attr_inited)
        return;
    util_htab_destroy(&attr_keyvals);
    attr_inited = 0;
}

static attr_keyval *attr_kv(int keyval)
{
    attr_init();
    attr_keyval *k = util_htab_get(&attr_keyvals, keyval);
    return k && k->kind ? k : NULL;
}

static void attr_kv_release(int keyval)
{
    attr_keyval *k = attr_kv(keyval);
    if (k && keyval > MPII_KEYVAL_PREDEF_LAST && --k->refcount == 0)
        util_htab_free(&attr_keyvals, keyval);
}

int mpii_keyval_create(int kind, mpii_attr_fn copy, mpii_attr_fn del, void *extra, int *keyval)
{
    attr_init();
    int idx;
    attr_keyval *k = util_htab_alloc(&attr_keyvals, &idx);
    k->kind = kind;
    k->refcount = 1;
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    *keyval = idx;
    return MPI_SUCCESS;
}

/* A keyval the user freed stays usable while attributes keep it alive (as
 * in MPICH: programs delete such attributes, or free the keyval again from
 * a delete callback or through a copy of the handle). */
int mpii_keyval_check(int kind, int keyval)
{
    attr_keyval *k = attr_kv(keyval);
    if (!k || k->kind != kind)
        return MPI_ERR_KEYVAL;
    return MPI_SUCCESS;
}

int mpii_keyval_free(int kind, int *keyval)
{
    if (mpii_keyval_check(kind, *keyval) != MPI_SUCCESS || *keyval <= MPII_KEYVAL_PREDEF_LAST)
        return MPI_ERR_KEYVAL;
    attr_keyval *k = attr_kv(*keyval);
    if (!k->freed) { /* later frees of the same keyval are no-ops */
        k->freed = 1;
        attr_kv_release(*keyval);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ---- callbacks ---------------------------------------------------------------------- */

static int attr_call_copy(const attr_keyval *k, int keyval, int oldh, void *in, void **out,
                          int *flag)
{
    *flag = 0;
    if (!k->copy)
        return MPI_SUCCESS;
    switch (k->kind) {
    case MPII_KIND_COMM:
        return ((MPI_Comm_copy_attr_function *)k->copy)(oldh, keyval, k->extra, in, out, flag);
    case MPII_KIND_DTYPE:
        return ((MPI_Type_copy_attr_function *)k->copy)(oldh, keyval, k->extra, in, out, flag);
    case MPII_KIND_WIN:
        return ((MPI_Win_copy_attr_function *)k->copy)(oldh, keyval, k->extra, in, out, flag);
    }
    return MPI_SUCCESS;
}

static int attr_call_delete(const attr_keyval *k, int keyval, int h, void *val)
{
    if (!k || !k->del)
        return MPI_SUCCESS;
    switch (k->kind) {
    case MPII_KIND_COMM:
        return ((MPI_Comm_delete_attr_function *)k->del)(h, keyval, val, k->extra);
    case MPII_KIND_DTYPE:
        return ((MPI_Type_delete_attr_function *)k->del)(h, keyval, val, k->extra);
    case MPII_KIND_WIN:
        return ((MPI_Win_delete_attr_function *)k->del)(h, keyval, val, k->extra);
    }
    return MPI_SUCCESS;
}

/* ---- lists -------------------------------------------------------------------------- */

static mpii_attr **attr_find(mpii_attr **list, int keyval)
{
    for (mpii_attr **p = list; *p; p = &(*p)->next)
        if ((*p)->keyval == keyval)
            return p;
    return NULL;
}

int mpii_attr_set(int handle, mpii_attr **list, int keyval, void *val)
{
    attr_keyval *k = attr_kv(keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    mpii_attr **p = attr_find(list, keyval);
    if (p) {
        int rc = attr_call_delete(k, keyval, handle, (*p)->val);
        if (rc != MPI_SUCCESS)
            return rc;
        (*p)->val = val;
        return MPI_SUCCESS;
    }
    mpii_attr *a = util_malloc(sizeof *a);
    a->keyval = keyval;
    a->val = val;
    a->next = *list;
    *list = a;
    k->refcount++;
    return MPI_SUCCESS;
}

int mpii_attr_get(int handle, mpii_attr *list, int keyval, void **val, int *flag)
{
    if (MPII_HANDLE_KIND(handle) == MPII_KIND_COMM && keyval >= MPI_TAG_UB &&
        keyval <= MPI_APPNUM) {
        attr_predef_val[MPI_TAG_UB] = MPII_TAG_UB;
        attr_predef_val[MPI_HOST] = MPI_PROC_NULL;
        attr_predef_val[MPI_IO] = MPI_ANY_SOURCE;
        attr_predef_val[MPI_WTIME_IS_GLOBAL] = 0;
        attr_predef_val[MPI_UNIVERSE_SIZE] = mpii_st.universe_size;
        attr_predef_val[MPI_LASTUSEDCODE] = mpii_errh_lastusedcode();
        attr_predef_val[MPI_APPNUM] = mpii_st.appnum;
        *val = &attr_predef_val[keyval];
        *flag = 1;
        return MPI_SUCCESS;
    }
    mpii_attr **p = attr_find(&list, keyval);
    *flag = p != NULL;
    if (p)
        *val = (*p)->val;
    return MPI_SUCCESS;
}

/* unlinks *p, runs its delete callback; on failure the node goes back */
static int attr_unlink_delete(int handle, mpii_attr **p)
{
    mpii_attr *a = *p;
    *p = a->next;
    int rc = attr_call_delete(attr_kv(a->keyval), a->keyval, handle, a->val);
    if (rc != MPI_SUCCESS) {
        a->next = *p;
        *p = a;
        return rc;
    }
    attr_kv_release(a->keyval);
    free(a);
    return MPI_SUCCESS;
}

int mpii_attr_delete(int handle, mpii_attr **list, int keyval)
{
    mpii_attr **p = attr_find(list, keyval);
    if (!p)
        return MPI_SUCCESS; /* nothing attached: nothing to do (as MPICH) */
    return attr_unlink_delete(handle, p);
}

int mpii_attr_delete_all(int objkind, int handle, mpii_attr **list)
{
    while (*list) {
        int rc = attr_unlink_delete(handle, list);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

void mpii_attr_drop_all(mpii_attr **list)
{
    while (*list) {
        mpii_attr *a = *list;
        *list = a->next;
        attr_kv_release(a->keyval);
        free(a);
    }
}

int mpii_attr_copy(int oldh, int newh, mpii_attr *src, mpii_attr **dst)
{
    mpii_attr **tail = dst;
    while (*tail)
        tail = &(*tail)->next;
    for (mpii_attr *a = src; a; a = a->next) {
        attr_keyval *k = attr_kv(a->keyval);
        if (!k)
            continue;
        void *out = NULL;
        int flag = 0;
        int rc = attr_call_copy(k, a->keyval, oldh, a->val, &out, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!flag)
            continue;
        mpii_attr *n = util_malloc(sizeof *n);
        n->keyval = a->keyval;
        n->val = out;
        n->next = NULL;
        *tail = n;
        tail = &n->next;
        k->refcount++;
    }
    return MPI_SUCCESS;
}

int mpii_attr_copy_comm(MPI_Comm oldh, MPI_Comm newh, mpii_attr *src, mpii_attr **dst)
{
    return mpii_attr_copy(oldh, newh, src, dst);
}
