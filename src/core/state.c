/* The state tables' names and the check's report (state.h). */
#include "core/core_impl.h"

const char *const core_send_state_names[CORE_S_N] = {
    [CORE_S_QUEUED] = "queued for credit",
    [CORE_S_ACK_WAIT] = "eager ssend waiting for ACK",
    [CORE_S_RNDV_WAIT] = "RTS sent, waiting for the receiver",
    [CORE_S_STREAM] = "streaming DATA",
    [CORE_S_DONE] = "done",
    [CORE_S_WRITING] = "writing into the receiver's buffer (RTR)",
    [CORE_S_WRITTEN] = "written, DONE waiting for credit",
};
const char *const core_recv_state_names[CORE_R_N] = {
    [CORE_R_POSTED] = "posted, no matching message yet",
    [CORE_R_RTR] = "posted, RTR sent",
    [CORE_R_READING] = "reading",
    [CORE_R_FRAGS] = "receiving DATA fragments",
    [CORE_R_DONE] = "done",
    [CORE_R_SPLIT] = "read its part, the sender writes the rest",
};
static const char *const core_send_ev_names[CORE_SE_N] = {
    [CORE_SE_EAGER] = "EAGER out",
    [CORE_SE_BACKLOG] = "no credit",
    [CORE_SE_ACK] = "ACK in",
    [CORE_SE_RTS] = "RTS out",
    [CORE_SE_DONE] = "DONE in",
    [CORE_SE_SPLIT_DONE] = "split part written",
    [CORE_SE_CTS] = "CTS in",
    [CORE_SE_STREAMED] = "last DATA out",
    [CORE_SE_WRITE] = "RTR write",
    [CORE_SE_WRITTEN] = "write ended",
    [CORE_SE_WRITE_FAILED] = "write failed",
    [CORE_SE_DONE_OUT] = "DONE out",
    [CORE_SE_WITHDRAWN] = "CANCEL_ACK in (withdrawn)",
    [CORE_SE_LOST] = "connection lost",
};
static const char *const core_recv_ev_names[CORE_RE_N] = {
    [CORE_RE_EAGER] = "EAGER matched",
    [CORE_RE_RTS] = "RTS matched",
    [CORE_RE_READ] = "read ended",
    [CORE_RE_REFUSED] = "read refused",
    [CORE_RE_SPLIT_DONE] = "DONE(SPLIT) in",
    [CORE_RE_DATA] = "last DATA in",
    [CORE_RE_RTR] = "RTR out",
    [CORE_RE_STALE] = "RTR stale",
    [CORE_RE_WRITTEN] = "DONE(RTR_DATA) in",
    [CORE_RE_RTR_FORGOT] = "CANCEL_ACK(RTR) in",
    [CORE_RE_CANCEL] = "cancelled",
    [CORE_RE_LOST] = "connection lost",
};

void core_move_illegal(const core_req *r, int from, int ev, int to)
{
    int send = r->kind == CORE_REQ_SEND;
    util_die("internal error: %s request %d in state \"%s\" cannot move on \"%s\" to \"%s\" "
             "(src/core/state.h)",
             send ? "send" : "receive", r->id,
             send ? core_send_state_names[from] : core_recv_state_names[from],
             send ? core_send_ev_names[ev] : core_recv_ev_names[ev],
             send ? core_send_state_names[to] : core_recv_state_names[to]);
}
