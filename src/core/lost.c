/* Messages lost with a connection through a gateway (docs/gateway.md, "Failure behaviour").
 *
 * A gateway daemon that dies takes the packets it held: a message whose send completed at
 * its end (eager) may never reach its receiver, and the receive posted for it would wait for
 * ever. On a fabric whose connections go through another host (FAB_CAP_ROUTE) the peer is
 * still alive and reachable through another gateway, so the pair tells each other what was
 * lost:
 *
 * - each end keeps the envelopes of the messages it sent and has not seen reported consumed
 *   (the credit that came back), oldest first (core_lost_log, core_lost_prune);
 * - when the connection is lost (core_lost_conn, from core_conn_lost) that list, the last
 *   message number received on it, and the receives for the peer that failed with it are kept
 *   for the pair, and the pair is connected again at the next progress pass
 *   (core_lost_progress: through a gateway still there, or marked unreachable);
 * - the new connection's first packets (WIRE_LOST, core_lost_greet) carry the list; the
 *   receiver (core_lost_arrived) turns each message it had not received into a lost message
 *   (CORE_MSG_LOST) that is matched like any other, in order, before anything sent on the new
 *   connection: the receive it matches fails with MPI_ERR_OTHER and a text naming the
 *   gateway. A lost message that a receive failed at the loss already stood for (a receive
 *   for the peer posted before the loss, failed by it) is not reported twice.
 */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct core_lost {
    int lpid;
    uint32_t rx_seq; /* the last message number received on the lost connection */
    wire_lost *env;  /* my messages it may have taken: sent with the next connection */
    int nenv;
    wire_lost *failed; /* receives for the peer that failed with it (ctx, src, tag) */
    int nfailed;
    int resync;    /* to be connected again (core_lost_progress) */
    int unreach;   /* that failed: no gateway reaches the peer any more */
    char why[400]; /* how the connection was lost */
    char *gone;    /* unreach: that and why no other way reaches the peer (the error's text) */
};

static struct core_lost *core_lost_find(int lpid)
{
    for (int i = 0; i < core_s.nlost; i++)
        if (core_s.lost[i].lpid == lpid)
            return &core_s.lost[i];
    return NULL;
}

void core_lost_log(core_conn *c, const wire_hdr *h)
{
    if (c->sent_head == c->sent_n && c->sent_head) /* empty: start over */
        c->sent_head = c->sent_n = 0;
    if (c->sent_n == c->sent_cap) {
        if (c->sent_head && c->sent_head >= c->sent_cap / 2) { /* half consumed: move down */
            memmove(c->sent, c->sent + c->sent_head, (c->sent_n - c->sent_head) * sizeof *c->sent);
            c->sent_n -= c->sent_head;
            c->sent_head = 0;
        } else {
            c->sent_cap = c->sent_cap ? 2 * c->sent_cap : 64;
            c->sent = util_realloc(c->sent, c->sent_cap * sizeof *c->sent);
        }
    }
    c->sent[c->sent_n++] = (struct core_sent){
        .end = c->tx_count, .env = {.seq = h->seq, .ctx = h->ctx, .src = h->src, .tag = h->tag}};
}

void core_lost_prune(core_conn *c)
{
    while (c->sent_head != c->sent_n && (int32_t)(c->credit_seen - c->sent[c->sent_head].end) >= 0)
        c->sent_head++;
}

void core_lost_conn(core_conn *c, const char *why)
{
    if (!(c->caps & FAB_CAP_ROUTE) || core_s.finalizing) {
        free(c->sent);
        c->sent = NULL;
        return;
    }
    struct core_lost *l = core_lost_find(c->lpid);
    if (!l) {
        core_s.lost = util_realloc(core_s.lost, (size_t)(core_s.nlost + 1) * sizeof *core_s.lost);
        l = &core_s.lost[core_s.nlost++];
        memset(l, 0, sizeof *l);
        l->lpid = c->lpid;
    }
    /* what an earlier loss left unsent is older than this connection's messages, and its
     * numbers are of another connection: it went with this connection's first packets
     * (core_lost_greet), so only this one's count */
    free(l->env);
    l->env = NULL;
    l->nenv = 0;
    uint32_t n = c->sent_n - c->sent_head;
    if (n) {
        l->env = util_malloc(n * sizeof *l->env);
        for (uint32_t i = 0; i < n; i++)
            l->env[i] = c->sent[c->sent_head + i].env;
        l->nenv = (int)n;
    }
    free(c->sent);
    c->sent = NULL;
    free(l->failed); /* (what a receive failed at an earlier loss stood for has come by now) */
    l->failed = NULL;
    l->nfailed = 0;
    l->rx_seq = c->rx_msg_seq;
    l->resync = 1;
    l->unreach = 0;
    free(l->gone);
    l->gone = NULL;
    snprintf(l->why, sizeof l->why, "%s", why);
    core_s.lost_resync = 1;
}

