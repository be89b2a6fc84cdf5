/* Requests made of other requests (MPI_Isendrecv, MPI_Isendrecv_replace) and
 * generalized requests (MPI_Grequest_*): both are completed by something other
 * than a single protocol, so they share one completion path,
 * mpii_req_finish_other(). */
#include "mpi/pt2pt/pt2pt.h"

#include <stdlib.h>
#include <string.h>

typedef struct mpii_compound {
    core_req *send, *recv;
    int pending;
    void *tmp;              /* Isendrecv_replace: the packed copy being sent */
} mpii_compound;

typedef struct mpii_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} mpii_greq;

static void mpii_compound_sub_done(core_req *sub)
{
    core_req *parent = sub->owner;
    mpii_compound *s = parent->u.other.state;
    if (--s->pending == 0)
        core_req_complete(parent);
}

static void mpii_compound_watch(core_req *parent, core_req *sub)
{
    mpii_compound *s = parent->u.other.state;
    if (sub->complete)
        return;
    s->pending++;
    sub->owner = parent;
    sub->on_complete = mpii_compound_sub_done;
}

int mpii_isendrecv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, int dest, int stag,
                   void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int src, int rtag, mpii_comm *c,
                   void *tmp, core_req **out)
{
    core_req *r = core_req_alloc(MPII_REQ_COLL);
    mpii_compound *s = util_calloc(1, sizeof *s);
    r->u.other.state = s;
    r->up.obj = c->handle;
    s->tmp = tmp;
    int rc = mpii_start_recv(rbuf, rcount, rdt, src, rtag, c, 0, &s->recv);
    if (rc == MPI_SUCCESS)
        rc = mpii_start_send(sbuf, scount, sdt, dest, stag, c, 0, CORE_SEND_STD, &s->send);
    if (rc != MPI_SUCCESS) {
        /* only a failed start of the send can leave a started receive behind */
        if (s->recv) {
            core_cancel_recv(s->recv);
            mpii_req_release(s->recv);
        }
        free(s->tmp);
        free(s);
        core_req_free(r);
        return rc;
    }
    mpii_compound_watch(r, s->recv);
    mpii_compound_watch(r, s->send);
    if (s->pending == 0)
        r->complete = 1;
    *out = r;
    return MPI_SUCCESS;
}

int mpii_greq_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                    MPI_Grequest_cancel_function *cancel, void *extra, core_req **out)
{
    core_req *r = core_req_alloc(MPII_REQ_GREQ);
    mpii_greq *g = util_calloc(1, sizeof *g);
    g->query = query;
    g->free_fn = free_fn;
    g->cancel = cancel;
    g->extra = extra;
    r->u.other.state = g;
    r->up.obj = MPI_COMM_WORLD;
    *out = r;
    return MPI_SUCCESS;
}

void mpii_greq_complete(core_req *r) { core_req_complete(r); }

int mpii_greq_cancel(core_req *r)
{
    mpii_greq *g = r->u.other.state;
    return g->cancel ? g->cancel(g->extra, r->complete) : MPI_SUCCESS;
}

int mpii_req_finish_other(core_req *r, MPI_Status *st)
{
    int err = MPI_SUCCESS;
    if (r->kind == MPII_REQ_GREQ) {
        mpii_greq *g = r->u.other.state;
        MPI_Status tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.MPI_SOURCE = MPI_UNDEFINED;
        tmp.MPI_TAG = MPI_UNDEFINED;
        if (g->query)
            err = g->query(g->extra, &tmp);
        if (st != MPI_STATUS_IGNORE) {
            int e = st->MPI_ERROR;
            *st = tmp;
            st->MPI_ERROR = e;
        }
        if (err == MPI_SUCCESS)
            err = tmp.MPI_ERROR;
        int ferr = g->free_fn ? g->free_fn(g->extra) : MPI_SUCCESS;
        if (err == MPI_SUCCESS)
            err = ferr;
        free(g);
        core_req_free(r);
        return err;
    }
    mpii_compound *s = r->u.other.state;
    if (st != MPI_STATUS_IGNORE)
        mpii_status_of(&s->recv->status, st);
    err = mpii_req_error(s->recv);
    if (err == MPI_SUCCESS)
        err = mpii_req_error(s->send);
    mpii_req_release(s->recv);
    mpii_req_release(s->send);
    free(s->tmp);
    free(s);
    core_req_free(r);
    return err;
}
