/* Unit test of the request state tables (src/core/state.h, docs/protocol.md
 * "States"): every move names real states; every state but DONE has a way out,
 * and DONE can be reached from every state; DONE is left only by a cancel's
 * answer, to DONE; every state has a name for the hang report. Then the check
 * itself (this file is built with DCFA_CHECK_STATES=1, test/unit/CMakeLists.txt):
 * legal moves pass and store the state, an illegal move ends the process
 * (status 1) with a message naming the request, both states and the event. */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
            fails++;                                             \
        }                                                        \
    } while (0)

/* moves[from * nev + ev]: the table of one kind, walked as a graph */
static void check_table(const char *kind, const uint16_t *moves, int nstates, int nev, int done,
                        const char *const *names)
{
    for (int s = 0; s < nstates; s++) {
        CHECK(names[s] && names[s][0], "%s state %d has no name", kind, s);
        int out = 0;
        for (int e = 0; e < nev; e++) {
            unsigned to = moves[s * nev + e];
            CHECK((to >> nstates) == 0, "%s: state %d on event %d leads to no state (%#x)", kind, s,
                  e, to);
            out |= (to & ~CORE_TO(s)) != 0;
            if (s == done)
                CHECK(to == 0 || to == CORE_TO(done), "%s: DONE left on event %d (%#x)", kind, e,
                      to);
        }
        CHECK(s == done || out, "%s state %s has no way out", kind, names[s]);
    }
    /* DONE reached from every state: the states that can reach it, grown to a fixed point */
    unsigned reach = CORE_TO(done), before;
    do {
        before = reach;
        for (int s = 0; s < nstates; s++)
            for (int e = 0; e < nev; e++)
                if (moves[s * nev + e] & reach)
                    reach |= CORE_TO(s);
    } while (reach != before);
    CHECK(reach == (1u << nstates) - 1, "%s: DONE is not reached from states %#x", kind,
          ~reach & ((1u << nstates) - 1));
}

/* in a child: an illegal move must end it with the check's message */
static void check_illegal(int send)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        perror("pipe");
        exit(2);
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 2);
        core_req r = {.kind = send ? CORE_REQ_SEND : CORE_REQ_RECV, .id = 42};
        if (send)
            core_send_move(&r, CORE_SE_CTS, CORE_S_STREAM); /* a CTS for a send not waiting */
        else
            core_recv_move(&r, CORE_RE_DATA, CORE_R_DONE); /* DATA for a receive just posted */
        _exit(0);
    }
    close(pipefd[1]);
    char out[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(pipefd[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)n;
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "illegal %s move: status %#x",
          send ? "send" : "receive", status);
    const char *want = send ? "send request 42 in state \"queued for credit\" cannot move on \"CTS "
                              "in\" to \"streaming DATA\""
                            : "receive request 42 in state \"posted, no matching message yet\" "
                              "cannot move on \"last DATA in\" to \"done\"";
    CHECK(strstr(out, want), "illegal %s move reported as '%s'", send ? "send" : "receive", out);
}

int main(void)
{
    check_table("send", &core_send_moves[0][0], CORE_S_N, CORE_SE_N, CORE_S_DONE,
                core_send_state_names);
    check_table("receive", &core_recv_moves[0][0], CORE_R_N, CORE_RE_N, CORE_R_DONE,
                core_recv_state_names);

    /* legal moves store the state */
    core_req s = {.kind = CORE_REQ_SEND, .id = 1};
    core_send_move(&s, CORE_SE_RTS, CORE_S_RNDV_WAIT);
    core_send_move(&s, CORE_SE_CTS, CORE_S_STREAM);
    core_send_move(&s, CORE_SE_STREAMED, CORE_S_DONE);
    CHECK(s.u.send.state == CORE_S_DONE, "send state %d after RTS, CTS, DATA", s.u.send.state);
    core_req r = {.kind = CORE_REQ_RECV, .id = 2};
    core_recv_move(&r, CORE_RE_RTS, CORE_R_READING);
    core_recv_move(&r, CORE_RE_READ, CORE_R_SPLIT);
    core_recv_move(&r, CORE_RE_SPLIT_DONE, CORE_R_DONE);
    CHECK(r.u.recv.state == CORE_R_DONE, "receive state %d after RTS, read, DONE(SPLIT)",
          r.u.recv.state);

    check_illegal(1);
    check_illegal(0);
    if (fails)
        return 1;
    printf("test_states: OK\n");
    return 0;
}
