/* Communicator bindings: argument checks, handle <-> object, then src/mpi/comm. */
#include "mpi/mpii.h"
#include "mpi/comm/comm.h"
#include "mpi/group/group.h"
#include "mpi/errhan/errhan.h"
#include "binding/impl.h"

#include <string.h>

static int comm_lookup(const char *fn, const char *arg, MPI_Comm h, mpii_comm **out)
{
    *out = mpii_comm_get(h);
    if (!*out)
        return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_COMM, fn, "%s: invalid communicator%s", arg,
                        h == MPI_COMM_NULL ? " (MPI_COMM_NULL)" : "");
    return MPI_SUCCESS;
}

static int comm_ptr(const char *fn, MPI_Comm h, const void *p, const char *arg)
{
    if (!p)
        return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_ARG, fn, "%s: NULL pointer", arg);
    return MPI_SUCCESS;
}

/* a failure of the mpi layer: an error class, or a code a user callback returned */
static int comm_fail(const char *fn, MPI_Comm h, int rc, const char *what)
{
    return mpii_err(MPII_OBJ_COMM, h, mpii_errh_callback_code(rc), fn, "%s (error %d)", what, rc);
}

static int comm_result(const char *fn, MPI_Comm parent, int rc, mpii_comm *n, MPI_Comm *newcomm)
{
    if (rc != MPI_SUCCESS)
        return comm_fail(fn, parent, rc, "could not build the new communicator");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int b_Comm_size(MPI_Comm comm, int *size)
{
    mpii_comm *c;
    int rc = comm_lookup("MPI_Comm_size", "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_size", comm, size, "size");
    if (rc != MPI_SUCCESS)
        return rc;
    *size = c->size;
    return MPI_SUCCESS;
}

int b_Comm_rank(MPI_Comm comm, int *rank)
{
    mpii_comm *c;
    int rc = comm_lookup("MPI_Comm_rank", "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_rank", comm, rank, "rank");
    if (rc != MPI_SUCCESS)
        return rc;
    *rank = c->rank;
    return MPI_SUCCESS;
}

int b_Comm_test_inter(MPI_Comm comm, int *flag)
{
    mpii_comm *c;
    int rc = comm_lookup("MPI_Comm_test_inter", "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_test_inter", comm, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    *flag = c->is_inter;
    return MPI_SUCCESS;
}

static int comm_lookup_inter(const char *fn, MPI_Comm comm, mpii_comm **c)
{
    int rc = comm_lookup(fn, "comm", comm, c);
    if (rc == MPI_SUCCESS && !(*c)->is_inter)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: not an inter-communicator");
    return rc;
}

static int comm_lookup_intra(const char *fn, const char *arg, MPI_Comm comm, mpii_comm **c)
{
    int rc = comm_lookup(fn, arg, comm, c);
    if (rc == MPI_SUCCESS && (*c)->is_inter)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn,
                      "%s: an inter-communicator is not allowed here", arg);
    return rc;
}

int b_Comm_remote_size(MPI_Comm comm, int *size)
{
    mpii_comm *c;
    int rc = comm_lookup_inter("MPI_Comm_remote_size", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_remote_size", comm, size, "size");
    if (rc != MPI_SUCCESS)
        return rc;
    *size = c->remote->size;
    return MPI_SUCCESS;
}

int b_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char fn[] = "MPI_Comm_compare";
    mpii_comm *a, *b;
    int rc = comm_lookup(fn, "comm1", comm1, &a);
    if (rc == MPI_SUCCESS)
        rc = comm_lookup(fn, "comm2", comm2, &b);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm1, result, "result");
    if (rc != MPI_SUCCESS)
        return rc;
    *result = mpii_comm_compare(a, b);
    return MPI_SUCCESS;
}

/* ---- constructors ------------------------------------------------------------------- */

