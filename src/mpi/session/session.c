/* MPI 4 sessions: a handle on the runtime without MPI_COMM_WORLD. Process
 * sets are the two the standard names, "mpi://WORLD" and "mpi://SELF"; a
 * communicator comes from a pset's group with MPI_Comm_create_from_group. */
#include "mpi/mpii.h"
#include "mpi/info/info.h"
#include "mpi/errhan/errhan.h"
#include "mpi/pt2pt/pt2pt.h"
#include "binding/impl.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int mpii_runtime_start(int required);   /* init.c */
void mpii_runtime_stop(void);

typedef struct mpii_session {
    int thread_level;
    MPI_Errhandler errh;
    MPI_Info info;
    mpii_bbuf *bbuf;        /* MPI_Session_attach_buffer */
} mpii_session;

static util_htab mpii_sessions;
static int mpii_sessions_ready;
static const char *const mpii_psets[] = {"mpi://WORLD", "mpi://SELF"};

static mpii_session *session_get(MPI_Session h)
{
    if (!mpii_sessions_ready || MPII_HANDLE_KIND(h) != MPII_KIND_SESSION)
        return NULL;
    return util_htab_get(&mpii_sessions, MPII_HANDLE_INDEX(h));
}

mpii_bbuf **mpii_session_bbuf(MPI_Session h)
{
    mpii_session *s = session_get(h);
    return s ? &s->bbuf : NULL;
}

MPI_Errhandler mpii_session_errh(MPI_Session h)
{
    mpii_session *s = session_get(h);
    return s ? s->errh : MPI_ERRHANDLER_NULL;
}

static int session_bad(const char *fn)
{
    return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_SESSION, fn, "session: invalid session handle");
}

static const char *const mpii_levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

/* Without a "thread_level" key a session asks for MPI_THREAD_MULTIPLE:
 * sessions are how libraries initialise MPI independently, possibly from
 * threads of their own (MPICH does the same; MPI 4.1 11.6 lets the level of
 * one session influence the others'). Errors go to the errhandler argument
 * (MPI 4.1 11.3.1). */
static int session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char fn[] = "MPI_Session_init";
    if (errhandler != MPI_ERRHANDLER_NULL && !mpii_errh_usable(errhandler, MPII_ERRH_SESSION))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn,
                        "errhandler: not an error handler for sessions");
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_INFO, fn, "info: invalid info object");
    int required = MPI_THREAD_MULTIPLE;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL)
        PMPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, val, &flag);
    if (flag) {
        required = -1;
        for (int l = 0; l < 4; l++)
            if (!strcasecmp(val, mpii_levels[l]))
                required = l;
        /* a value that is no thread level: MPI_ERR_OTHER, as MPICH */
        if (required < 0)
            return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_OTHER, fn,
                            "info thread_level='%s' is not MPI_THREAD_SINGLE, "
                            "MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE",
                            val);
    }
    int rc = mpii_runtime_start(required);
    if (rc == MPI_SUCCESS && !mpii_sessions_ready) {
        util_htab_init(&mpii_sessions, sizeof(mpii_session), 1);
        mpii_sessions_ready = 1;
    }
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_ERRH, errhandler, MPI_ERR_OTHER, fn,
                        "MPI_Finalize closed the fabrics and the daemon channel: no session can "
                        "start after it in this process");
    int idx;
    mpii_session *s = util_htab_alloc(&mpii_sessions, &idx);
    s->thread_level = required; /* every level is provided (the entry lock, async.c) */
    s->errh = errhandler;
    mpii_errh_ref(errhandler);
    s->info = mpii_info_new();
    mpii_info_set(s->info, "thread_level", mpii_levels[s->thread_level]);
    mpii_info_set(s->info, "mpi_memory_alloc_kinds", "mpi,system");
    *session = MPII_HANDLE(MPII_KIND_SESSION, idx);
    return MPI_SUCCESS;
}

int b_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    int held = mpii_entry_force();
    int rc = session_init(info, errhandler, session);
    if (held)
        mpii_entry_leave();
    return rc;
}

static int session_finalize(MPI_Session *session)
{
    mpii_session *s = session ? session_get(*session) : NULL;
    if (!s)
        return session_bad("MPI_Session_finalize");
    mpii_bbuf_drop(&s->bbuf);
    mpii_errh_release(s->errh);
    mpii_info_free(s->info);
    util_htab_free(&mpii_sessions, MPII_HANDLE_INDEX(*session));
    *session = MPI_SESSION_NULL;
    mpii_runtime_stop();
    return MPI_SUCCESS;
}