void core_lost_failed_recv(int lpid, const core_req *r)
{
    struct core_lost *l = core_lost_find(lpid);
    if (!l || !(r->u.recv.state == CORE_R_POSTED || r->u.recv.state == CORE_R_RTR))
        return;
    l->failed = util_realloc(l->failed, (size_t)(l->nfailed + 1) * sizeof *l->failed);
    l->failed[l->nfailed++] =
        (wire_lost){.ctx = r->u.recv.ctx, .src = r->u.recv.src, .tag = r->u.recv.tag};
}

void core_lost_greet(core_conn *c)
{
    struct core_lost *l = core_lost_find(c->lpid);
    if (!l || !l->nenv)
        return;
    size_t per = core_s.payload_max / sizeof(wire_lost);
    if (c->payload_max / sizeof(wire_lost) < per)
        per = c->payload_max / sizeof(wire_lost);
    for (int i = 0; i < l->nenv; i += (int)per) {
        size_t k = (size_t)(l->nenv - i) < per ? (size_t)(l->nenv - i) : per;
        core_conn_send_ctl(c, WIRE_LOST, 0, NULL, l->env + i, k * sizeof *l->env);
    }
    free(l->env);
    l->env = NULL;
    l->nenv = 0;
}

/* the text of the error of a receive that matches a lost message (its data) */
static char *core_lost_text(int lpid, int32_t tag, const char *why)
{
    char *t = util_malloc(700);
    snprintf(t, 700, "the message from %s (tag %d) was lost with its connection: %s",
             util_proc(lpid), tag, why);
    return t;
}

