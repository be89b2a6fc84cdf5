/* The MPI matching engine: posted receives and unexpected messages, matched
 * by (context, source, tag) with wildcards, in arrival order (non-overtaking:
 * per-pair order is the ring's order, and both queues are FIFO). */
#include "core/core_impl.h"

static inline int core_matches(uint32_t pctx, int32_t psrc, int32_t ptag, uint32_t ctx, int32_t src,
                               int32_t tag)
{
    return pctx == ctx && (psrc == MPI_ANY_SOURCE || psrc == src) &&
           (ptag == MPI_ANY_TAG || ptag == tag);
}

core_req *core_match_posted(uint32_t ctx, int32_t src, int32_t tag)
{
    for (util_qnode *n = core_s.posted.head.next; n != &core_s.posted.head; n = n->next) {
        core_req *r = UTIL_CONTAINER(n, core_req, qn);
        if (core_matches(r->u.recv.ctx, r->u.recv.src, r->u.recv.tag, ctx, src, tag)) {
            util_queue_remove(n);
            return r;
        }
    }
    return NULL;
}

core_msg *core_match_unexpected(uint32_t ctx, int32_t src, int32_t tag, int remove)
{
    for (util_qnode *n = core_s.unexpected.head.next; n != &core_s.unexpected.head; n = n->next) {
        core_msg *m = UTIL_CONTAINER(n, core_msg, qn);
        if (core_matches(ctx, src, tag, m->ctx, m->src, m->tag)) {
            if (remove)
                util_queue_remove(n);
            return m;
        }
    }
    return NULL;
}

/* Receiver-first is allowed only if no earlier receive could take the message */
int core_posted_blocks_rtr(const core_req *r)
{
    for (util_qnode *n = core_s.posted.head.next; n != &r->qn && n != &core_s.posted.head; n = n->next) {
        core_req *o = UTIL_CONTAINER(n, core_req, qn);
        if (o->u.recv.ctx == r->u.recv.ctx &&
            (o->u.recv.src == MPI_ANY_SOURCE || o->u.recv.src == r->u.recv.src) &&
            (o->u.recv.tag == MPI_ANY_TAG || o->u.recv.tag == r->u.recv.tag))
            return 1;
    }
    return 0;
}
