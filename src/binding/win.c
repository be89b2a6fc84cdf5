/* One-sided communication bindings (MPI 4.1 chapter 12): argument checks
 * that need no window state, handle conversion, then src/mpi/osc. */
#include "mpi/mpii.h"
#include "mpi/attr/attr.h"
#include "mpi/datatype/dtype_check.h"
#include "mpi/errhan/errhan.h"
#include "mpi/info/info.h"
#include "mpi/op/op.h"
#include "mpi/osc/osc.h"
#include "binding/impl.h"

#include <string.h>

/* ---- lookups ------------------------------------------------------------------------------- */

static int win_lookup(const char *fn, MPI_Win win, osc_win **w)
{
    *w = osc_win_get(win);
    if (!*w)
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_WIN, fn, "win: %s",
                        win == MPI_WIN_NULL ? "MPI_WIN_NULL" : "invalid window");
    return MPI_SUCCESS;
}

static int win_null_arg(const char *fn, osc_win *w, const void *p, const char *name)
{
    if (p)
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_ARG, fn, "%s: NULL pointer (%s)", name,
                    osc_win_label(w));
}

static int win_dtype(const char *fn, osc_win *w, MPI_Datatype dt, const char *name)
{
    const mpii_dtype *t = mpii_dtype_get(dt);
    if (t && t->committed)
        return MPI_SUCCESS;
    const char *why = NULL;
    if (mpii_dtype_check_comm(dt, &why) == MPI_SUCCESS)
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_TYPE, fn, "%s %s (%s)", name,
                    why + strlen("datatype:"), osc_win_label(w));
}

static int win_count(const char *fn, osc_win *w, MPI_Count n, const char *name)
{
    if (n >= 0)
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_COUNT, fn, "%s=%lld is negative (%s)",
                    name, (long long)n, osc_win_label(w));
}

/* ---- creation ------------------------------------------------------------------------------ */

static int win_new_checks(const char *fn, MPI_Comm comm, MPI_Info info, MPI_Aint size,
                          MPI_Aint disp_unit, const void *out, mpii_comm **c)
{
    *c = mpii_comm_get(comm);
    if (!*c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if ((*c)->is_inter)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn,
                        "comm: windows are made over intra-communicators");
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: not an info object");
    if (size < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_SIZE, fn, "size=%ld is negative", (long)size);
    if (disp_unit <= 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_DISP, fn, "disp_unit=%ld must be positive",
                        (long)disp_unit);
    if (!out)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "win: NULL pointer");
    return MPI_SUCCESS;
}

static int win_create(const char *fn, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                      MPI_Comm comm, MPI_Win *win)
{
    mpii_comm *c;
    int rc = win_new_checks(fn, comm, info, size, disp_unit, win, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!base && size > 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BASE, fn, "base: NULL with size=%ld",
                        (long)size);
    return osc_win_create(fn, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, c, NULL, win);
}

int b_Win_create(const char *fn, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                 MPI_Comm comm, MPI_Win *win)
{
    return win_create(fn, base, size, disp_unit, info, comm, win);
}

static int win_allocate(const char *fn, int flavor, MPI_Aint size, MPI_Aint disp_unit,
                        MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    mpii_comm *c;
    int rc = win_new_checks(fn, comm, info, size, disp_unit, win, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!baseptr)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "baseptr: NULL pointer");
    return osc_win_create(fn, flavor, NULL, size, disp_unit, info, c, baseptr, win);
}

int b_Win_allocate(const char *fn, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                   void *baseptr, MPI_Win *win)
{
    return win_allocate(fn, MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, info, comm, baseptr, win);
}
int b_Win_allocate_shared(const char *fn, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                          MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return win_allocate(fn, MPI_WIN_FLAVOR_SHARED, size, disp_unit, info, comm, baseptr, win);
}

int b_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    static const char fn[] = "MPI_Win_create_dynamic";
    mpii_comm *c;
    int rc = win_new_checks(fn, comm, info, 0, 1, win, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    return osc_win_create(fn, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, c, NULL, win);
}

