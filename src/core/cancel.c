/* Cancelling a send (deprecated in MPI 4.1, still used by portable tests):
 * the sender asks the receiver to withdraw message `seq` if it is still
 * unmatched in the unexpected queue; the answer decides whether the send
 * completes as cancelled or as sent. The CANCEL follows the message through
 * the same ring, so the message has always arrived when it is examined. */
#include "core/core_impl.h"

#include <stdlib.h>

static void core_cancel_decided(core_req *r, int withdrawn)
{
    r->u.send.cancel = 2;
    if (withdrawn) {
        r->status.cancelled = 1;
        r->status.count = 0;
        core_send_move(r, CORE_SE_WITHDRAWN, CORE_S_DONE);
        core_req_complete(r);
    } else if (r->u.send.proto_done) {
        core_req_complete(r);
    }
}

int core_cancel_send(core_req *r)
{
    if (r->kind != CORE_REQ_SEND || r->u.send.cancel)
        return 0;
    if (r->u.send.lpid == core_s.self) {
        for (util_qnode *n = core_s.unexpected.head.next; n != &core_s.unexpected.head; n = n->next) {
            core_msg *m = UTIL_CONTAINER(n, core_msg, qn);
            /* this send's own message, not another of the same envelope
             * (once matched, by a receive or MPI_Mprobe, it is too late) */
            if (m->lpid == core_s.self && m->seq == r->u.send.seq) {
                util_queue_remove(n);
                free(m->data);
                free(m);
                r->complete = 0;
                r->u.send.cancel = 1;
                core_cancel_decided(r, 1);
                return 1;
            }
        }
        return 0;
    }
    core_conn *c = core_conn_get(r->u.send.lpid);
    if (!c)
        return 0;
    /* a send that already completed locally (eager) is reopened until the answer */
    r->u.send.proto_done = r->complete;
    r->complete = 0;
    r->u.send.cancel = 1;
    wire_done d = {.req = (uint32_t)r->id, .size = r->u.send.seq};
    core_conn_send_ctl(c, WIRE_CANCEL, 0, NULL, &d, sizeof d);
    return 1;
}

/* a receive with an RTR outstanding: ask the sender to forget the RTR first */
int core_cancel_rtr(core_req *r)
{
    if (r->u.recv.cancel)
        return 0;
    core_conn *c = core_conn_get(r->u.recv.lpid);
    if (!c)
        return 0;
    r->u.recv.cancel = 1;
    wire_done d = {.req = (uint32_t)r->id, .size = r->u.recv.rtr_seq};
    core_conn_send_ctl(c, WIRE_CANCEL, WIRE_F_RTR, NULL, &d, sizeof d);
    return 1;
}

static void core_cancel_rtr_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    if (h->type == WIRE_CANCEL) {
        int forgot = c->rtr_in.valid && c->rtr_in.seq == (uint32_t)d->size && c->rtr_in.req == d->req;
        if (forgot)
            c->rtr_in.valid = 0;
        wire_done a = {.req = d->req, .size = (uint64_t)forgot};
        core_conn_send_ctl(c, WIRE_CANCEL_ACK, WIRE_F_RTR, NULL, &a, sizeof a);
        return;
    }
    /* the answer may come after the receive completed by other means: then it is moot */
    core_req *r = core_req_get((int)d->req);
    if (!d->size || !r || r->kind != CORE_REQ_RECV || r->complete || !r->u.recv.cancel ||
        r->u.recv.state != CORE_R_RTR || c->rtr_out != r)
        return;
    /* the sender will never use the RTR: take the receive back */
    c->rtr_out = NULL;
    core_recv_move(r, CORE_RE_RTR_FORGOT, CORE_R_POSTED);
    core_cancel_recv(r);
}

void core_cancel_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    if (h->flags & WIRE_F_RTR) {
        core_cancel_rtr_arrived(c, h, d);
        return;
    }
    if (h->type == WIRE_CANCEL) {
        int withdrawn = 0;
        for (util_qnode *n = core_s.unexpected.head.next; n != &core_s.unexpected.head; n = n->next) {
            core_msg *m = UTIL_CONTAINER(n, core_msg, qn);
            if (m->lpid == c->lpid && m->seq == (uint32_t)d->size) {
                util_queue_remove(n);
                free(m->data);
                free(m);
                withdrawn = 1;
                break;
            }
        }
        wire_done a = {.req = d->req, .size = (uint64_t)withdrawn};
        core_conn_send_ctl(c, WIRE_CANCEL_ACK, 0, NULL, &a, sizeof a);
        return;
    }
    core_req *r = core_req_get((int)d->req);
    if (!r || r->kind != CORE_REQ_SEND || r->u.send.cancel != 1 || r->u.send.lpid != c->lpid)
        util_die("malformed packet from %s: CANCEL_ACK names request %u, which asked nothing",
                 util_proc(c->lpid), d->req);
    core_cancel_decided(r, d->size != 0);
}