int b_Session_finalize(MPI_Session *session)
{
    int held = mpii_entry_force();
    int rc = session_finalize(session);
    if (held)
        mpii_entry_leave();
    return rc;
}

int b_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    if (!session_get(session))
        return session_bad("MPI_Session_get_num_psets");
    *npset_names = 2;
    return MPI_SUCCESS;
}

int b_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                           char *pset_name)
{
    if (!session_get(session))
        return session_bad("MPI_Session_get_nth_pset");
    if (n < 0 || n >= 2)
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ARG, "MPI_Session_get_nth_pset",
                        "n=%d: there are 2 process sets", n);
    /* *pset_len 0 asks for the length only, and pset_name may then be NULL */
    if (*pset_len > 0 && !pset_name)
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ARG, "MPI_Session_get_nth_pset",
                        "pset_name: NULL pointer with *pset_len=%d", *pset_len);
    int len = (int)strlen(mpii_psets[n]) + 1;
    if (*pset_len > 0)
        snprintf(pset_name, (size_t)*pset_len, "%s", mpii_psets[n]);
    *pset_len = len;
    return MPI_SUCCESS;
}

int b_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    mpii_session *s = session_get(session);
    if (!s)
        return session_bad("MPI_Session_get_info");
    *info_used = mpii_info_dup(s->info);
    return MPI_SUCCESS;
}

static int session_pset_index(const char *name)
{
    for (int i = 0; i < 2; i++)
        if (name && !strcasecmp(name, mpii_psets[i]))
            return i;
    return -1;
}

int b_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    if (!session_get(session))
        return session_bad("MPI_Session_get_pset_info");
    int i = session_pset_index(pset_name);
    if (i < 0)
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ARG, "MPI_Session_get_pset_info",
                        "pset_name='%s' is not a process set (mpi://WORLD, mpi://SELF)",
                        pset_name ? pset_name : "(null)");
    char size[32];
    snprintf(size, sizeof size, "%d", i == 0 ? mpii_st.world_size : 1);
    *info = mpii_info_new();
    mpii_info_set(*info, "mpi_size", size);
    return MPI_SUCCESS;
}

int b_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    if (!session_get(session))
        return session_bad("MPI_Group_from_session_pset");
    int i = session_pset_index(pset_name);
    if (i < 0)
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ARG, "MPI_Group_from_session_pset",
                        "pset_name='%s' is not a process set (mpi://WORLD, mpi://SELF)",
                        pset_name ? pset_name : "(null)");
    mpii_comm *c = mpii_comm_get(i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF);
    mpii_group *g = mpii_group_create(c->group->size, c->group->lpids);
    g->session = session;
    *newgroup = g->handle;
    return MPI_SUCCESS;
}

/* ---- error handlers ------------------------------------------------------------------ */

int b_Session_create_errhandler(MPI_Session_errhandler_function *f, MPI_Errhandler *eh)
{
    static const char fn[] = "MPI_Session_create_errhandler";
    if (!f)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "function: must not be NULL");
    if (!eh)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errhandler: NULL pointer");
    *eh = mpii_errh_create(MPII_ERRH_SESSION, (mpii_errh_fn)f);
    return MPI_SUCCESS;
}

int b_Session_set_errhandler(MPI_Session session, MPI_Errhandler eh)
{
    static const char fn[] = "MPI_Session_set_errhandler";
    mpii_session *s = session_get(session);
    if (!s)
        return session_bad(fn);
    if (!mpii_errh_exists(eh))
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ERRHANDLER, fn,
                        "errhandler: invalid error handler");
    if (!mpii_errh_usable(eh, MPII_ERRH_SESSION))
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ARG, fn,
                        "errhandler: created for another kind of object");
    mpii_errh_ref(eh);
    mpii_errh_release(s->errh);
    s->errh = eh;
    return MPI_SUCCESS;
}

int b_Session_get_errhandler(MPI_Session session, MPI_Errhandler *eh)
{
    static const char fn[] = "MPI_Session_get_errhandler";
    mpii_session *s = session_get(session);
    if (!s)
        return session_bad(fn);
    if (!eh)
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_ARG, fn, "errhandler: NULL pointer");
    mpii_errh_ref(s->errh);
    *eh = s->errh;
    return MPI_SUCCESS;
}

int b_Session_call_errhandler(MPI_Session session, int errorcode)
{
    mpii_session *s = session_get(session);
    if (!s)
        return session_bad("MPI_Session_call_errhandler");
    mpii_errh_invoke(MPII_OBJ_SESSION, session, s->errh, errorcode);
    return MPI_SUCCESS;
}
