/* The protocol states of send and receive requests and the legal moves between
 * them (docs/protocol.md, "States"): a request moves only on an event (a packet
 * that arrives or leaves, or the end of a transfer of this process), and only as
 * the tables below allow. Every move goes through core_send_move/core_recv_move;
 * builds with DCFA_CHECK_STATES (CMake option, on in Debug and sanitizer builds)
 * check each one against the tables and end the process on any other, naming
 * the request, the state, the event and the target; other builds compile the
 * check away (a store, as without it). Adding a protocol: its states and events
 * here, its rows in the tables, its packets' handlers in its own file.
 * Only src/core includes this (through core_impl.h). */
#ifndef DCFA_CORE_STATE_H
#define DCFA_CORE_STATE_H

#include <stdint.h>

#include "core/core.h"

#ifndef DCFA_CHECK_STATES
#define DCFA_CHECK_STATES 0
#endif

/* send request states (core_req.u.send.state) */
enum core_send_state {
    CORE_S_QUEUED = 0, /* not sent yet: new, or in the backlog waiting for credit */
    CORE_S_ACK_WAIT,   /* eager ssend: waiting for ACK */
    CORE_S_RNDV_WAIT,  /* RTS sent: waiting for DONE or CTS */
    CORE_S_STREAM,     /* CTS received: sending DATA fragments */
    CORE_S_DONE,       /* complete */
    CORE_S_WRITING,    /* receiver-first: writing into the RTR buffer */
    CORE_S_WRITTEN,    /* receiver-first: written, DONE waits in the backlog */
    CORE_S_N
};
/* what moves a send, and the file that makes the move */
enum core_send_ev {
    CORE_SE_EAGER = 0,    /* EAGER out, or the message copied for a receive of my own (eager.c) */
    CORE_SE_BACKLOG,      /* no credit: EAGER or RTS waits in the backlog (eager.c, rndv_read.c) */
    CORE_SE_ACK,          /* ACK in, or my own synchronous message matched here (eager.c) */
    CORE_SE_RTS,          /* RTS out (rndv_read.c) */
    CORE_SE_DONE,         /* DONE in: the receiver read the message (rndv_read.c) */
    CORE_SE_SPLIT_DONE,   /* my part of a split written after the DONE came (rndv_split.c) */
    CORE_SE_CTS,          /* CTS in (rndv_copy.c) */
    CORE_SE_STREAMED,     /* the last DATA out (rndv_copy.c) */
    CORE_SE_WRITE,        /* writing into an RTR's buffer (rndv_write.c) */
    CORE_SE_WRITTEN,      /* the write ended; its DONE waits in the backlog (rndv_write.c) */
    CORE_SE_WRITE_FAILED, /* the write failed: RTS instead (rndv_write.c) */
    CORE_SE_DONE_OUT,     /* DONE(RTR_DATA) out (rndv_write.c) */
    CORE_SE_WITHDRAWN,    /* CANCEL_ACK in: the receiver withdrew the message (cancel.c) */
    CORE_SE_LOST,         /* the connection was lost: fails with an error (core.c) */
    CORE_SE_N
};
/* receive request states (core_req.u.recv.state) */
enum core_recv_state {
    CORE_R_POSTED = 0, /* new, or in the posted queue */
    CORE_R_RTR,        /* in the posted queue, RTR bound to rtr_seq outstanding */
    CORE_R_READING,    /* matched an RTS, bulk read in progress */
    CORE_R_FRAGS,      /* matched an RTS, CTS sent, DATA fragments arriving */
    CORE_R_DONE,       /* complete */
    CORE_R_SPLIT,      /* read my part of a split; the sender writes its part (rndv_split.c) */
    CORE_R_N
};
/* what moves a receive */
enum core_recv_ev {
    CORE_RE_EAGER = 0,  /* an EAGER matched, or a message of my own (eager.c) */
    CORE_RE_RTS,        /* an RTS matched: read it, or CTS out (rndv_read.c) */
    CORE_RE_READ,       /* my read ended (rndv_read.c; a split: rndv_split.c) */
    CORE_RE_REFUSED,    /* the fabric refused the read: CTS out, the copy path (rndv_read.c) */
    CORE_RE_SPLIT_DONE, /* DONE(SPLIT) in after my own part ended (rndv_split.c) */
    CORE_RE_DATA,       /* the last DATA in (rndv_copy.c) */
    CORE_RE_RTR,        /* RTR out (rndv_write.c) */
    CORE_RE_STALE,      /* the message the RTR was bound to came otherwise (rndv_write.c) */
    CORE_RE_WRITTEN,    /* DONE(RTR_DATA) in (rndv_write.c) */
    CORE_RE_RTR_FORGOT, /* CANCEL_ACK(RTR) in: the sender forgot the RTR (cancel.c) */
    CORE_RE_CANCEL,     /* cancelled while posted (core.c) */
    CORE_RE_LOST,       /* the connection to its peer was lost: fails with an error (core.c) */
    CORE_RE_N
};

/* a set of states, as a bit mask */
#define CORE_TO(state) (1u << (state))