int b_Win_shared_query(const char *fn, MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                       void *baseptr)
{
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, size, "size");
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, disp_unit, "disp_unit");
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, baseptr, "baseptr");
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= osc_win_size(w)))
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_RANK, fn,
                        "rank=%d is not a valid rank: the window has %d ranks (%s)", rank,
                        osc_win_size(w), osc_win_label(w));
    return osc_win_shared_query(fn, w, rank, size, disp_unit, baseptr);
}

int b_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fn[] = "MPI_Win_attach";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0)
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_SIZE, fn, "size=%ld is negative (%s)",
                        (long)size, osc_win_label(w));
    if (!base && size > 0)
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_BASE, fn, "base: NULL pointer (%s)",
                        osc_win_label(w));
    return osc_win_attach(fn, w, base, size);
}

int b_Win_detach(MPI_Win win, const void *base)
{
    static const char fn[] = "MPI_Win_detach";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    return osc_win_detach(fn, w, base);
}

int b_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    if (!win)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "win: NULL pointer");
    osc_win *w;
    int rc = win_lookup(fn, *win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = osc_win_free(fn, w);
    if (rc == MPI_SUCCESS)
        *win = MPI_WIN_NULL;
    return rc;
}

/* ---- group, info, name, attributes, error handlers --------------------------------------------
 */

int b_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char fn[] = "MPI_Win_get_group";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, group, "group");
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group *g = osc_win_group(w);
    mpii_group_ref(g);
    *group = g->handle;
    return MPI_SUCCESS;
}

int b_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char fn[] = "MPI_Win_set_info";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_INFO, fn, "info: not an info object (%s)",
                        osc_win_label(w));
    return osc_win_set_info(fn, w, info);
}

int b_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Win_get_info";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, info_used, "info_used");
    if (rc != MPI_SUCCESS)
        return rc;
    *info_used = osc_win_get_info(w);
    return MPI_SUCCESS;
}

int b_Win_set_name(MPI_Win win, const char *win_name)
{
    static const char fn[] = "MPI_Win_set_name";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, win_name, "win_name");
    if (rc != MPI_SUCCESS)
        return rc;
    char *name = osc_win_name(w);
    size_t n = strnlen(win_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(name, win_name, n);
    name[n] = 0;
    return MPI_SUCCESS;
}

int b_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    static const char fn[] = "MPI_Win_get_name";
    osc_win *w;
    if (win == MPI_WIN_NULL && win_name && resultlen) {
        /* MPI 4.1: the null handle is named too */
        strcpy(win_name, "MPI_WIN_NULL");
        *resultlen = (int)strlen(win_name);
        return MPI_SUCCESS;
    }
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, win_name, "win_name");
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, resultlen, "resultlen");
    if (rc != MPI_SUCCESS)
        return rc;
    strcpy(win_name, osc_win_name(w));
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}

static int win_keyval(const char *fn, osc_win *w, int keyval, int for_write)
{
    if (mpii_keyval_check(MPII_KIND_WIN, keyval) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_KEYVAL, fn,
                        "keyval=%d is not a valid window keyval (%s)", keyval, osc_win_label(w));
    if (for_write && keyval <= MPII_KEYVAL_PREDEF_LAST)
        return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_KEYVAL, fn,
                        "keyval=%d is a predefined attribute: it cannot be set or deleted (%s)",
                        keyval, osc_win_label(w));
    return MPI_SUCCESS;
}

static int win_attr_fail(const char *fn, osc_win *w, int rc)
{
    return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), mpii_errh_callback_code(rc), fn,
                    "an attribute callback returned error %d (%s)", rc, osc_win_label(w));
}

int b_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Win_set_attr";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_keyval(fn, w, keyval, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_attr_set(win, osc_win_attrs(w), keyval, attribute_val);
    return rc == MPI_SUCCESS ? rc : win_attr_fail(fn, w, rc);
}

