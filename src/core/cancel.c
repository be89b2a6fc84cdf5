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
        r->status.dcfa_cancelled = 1;
        r->status.dcfa_count = 0;
        r->u.send.state = CORE_S_DONE;
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
            if (m->lpid == core_s.self && m->ctx == r->u.send.ctx && m->src == r->u.send.src &&
                m->tag == r->u.send.tag && m->size == r->u.send.bytes &&
                (m->local_send == r || !m->local_send)) {
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

void core_cancel_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
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
        util_die("malformed packet from process %d: CANCEL_ACK names request %u, which asked nothing",
                 c->lpid, d->req);
    core_cancel_decided(r, d->size != 0);
}