void core_lost_arrived(core_conn *c, const wire_lost *e, size_t n)
{
    struct core_lost *l = core_lost_find(c->lpid);
    if (!l) { /* a peer that lost a connection I never had: nothing of it can be missing here */
        util_log("%s reports %zu messages lost with a connection this process did not lose: "
                 "ignored",
                 util_proc(c->lpid), n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if ((int32_t)(e[i].seq - l->rx_seq) <= 0)
            continue; /* it arrived before the loss */
        int absorbed = 0;
        for (int k = 0; k < l->nfailed && !absorbed; k++) {
            const wire_lost *f = &l->failed[k];
            if (f->ctx == e[i].ctx && (f->src == CORE_ANY_SOURCE || f->src == e[i].src) &&
                (f->tag == CORE_ANY_TAG || f->tag == e[i].tag)) {
                memmove(&l->failed[k], &l->failed[k + 1], (size_t)(l->nfailed - k - 1) * sizeof *f);
                l->nfailed--;
                absorbed = 1;
            }
        }
        if (absorbed)
            continue;
        wire_hdr env = {.ctx = e[i].ctx, .src = e[i].src, .tag = e[i].tag};
        core_msg *m = util_calloc(1, sizeof *m);
        m->type = CORE_MSG_LOST;
        m->ctx = e[i].ctx;
        m->src = e[i].src;
        m->tag = e[i].tag;
        m->lpid = c->lpid;
        m->data = core_lost_text(l->lpid, e[i].tag, l->why);
        core_req *r = core_match_arrival(c, &env);
        if (r) {
            core_lost_recv(r, m);
            continue;
        }
        core_st.unexpected++;
        util_queue_push(&core_s.unexpected, &m->qn);
    }
}

void core_lost_fail_recv(core_req *r, int lpid, int32_t src, int32_t tag, const char *text)
{
    core_req_set_fail_text(r, text);
    r->u.recv.lpid = lpid;
    r->status.source = src;
    r->status.tag = tag;
    r->status.count = 0;
    r->status.error = UTIL_EUNREACH;
    core_req_mem_drop(r);
    core_recv_move(r, CORE_RE_LOST, CORE_R_DONE);
}

void core_lost_recv(core_req *r, core_msg *m)
{
    core_lost_fail_recv(r, m->lpid, m->src, m->tag, m->data);
    free(m->data);
    free(m);
    core_req_complete(r);
}

void core_lost_message(core_msg *m, const char *why)
{
    free(m->data);
    m->data = core_lost_text(m->lpid, m->tag, why);
    m->type = CORE_MSG_LOST;
    m->size = 0;
    m->flags = 0;
    m->seq = 0;
}

/* process lpid's rank in context ctx (one of its ranks, or of the remote group of an
 * inter-communicator), -1 if none: the MPI layer's lookup, rank by rank (a rare path) */
static int32_t core_ctx_rank(uint32_t ctx, int lpid)
{
    for (int32_t src = 0; core_s.peer_of && src < (1 << 24); src++) {
        int who = core_s.peer_of(ctx, src);
        if (who == lpid)
            return src;
        if (who < 0)
            break;
    }
    return -1;
}

/* The peer can no longer be reached: a receive from MPI_ANY_SOURCE posted before (in a
 * communicator that has the peer) may be waiting for a message the gateway took, of which no
 * report can come now. It fails with the loss's text, as a receive for that peer did (the
 * default error handler ends the job with it; before, it waited for ever). One posted later
 * is left to match the others' messages: its caller has been told by then. */
static void core_lost_any_source(struct core_lost *l)
{
    int *ids = NULL, n = 0;
    size_t len = strlen(l->gone) + 80;
    char *text = util_malloc(len);
    snprintf(text, len, "a receive from MPI_ANY_SOURCE may wait for a message that was lost: %s",
             l->gone);
    for (util_qnode *q = core_s.posted.head.next; q != &core_s.posted.head;) {
        core_req *r = UTIL_CONTAINER(q, core_req, qn);
        q = q->next;
        int32_t rank =
            r->u.recv.src == CORE_ANY_SOURCE ? core_ctx_rank(r->u.recv.ctx, l->lpid) : -1;
        if (rank < 0)
            continue;
        util_queue_remove(&r->qn); /* (posted: an RTR names its source) */
        core_lost_fail_recv(r, l->lpid, rank, r->u.recv.tag, text);
        ids = util_realloc(ids, (size_t)(n + 1) * sizeof *ids);
        ids[n++] = r->id;
    }
    for (int i = 0; i < n; i++) { /* completing runs the layer above */
        core_req *r = core_req_get(ids[i]);
        if (r)
            core_req_complete(r);
    }
    free(ids);
    free(text);
}

int core_lost_progress(void)
{
    core_s.lost_resync = 0;
    int events = 0;
    for (int i = 0; i < core_s.nlost; i++) {
        struct core_lost *l = &core_s.lost[i];
        if (!l->resync)
            continue;
        l->resync = 0;
        events++;
        if (core_s.conns[l->lpid] || core_s.finalizing)
            continue; /* made meanwhile (a message to the peer, or its first packet): greeted */
        if (!core_conn_get(l->lpid)) {
            /* the receives failed by the loss report it with the cause first (their text
             * is read when they return, after this pass) */
            l->unreach = 1;
            size_t len = strlen(l->why) + strlen(core_conn_failure_text()) + 40;
            l->gone = util_malloc(len);
            snprintf(l->gone, len, "%s, but none reaches it: %s", l->why, core_conn_failure_text());
            for (int id = 1; id < core_reqs.next_unused; id++) { /* those failed by the loss */
                core_req *r = core_req_get(id);
                if (r && (r->kind == CORE_REQ_SEND || r->kind == CORE_REQ_RECV) &&
                    r->status.error == UTIL_EUNREACH && r->fail_text &&
                    (r->kind == CORE_REQ_SEND ? r->u.send.lpid : r->u.recv.lpid) == l->lpid &&
                    strcmp(r->fail_text, l->why) == 0)
                    core_req_set_fail_text(r, l->gone);
            }
            util_log("no other way to %s after %s", util_proc(l->lpid), l->why);
            core_lost_any_source(l);
        }
    }
    return events;
}

const char *core_lost_unreachable(int lpid)
{
    const struct core_lost *l = core_s.nlost ? core_lost_find(lpid) : NULL;
    return l && l->unreach && !core_s.conns[lpid] ? l->gone : NULL;
}

void core_lost_close(void)
{
    for (int i = 0; i < core_s.nlost; i++) {
        free(core_s.lost[i].env);
        free(core_s.lost[i].failed);
        free(core_s.lost[i].gone);
    }
    free(core_s.lost);
    core_s.lost = NULL;
    core_s.nlost = 0;
    core_s.lost_resync = 0;
}