int b_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_keyval(fn, w, keyval, 0);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, attribute_val, "attribute_val");
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    if (keyval <= MPII_KEYVAL_PREDEF_LAST) {
        *(void **)attribute_val = osc_win_predef_attr(w, keyval);
        *flag = 1;
        return MPI_SUCCESS;
    }
    return mpii_attr_get(win, *osc_win_attrs(w), keyval, (void **)attribute_val, flag);
}

int b_Win_delete_attr(MPI_Win win, int keyval)
{
    static const char fn[] = "MPI_Win_delete_attr";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_keyval(fn, w, keyval, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_attr_delete(win, osc_win_attrs(w), keyval);
    return rc == MPI_SUCCESS ? rc : win_attr_fail(fn, w, rc);
}

int b_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Win_set_errhandler";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mpii_errh_exists(errhandler))
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_ERRHANDLER, fn,
                        "errhandler: invalid error handler (%s)", osc_win_label(w));
    if (!mpii_errh_usable(errhandler, MPII_ERRH_WIN))
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_ARG, fn,
                        "errhandler: created for another kind of object (%s)", osc_win_label(w));
    osc_win_set_errhandler(w, errhandler);
    return MPI_SUCCESS;
}

int b_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Win_get_errhandler";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, errhandler, "errhandler");
    if (rc != MPI_SUCCESS)
        return rc;
    *errhandler = mpii_errh_or_default(osc_win_errhandler(w));
    mpii_errh_ref(*errhandler);
    return MPI_SUCCESS;
}

int b_Win_call_errhandler(MPI_Win win, int errorcode)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_call_errhandler", win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_errh_invoke(MPII_OBJ_WIN, win, mpii_errh_or_default(osc_win_errhandler(w)), errorcode);
    return MPI_SUCCESS;
}

/* ---- communication -------------------------------------------------------------------------- */

static int win_rma(const char *fn, MPI_Win win, osc_args *a, MPI_Request *req, int want_req)
{
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (want_req && (rc = win_null_arg(fn, w, req, "request")) != MPI_SUCCESS)
        return rc;
    if (a->kind == OSC_PUT || a->kind == OSC_ACC || a->kind == OSC_GACC) {
        if ((rc = win_count(fn, w, a->ocount, "origin_count")) != MPI_SUCCESS)
            return rc;
        if ((a->kind != OSC_GACC || a->op != MPI_NO_OP) &&
            (rc = win_dtype(fn, w, a->odt, "origin_datatype:")) != MPI_SUCCESS)
            return rc;
    }
    if (a->kind == OSC_GET || a->kind == OSC_GACC) {
        if ((rc = win_count(fn, w, a->rcount,
                            a->kind == OSC_GET ? "origin_count" : "result_count")) != MPI_SUCCESS)
            return rc;
        if ((rc = win_dtype(fn, w, a->rdt,
                            a->kind == OSC_GET ? "origin_datatype:" : "result_datatype:")) !=
            MPI_SUCCESS)
            return rc;
    }
    if ((rc = win_count(fn, w, a->tcount, "target_count")) != MPI_SUCCESS)
        return rc;
    if ((rc = win_dtype(fn, w, a->tdt, "target_datatype:")) != MPI_SUCCESS)
        return rc;
    if (a->kind >= OSC_ACC && !mpii_op_exists(a->op))
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_OP, fn, "op: invalid operation (%s)",
                        osc_win_label(w));
    if (a->kind == OSC_GACC && a->op == MPI_NO_OP) {
        a->ocount = 0;
        a->odt = a->tdt;
    }
    return osc_rma(fn, w, a, want_req ? req : NULL);
}

static int b_put(const char *fn, const void *oaddr, MPI_Count ocount, MPI_Datatype odt, int target,
                 MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *req,
                 int want_req)
{
    osc_args a = {.kind = OSC_PUT,
                  .obuf = oaddr,
                  .ocount = (MPI_Aint)ocount,
                  .odt = odt,
                  .target = target,
                  .disp = disp,
                  .tcount = (MPI_Aint)tcount,
                  .tdt = tdt,
                  .op = MPI_REPLACE};
    return win_rma(fn, win, &a, req, want_req);
}

