/* The MPI matching engine: posted receives and unexpected messages, matched
 * by (context, source, tag) with wildcards, in arrival order (non-overtaking:
 * per-pair order is the ring's order, and both queues are FIFO). */
#include "core/core_impl.h"

#include <stdlib.h>

static inline int core_matches(uint32_t pctx, int32_t psrc, int32_t ptag, uint32_t ctx, int32_t src,
                               int32_t tag)
{
    return pctx == ctx && (psrc == CORE_ANY_SOURCE || psrc == src) &&
           (ptag == CORE_ANY_TAG || ptag == tag);
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

/* ---- who may send what ------------------------------------------------------------
 * The connection knows the process; the header claims (ctx, src). They are
 * checked where it costs least: a posted receive for a specific source knows
 * its process (one comparison); a wildcard match or a message for the
 * unexpected queue asks the MPI layer's lookup. A context not known here yet
 * is held and its messages verified when it becomes known (at match time, and
 * in core_idle_check), or reported after DCFA_CTX_WAIT seconds. */

void core_set_peer_lookup(core_peer_fn fn) { core_s.peer_of = fn; }

static _Noreturn void core_forged(int lpid, uint32_t ctx, int32_t src, int owner)
{
    if (owner == CORE_PEER_NO_RANK)
        util_die("malformed packet from %s: it claims to be rank %d of context %u, "
                 "which has no such rank; aborting",
                 util_proc(lpid), src, ctx);
    util_die("malformed packet from %s: it claims to be rank %d of context %u, which is "
             "%s; aborting",
             util_proc(lpid), src, ctx, util_proc(owner));
}

static struct core_held *core_held_find(uint32_t ctx, int lpid)
{
    for (int i = 0; i < core_s.nheld; i++)
        if (core_s.held[i].ctx == ctx && core_s.held[i].lpid == lpid)
            return &core_s.held[i];
    return NULL;
}

static void core_hold(uint32_t ctx, int lpid)
{
    if (core_held_find(ctx, lpid))
        return;
    if (core_s.nheld == core_s.held_cap) {
        core_s.held_cap = core_s.held_cap ? 2 * core_s.held_cap : 8;
        core_s.held = util_realloc(core_s.held, (size_t)core_s.held_cap * sizeof *core_s.held);
    }
    core_s.held[core_s.nheld++] = (struct core_held){ctx, lpid, util_now_ns()};
}

core_req *core_match_arrival(core_conn *c, const wire_hdr *h)
{
    core_req *r = core_match_posted(h->ctx, h->src, h->tag);
    if (!core_s.peer_of)
        return r;
    if (r && r->u.recv.lpid >= 0) {
        if (r->u.recv.lpid != c->lpid)
            core_forged(c->lpid, h->ctx, h->src, r->u.recv.lpid);
        return r;
    }
    int owner = core_s.peer_of(h->ctx, h->src);
    if (owner == c->lpid)
        return r;
    if (owner == CORE_PEER_NO_CTX && !r) {
        core_hold(h->ctx, c->lpid);
        return NULL;
    }
    core_forged(c->lpid, h->ctx, h->src, owner);
}

/* an unexpected message that arrived while its context was unknown: check it now */
static void core_verify_held(const core_msg *m)
{
    if (!core_s.peer_of || m->lpid == core_s.self || !core_held_find(m->ctx, m->lpid))
        return;
    int owner = core_s.peer_of(m->ctx, m->src);
    if (owner != m->lpid && owner != CORE_PEER_NO_CTX)
        core_forged(m->lpid, m->ctx, m->src, owner);
}

void core_idle_check(void)
{
    uint64_t now = util_now_ns();
    for (int i = 0; i < core_s.nheld;) {
        struct core_held *hd = &core_s.held[i];
        if (core_s.peer_of && core_s.peer_of(hd->ctx, -1) != CORE_PEER_NO_CTX) {
            /* the communicator exists now: verify what waited for it, then forget the entry */
            for (util_qnode *n = core_s.unexpected.head.next; n != &core_s.unexpected.head;
                 n = n->next) {
                core_msg *m = UTIL_CONTAINER(n, core_msg, qn);
                if (m->ctx == hd->ctx && m->lpid == hd->lpid)
                    core_verify_held(m);
            }
            core_s.held[i] = core_s.held[--core_s.nheld];
            continue;
        }
        if (now - hd->since_ns > (uint64_t)util_cfg.ctx_wait * 1000000000u)
            util_die("%s sent messages for context %u, which no communicator of this "
                     "process has had for %d s (DCFA_CTX_WAIT); aborting",
                     util_proc(hd->lpid), hd->ctx, util_cfg.ctx_wait);
        i++;
    }
}

core_msg *core_match_unexpected(uint32_t ctx, int32_t src, int32_t tag, int remove)
{
    for (util_qnode *n = core_s.unexpected.head.next; n != &core_s.unexpected.head; n = n->next) {
        core_msg *m = UTIL_CONTAINER(n, core_msg, qn);
        if (core_matches(ctx, src, tag, m->ctx, m->src, m->tag)) {
            if (core_s.nheld)
                core_verify_held(m);
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
            (o->u.recv.src == CORE_ANY_SOURCE || o->u.recv.src == r->u.recv.src) &&
            (o->u.recv.tag == CORE_ANY_TAG || o->u.recv.tag == r->u.recv.tag))
            return 1;
    }
    return 0;
}