/* The legal moves: [state][event] = the states the event may lead to (none: illegal). */
static const uint16_t core_send_moves[CORE_S_N][CORE_SE_N] = {
    [CORE_S_QUEUED] =
        {
            [CORE_SE_EAGER] = CORE_TO(CORE_S_DONE) | CORE_TO(CORE_S_ACK_WAIT),
            [CORE_SE_BACKLOG] = CORE_TO(CORE_S_QUEUED),
            [CORE_SE_RTS] = CORE_TO(CORE_S_RNDV_WAIT),
            [CORE_SE_WRITE] = CORE_TO(CORE_S_WRITING),
            [CORE_SE_LOST] = CORE_TO(CORE_S_DONE),
        },
    [CORE_S_ACK_WAIT] =
        {
            [CORE_SE_ACK] = CORE_TO(CORE_S_DONE),
            [CORE_SE_WITHDRAWN] = CORE_TO(CORE_S_DONE),
            [CORE_SE_LOST] = CORE_TO(CORE_S_DONE),
        },
    [CORE_S_RNDV_WAIT] =
        {
            [CORE_SE_DONE] = CORE_TO(CORE_S_DONE),
            [CORE_SE_SPLIT_DONE] = CORE_TO(CORE_S_DONE),
            [CORE_SE_CTS] = CORE_TO(CORE_S_STREAM),
            [CORE_SE_WITHDRAWN] = CORE_TO(CORE_S_DONE),
            [CORE_SE_LOST] = CORE_TO(CORE_S_DONE),
        },
    [CORE_S_STREAM] =
        {
            [CORE_SE_STREAMED] = CORE_TO(CORE_S_DONE),
            [CORE_SE_LOST] = CORE_TO(CORE_S_DONE),
        },
    /* an eager send, completed, then cancelled */
    [CORE_S_DONE] =
        {
            [CORE_SE_WITHDRAWN] = CORE_TO(CORE_S_DONE),
        },
    [CORE_S_WRITING] =
        {
            [CORE_SE_WRITTEN] = CORE_TO(CORE_S_WRITTEN),
            [CORE_SE_WRITE_FAILED] = CORE_TO(CORE_S_QUEUED),
            /* the write ended inside the call */
            [CORE_SE_DONE_OUT] = CORE_TO(CORE_S_DONE),
            [CORE_SE_LOST] = CORE_TO(CORE_S_DONE),
        },
    [CORE_S_WRITTEN] =
        {
            [CORE_SE_DONE_OUT] = CORE_TO(CORE_S_DONE),
            [CORE_SE_LOST] = CORE_TO(CORE_S_DONE),
        },
};
static const uint16_t core_recv_moves[CORE_R_N][CORE_RE_N] = {
    [CORE_R_POSTED] =
        {
            [CORE_RE_EAGER] = CORE_TO(CORE_R_DONE),
            [CORE_RE_RTS] = CORE_TO(CORE_R_READING) | CORE_TO(CORE_R_FRAGS),
            [CORE_RE_RTR] = CORE_TO(CORE_R_RTR),
            [CORE_RE_CANCEL] = CORE_TO(CORE_R_DONE),
            [CORE_RE_LOST] = CORE_TO(CORE_R_DONE),
        },
    [CORE_R_RTR] =
        {
            [CORE_RE_STALE] = CORE_TO(CORE_R_POSTED),
            [CORE_RE_WRITTEN] = CORE_TO(CORE_R_DONE),
            [CORE_RE_RTR_FORGOT] = CORE_TO(CORE_R_POSTED),
            [CORE_RE_LOST] = CORE_TO(CORE_R_DONE),
        },
    [CORE_R_READING] =
        {
            [CORE_RE_READ] = CORE_TO(CORE_R_DONE) | CORE_TO(CORE_R_SPLIT),
            [CORE_RE_REFUSED] = CORE_TO(CORE_R_FRAGS),
            [CORE_RE_LOST] = CORE_TO(CORE_R_DONE),
        },
    [CORE_R_FRAGS] =
        {
            [CORE_RE_DATA] = CORE_TO(CORE_R_DONE),
            [CORE_RE_LOST] = CORE_TO(CORE_R_DONE),
        },
    [CORE_R_SPLIT] =
        {
            [CORE_RE_SPLIT_DONE] = CORE_TO(CORE_R_DONE),
            /* my part was refused, the sender wrote its own */
            [CORE_RE_REFUSED] = CORE_TO(CORE_R_FRAGS),
            [CORE_RE_LOST] = CORE_TO(CORE_R_DONE),
        },
};

/* the check's report (state.c): ends the process */
_Noreturn void core_move_illegal(const core_req *r, int from, int ev, int to);
/* names for reports: the hang report (core_dump_pending) and the check's */
extern const char *const core_send_state_names[CORE_S_N];
extern const char *const core_recv_state_names[CORE_R_N];

/* the moves: a store, and in checking builds the check first */
static inline void core_send_move(core_req *r, enum core_send_ev ev, enum core_send_state to)
{
    if (DCFA_CHECK_STATES && !(core_send_moves[r->u.send.state][ev] & CORE_TO(to)))
        core_move_illegal(r, r->u.send.state, ev, to);
    r->u.send.state = to;
}
static inline void core_recv_move(core_req *r, enum core_recv_ev ev, enum core_recv_state to)
{
    if (DCFA_CHECK_STATES && !(core_recv_moves[r->u.recv.state][ev] & CORE_TO(to)))
        core_move_illegal(r, r->u.recv.state, ev, to);
    r->u.recv.state = to;
}

#endif