static int b_get(const char *fn, void *oaddr, MPI_Count ocount, MPI_Datatype odt, int target,
                 MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *req,
                 int want_req)
{
    osc_args a = {.kind = OSC_GET,
                  .rbuf = oaddr,
                  .rcount = (MPI_Aint)ocount,
                  .rdt = odt,
                  .target = target,
                  .disp = disp,
                  .tcount = (MPI_Aint)tcount,
                  .tdt = tdt,
                  .op = MPI_NO_OP};
    return win_rma(fn, win, &a, req, want_req);
}

static int b_acc(const char *fn, const void *oaddr, MPI_Count ocount, MPI_Datatype odt, int target,
                 MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win,
                 MPI_Request *req, int want_req)
{
    osc_args a = {.kind = OSC_ACC,
                  .obuf = oaddr,
                  .ocount = (MPI_Aint)ocount,
                  .odt = odt,
                  .target = target,
                  .disp = disp,
                  .tcount = (MPI_Aint)tcount,
                  .tdt = tdt,
                  .op = op};
    return win_rma(fn, win, &a, req, want_req);
}

static int b_gacc(const char *fn, const void *oaddr, MPI_Count ocount, MPI_Datatype odt,
                  void *raddr, MPI_Count rcount, MPI_Datatype rdt, int target, MPI_Aint disp,
                  MPI_Count tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win, MPI_Request *req,
                  int want_req)
{
    osc_args a = {.kind = OSC_GACC,
                  .obuf = oaddr,
                  .ocount = (MPI_Aint)ocount,
                  .odt = odt,
                  .rbuf = raddr,
                  .rcount = (MPI_Aint)rcount,
                  .rdt = rdt,
                  .target = target,
                  .disp = disp,
                  .tcount = (MPI_Aint)tcount,
                  .tdt = tdt,
                  .op = op};
    return win_rma(fn, win, &a, req, want_req);
}

int b_Put(const char *fn, const void *origin_addr, MPI_Count origin_count,
          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return b_put(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, NULL, 0);
}
int b_Rput(const char *fn, const void *origin_addr, MPI_Count origin_count,
           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return b_put(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, request, 1);
}

int b_Get(const char *fn, void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
          MPI_Datatype target_datatype, MPI_Win win)
{
    return b_get(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, NULL, 0);
}
int b_Rget(const char *fn, void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
           int target_rank, MPI_Aint target_disp, MPI_Count target_count,
           MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return b_get(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, request, 1);
}

int b_Accumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                 MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return b_acc(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, op, win, NULL, 0);
}
int b_Raccumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                  MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                  MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                  MPI_Request *request)
{
    return b_acc(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, op, win, request, 1);
}

int b_Get_accumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                     MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                     MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                     MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return b_gacc(fn, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
                  NULL, 0);
}
int b_Rget_accumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                      MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                      MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                      MPI_Request *request)
{
    return b_gacc(fn, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
                  request, 1);
}

/* one predefined element; compare_and_swap: integer, logical, byte or one-byte character
 * (MPI_CHAR, as MPICH and Open MPI) types only */
static int win_elem_type(const char *fn, osc_win *w, MPI_Datatype dt, int cas)
{
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t || !t->predefined)
        return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_TYPE, fn,
                        "datatype: must be a predefined datatype (%s)", osc_win_label(w));
    if (cas && mpii_op_check(MPI_BAND, dt) != MPI_SUCCESS &&
        mpii_op_check(MPI_LAND, dt) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_WIN, osc_win_handle(w), MPI_ERR_TYPE, fn,
                        "datatype: compare-and-swap takes integer, character, logical and byte "
                        "types, not %s (%s)",
                        t->name, osc_win_label(w));
    return MPI_SUCCESS;
}