static int comm_dup(const char *fn, MPI_Comm comm, MPI_Info info, int use_info, MPI_Comm *newcomm)
{
    mpii_comm *c, *n = NULL;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS && use_info && info != MPI_INFO_NULL &&
        MPII_HANDLE_KIND(info) != MPII_KIND_INFO)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: not an info object");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_dup(c, info, use_info, &n);
    return comm_result(fn, comm, rc, n, newcomm);
}

int b_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return comm_dup("MPI_Comm_dup", comm, MPI_INFO_NULL, 0, newcomm);
}

int b_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return comm_dup("MPI_Comm_dup_with_info", comm, info, 1, newcomm);
}

static int comm_idup(const char *fn, MPI_Comm comm, MPI_Info info, int use_info, MPI_Comm *newcomm,
                     MPI_Request *request)
{
    mpii_comm *c;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, request, "request");
    if (rc == MPI_SUCCESS && use_info && info != MPI_INFO_NULL &&
        MPII_HANDLE_KIND(info) != MPII_KIND_INFO)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: not an info object");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_idup(c, info, use_info, newcomm, request);
    if (rc != MPI_SUCCESS)
        return comm_fail(fn, comm, rc, "could not start the duplication");
    return MPI_SUCCESS;
}

int b_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return comm_idup("MPI_Comm_idup", comm, MPI_INFO_NULL, 0, newcomm, request);
}

int b_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return comm_idup("MPI_Comm_idup_with_info", comm, info, 1, newcomm, request);
}

int b_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split";
    mpii_comm *c, *n = NULL;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS && color < 0 && color != MPI_UNDEFINED)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                      "color=%d is invalid: it must be >= 0 or MPI_UNDEFINED", color);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_split(c, color, key, &n);
    return comm_result(fn, comm, rc, n, newcomm);
}

int b_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    mpii_comm *c, *n = NULL;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS && split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED &&
        split_type != MPI_COMM_TYPE_HW_GUIDED && split_type != MPI_COMM_TYPE_HW_UNGUIDED &&
        split_type != MPI_COMM_TYPE_RESOURCE_GUIDED && split_type != MPIX_COMM_TYPE_MODULE)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                      "split_type=%d is not MPI_UNDEFINED or an MPI_COMM_TYPE_* value", split_type);
    if (rc == MPI_SUCCESS && split_type == MPIX_COMM_TYPE_MODULE && c->is_inter)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn,
                      "split_type=MPIX_COMM_TYPE_MODULE needs an intra-communicator");
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL && MPII_HANDLE_KIND(info) != MPII_KIND_INFO)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: not an info object");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_split_type(c, split_type, key, info, &n);
    return comm_result(fn, comm, rc, n, newcomm);
}

/* group valid and a subset of the local group of c */
static int comm_check_subgroup(const char *fn, MPI_Comm comm, mpii_comm *c, MPI_Group group,
                               mpii_group **g)
{
    *g = mpii_group_get(group);
    if (!*g)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_GROUP, fn, "group: invalid group");
    if (!mpii_group_is_subset(*g, c->group))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_GROUP, fn,
                        "group: has processes that are not in the %sgroup of comm",
                        c->is_inter ? "local " : "");
    return MPI_SUCCESS;
}

int b_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    mpii_comm *c, *n = NULL;
    mpii_group *g = NULL;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = comm_check_subgroup(fn, comm, c, group, &g);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_create(c, g, &n);
    return comm_result(fn, comm, rc, n, newcomm);
}

int b_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    mpii_comm *c, *n = NULL;
    mpii_group *g = NULL;
    int rc = comm_lookup_intra(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = comm_check_subgroup(fn, comm, c, group, &g);
    if (rc == MPI_SUCCESS && (tag < 0 || tag > MPII_TAG_UB))
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TAG, fn, "tag=%d is outside 0..MPI_TAG_UB (%d)",
                      tag, MPII_TAG_UB);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_create_group(c, g, tag, &n);
    return comm_result(fn, comm, rc, n, newcomm);
}

int b_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                       int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    mpii_comm *lc, *pc = NULL, *n = NULL;
    int rc = comm_lookup_intra(fn, "local_comm", local_comm, &lc);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, local_comm, newintercomm, "newintercomm");
    if (rc == MPI_SUCCESS && (local_leader < 0 || local_leader >= lc->size))
        rc = mpii_err(MPII_OBJ_COMM, local_comm, MPI_ERR_RANK, fn,
                      "local_leader=%d is not a rank of local_comm (size %d)", local_leader,
                      lc->size);
    if (rc != MPI_SUCCESS)
        return rc;
    if (lc->rank == local_leader) { /* peer_comm, remote_leader and tag matter at the leader only */
        rc = comm_lookup(fn, "peer_comm", peer_comm, &pc);
        if (rc == MPI_SUCCESS && (remote_leader < 0 || remote_leader >= mpii_comm_peer_size(pc)))
            rc = mpii_err(MPII_OBJ_COMM, local_comm, MPI_ERR_RANK, fn,
                          "remote_leader=%d is not a rank of peer_comm (size %d)", remote_leader,
                          mpii_comm_peer_size(pc));
        if (rc == MPI_SUCCESS && (tag < 0 || tag > MPII_TAG_UB))
            rc = mpii_err(MPII_OBJ_COMM, local_comm, MPI_ERR_TAG, fn,
                          "tag=%d is outside 0..MPI_TAG_UB (%d)", tag, MPII_TAG_UB);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    rc = mpii_intercomm_create(lc, local_leader, pc, remote_leader, tag, &n);
    return comm_result(fn, local_comm, rc, n, newintercomm);
}

int b_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    mpii_comm *c, *n = NULL;
    int rc = comm_lookup_inter(fn, intercomm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, intercomm, newintracomm, "newintracomm");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_intercomm_merge(c, high, &n);
    return comm_result(fn, intercomm, rc, n, newintracomm);
}

int b_Comm_free(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_free";
    mpii_comm *c;
    int rc = comm_ptr(fn, MPI_COMM_NULL, comm, "comm");
    if (rc == MPI_SUCCESS)
        rc = comm_lookup(fn, "comm", *comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpii_err(MPII_OBJ_COMM, *comm, MPI_ERR_COMM, fn, "comm: %s cannot be freed",
                        *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    rc = mpii_comm_free(c);
    if (rc != MPI_SUCCESS)
        return comm_fail(fn, *comm, rc, "an attribute delete callback failed");
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---- names and info ----------------------------------------------------------------- */

int b_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    mpii_comm *c;
    int rc = comm_lookup("MPI_Comm_set_name", "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_set_name", comm, comm_name, "comm_name");
    if (rc != MPI_SUCCESS)
        return rc;
    size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(c->name, comm_name, n);
    c->name[n] = 0;
    return MPI_SUCCESS;
}

int b_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    mpii_comm *c;
    if (comm == MPI_COMM_NULL && comm_name && resultlen) {
        /* MPI 4.1: the null handle is named too */
        strcpy(comm_name, "MPI_COMM_NULL");
        *resultlen = (int)strlen(comm_name);
        return MPI_SUCCESS;
    }
    int rc = comm_lookup("MPI_Comm_get_name", "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_get_name", comm, comm_name, "comm_name");
    if (rc == MPI_SUCCESS)
        rc = comm_ptr("MPI_Comm_get_name", comm, resultlen, "resultlen");
    if (rc != MPI_SUCCESS)
        return rc;
    strcpy(comm_name, c->name);
    *resultlen = (int)strlen(c->name);
    return MPI_SUCCESS;
}

int b_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char fn[] = "MPI_Comm_set_info";
    mpii_comm *c;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL && MPII_HANDLE_KIND(info) != MPII_KIND_INFO)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: not an info object");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_comm_set_info(c, info);
    if (rc != MPI_SUCCESS)
        return comm_fail(fn, comm, rc, "could not copy info");
    return MPI_SUCCESS;
}