int b_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                   int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    static const char fn[] = "MPI_Fetch_and_op";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_elem_type(fn, w, datatype, 0);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, result_addr, "result_addr");
    if (rc == MPI_SUCCESS && !mpii_op_exists(op))
        rc = mpii_err(MPII_OBJ_WIN, win, MPI_ERR_OP, fn, "op: invalid operation (%s)",
                      osc_win_label(w));
    if (rc != MPI_SUCCESS)
        return rc;
    osc_args a = {.kind = OSC_FOP,
                  .obuf = origin_addr,
                  .ocount = op == MPI_NO_OP ? 0 : 1,
                  .odt = datatype,
                  .rbuf = result_addr,
                  .rcount = 1,
                  .rdt = datatype,
                  .target = target_rank,
                  .disp = target_disp,
                  .tcount = 1,
                  .tdt = datatype,
                  .op = op};
    return osc_rma(fn, w, &a, NULL);
}

int b_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                       MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    static const char fn[] = "MPI_Compare_and_swap";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_elem_type(fn, w, datatype, 1);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, origin_addr, "origin_addr");
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, compare_addr, "compare_addr");
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, result_addr, "result_addr");
    if (rc != MPI_SUCCESS)
        return rc;
    osc_args a = {.kind = OSC_CAS,
                  .obuf = origin_addr,
                  .ocount = 1,
                  .odt = datatype,
                  .rbuf = result_addr,
                  .rcount = 1,
                  .rdt = datatype,
                  .cbuf = compare_addr,
                  .target = target_rank,
                  .disp = target_disp,
                  .tcount = 1,
                  .tdt = datatype,
                  .op = MPI_REPLACE};
    return osc_rma(fn, w, &a, NULL);
}

/* ---- synchronisation --------------------------------------------------------------------------
 */

int b_Win_fence(int assert, MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_fence", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_fence("MPI_Win_fence", w, assert);
}
int b_Win_complete(MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_complete", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_complete("MPI_Win_complete", w);
}
int b_Win_wait(MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_wait", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_wait("MPI_Win_wait", w, NULL);
}
int b_Win_lock_all(int assert, MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_lock_all", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_lock_all("MPI_Win_lock_all", w, assert);
}
int b_Win_unlock_all(MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_unlock_all", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_unlock_all("MPI_Win_unlock_all", w);
}
int b_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_lock", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_lock("MPI_Win_lock", w, lock_type, rank, assert);
}
int b_Win_unlock(int rank, MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_unlock", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_unlock("MPI_Win_unlock", w, rank);
}
int b_Win_flush(int rank, MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_flush", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_flush("MPI_Win_flush", w, rank, 0);
}
int b_Win_flush_all(MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_flush_all", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_flush("MPI_Win_flush_all", w, OSC_ALL, 0);
}
int b_Win_flush_local(int rank, MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_flush_local", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_flush("MPI_Win_flush_local", w, rank, 1);
}
int b_Win_flush_local_all(MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_flush_local_all", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_flush("MPI_Win_flush_local_all", w, OSC_ALL, 1);
}
int b_Win_sync(MPI_Win win)
{
    osc_win *w;
    int rc = win_lookup("MPI_Win_sync", win, &w);
    return rc != MPI_SUCCESS ? rc : osc_sync("MPI_Win_sync", w);
}

int b_Win_test(MPI_Win win, int *flag)
{
    static const char fn[] = "MPI_Win_test";
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc == MPI_SUCCESS)
        rc = win_null_arg(fn, w, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    return osc_wait(fn, w, flag);
}

static int win_group_call(const char *fn, MPI_Win win, MPI_Group group, int assert, int post)
{
    osc_win *w;
    int rc = win_lookup(fn, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group *g = mpii_group_get(group);
    if (!g)
        return mpii_err(MPII_OBJ_WIN, win, MPI_ERR_GROUP, fn, "group: invalid group (%s)",
                        osc_win_label(w));
    return post ? osc_post(fn, w, g, assert) : osc_start(fn, w, g, assert);
}

int b_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    return win_group_call("MPI_Win_post", win, group, assert, 1);
}
int b_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    return win_group_call("MPI_Win_start", win, group, assert, 0);
}