int b_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Comm_get_info";
    mpii_comm *c;
    int rc = comm_lookup(fn, "comm", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = comm_ptr(fn, comm, info_used, "info_used");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = c->info != MPI_INFO_NULL ? PMPI_Info_dup(c->info, info_used) : PMPI_Info_create(info_used);
    if (rc != MPI_SUCCESS)
        return comm_fail(fn, comm, rc, "could not copy info");
    return MPI_SUCCESS;
}

/* ---- from groups ---------------------------------------------------------------------- */

/* The errors of the *_from_group constructors go to the handler they were given (MPI 4.1
 * 7.4.2: it is also called for errors of the call); one that is not a communicator handler
 * is itself reported where object-less errors go. */
static int comm_from_group_args(const char *fn, const char *garg, MPI_Group group,
                                const char *stringtag, MPI_Info info, MPI_Errhandler eh,
                                mpii_group **g)
{
    if (eh != MPI_ERRHANDLER_NULL && !mpii_errh_usable(eh, MPII_ERRH_COMM))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn,
                        "errhandler: not an error handler for communicators");
    *g = mpii_group_get(group);
    if (!*g)
        return mpii_err(MPII_OBJ_ERRH, eh, MPI_ERR_GROUP, fn, "%s: invalid group", garg);
    if ((*g)->rank == MPI_UNDEFINED && (*g)->size > 0)
        return mpii_err(MPII_OBJ_ERRH, eh, MPI_ERR_GROUP, fn,
                        "%s: the calling process is not a member", garg);
    if (!stringtag)
        return mpii_err(MPII_OBJ_ERRH, eh, MPI_ERR_ARG, fn, "stringtag: NULL pointer");
    if (info != MPI_INFO_NULL && MPII_HANDLE_KIND(info) != MPII_KIND_INFO)
        return mpii_err(MPII_OBJ_ERRH, eh, MPI_ERR_INFO, fn, "info: not an info object");
    return MPI_SUCCESS;
}

/* the info and error handler the caller asked for */
static void comm_from_group_finish(mpii_comm *n, MPI_Info info, MPI_Errhandler eh)
{
    if (info != MPI_INFO_NULL)
        mpii_comm_set_info(n, info);
    if (eh != MPI_ERRHANDLER_NULL) {
        mpii_errh_ref(eh);
        mpii_errh_release(n->errhandler);
        n->errhandler = eh;
    }
}

int b_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                             MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    mpii_group *g = NULL;
    mpii_comm *n = NULL;
    int rc = comm_from_group_args(fn, "group", group, stringtag, info, errhandler, &g);
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI_GROUP_EMPTY (or any empty group): no communicator, as MPI_Comm_create_group */
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    rc = mpii_comm_create_from_group(g, stringtag, &n);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_ERRH, errhandler, mpii_errh_callback_code(rc), fn,
                        "could not build the new communicator (error %d)", rc);
    if (n)
        comm_from_group_finish(n, info, errhandler);
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int b_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                   int remote_leader, const char *stringtag, MPI_Info info,
                                   MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    mpii_group *lg = NULL, *rg = mpii_group_get(remote_group);
    mpii_comm *n = NULL;
    int rc = comm_from_group_args(fn, "local_group", local_group, stringtag, info, errhandler, &lg);
    if (rc != MPI_SUCCESS)
        return rc;
    if (lg->size == 0)
        return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_GROUP, fn,
                        "local_group: empty (the calling process is not a member)");
    if (!rg)
        return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_GROUP, fn,
                        "remote_group: invalid group");
    if (local_leader < 0 || local_leader >= lg->size)
        return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_RANK, fn,
                        "local_leader=%d is not a rank of local_group (size %d)", local_leader,
                        lg->size);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_RANK, fn,
                        "remote_leader=%d is not a rank of remote_group (size %d)", remote_leader,
                        rg->size);
    rc = mpii_intercomm_from_groups(lg, local_leader, rg, remote_leader, stringtag, &n);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_ERRH, errhandler, mpii_errh_callback_code(rc), fn,
                        "could not build the new inter-communicator (error %d)", rc);
    comm_from_group_finish(n, info, errhandler);
    *newintercomm = n->handle;
    return MPI_SUCCESS;
}
