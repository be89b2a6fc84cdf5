/* Unit test of the congestion control of TCP sockets that carry MPI data (src/util/net.c):
 * util_tcp_congestion sets it or says why not; util_tcp_data takes DCFA_TCP_CONGESTION for a
 * TCP socket, leaves other families alone, keeps the system's when the variable is unset,
 * and tells once (through util_net_say) a name the kernel does not have. */
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int errors;
static int said;
static char said_line[1024];

static void say(const char *line)
{
    said++;
    snprintf(said_line, sizeof said_line, "%s", line);
}

/* a connected TCP socket over loopback (its listener and accepted end closed) */
static int tcp_socket(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &al) != 0 ||
        connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("loopback TCP socket");
        exit(1);
    }
    int s = accept(l, NULL, NULL);
    close(l);
    if (s >= 0)
        close(s);
    return c;
}

static const char *cc_of(int fd)
{
    static char cc[32];
    socklen_t l = sizeof cc - 1;
    memset(cc, 0, sizeof cc);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &l) != 0)
        return "(none)";
    return cc;
}

static void expect_cc(int fd, const char *want, const char *what)
{
    if (strcmp(cc_of(fd), want) != 0) {
        fprintf(stderr, "%s: congestion control %s, want %s\n", what, cc_of(fd), want);
        errors++;
    }
}

int main(void)
{
    util_tunables_load();
    util_net_say = say;
    int probe = tcp_socket();
    char system_cc[32];
    snprintf(system_cc, sizeof system_cc, "%s", cc_of(probe));
    /* a name every kernel has (reno is built in), and one other than the system's */
    const char *other = strcmp(system_cc, "reno") == 0 ? "cubic" : "reno";

    if (util_tcp_congestion(probe, "reno") != 0) {
        fprintf(stderr, "util_tcp_congestion(reno) failed: %s\n", strerror(errno));
        errors++;
    }
    expect_cc(probe, "reno", "util_tcp_congestion(reno)");
    int rc = util_tcp_congestion(probe, "no-such-cc");
    if (rc != -ENOENT) {
        fprintf(stderr, "util_tcp_congestion(no-such-cc) gave %d, want -ENOENT\n", rc);
        errors++;
    }
    expect_cc(probe, "reno", "after a name the kernel does not have");

    unsetenv("DCFA_TCP_CONGESTION");
    int a = tcp_socket();
    util_tcp_data(a, 60);
    expect_cc(a, system_cc, "util_tcp_data without DCFA_TCP_CONGESTION");

    setenv("DCFA_TCP_CONGESTION", other, 1);
    int b = tcp_socket();
    util_tcp_data(b, 60);
    if (strcmp(other, "cubic") != 0 || util_tcp_congestion(probe, "cubic") == 0)
        expect_cc(b, other, "util_tcp_data with DCFA_TCP_CONGESTION");
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0) {
        util_tcp_data(sp[0], 60); /* not TCP: nothing, and nothing said */
        close(sp[0]);
        close(sp[1]);
    }
    if (said) {
        fprintf(stderr, "util_tcp_data said something for a name it could set: %s\n", said_line);
        errors++;
    }

    setenv("DCFA_TCP_CONGESTION", "no-such-cc", 1);
    int c = tcp_socket(), d = tcp_socket();
    util_tcp_data(c, 60);
    util_tcp_data(d, 60);
    expect_cc(c, system_cc, "util_tcp_data with a name the kernel does not have");
    if (said != 1 || !strstr(said_line, "DCFA_TCP_CONGESTION=no-such-cc") ||
        !strstr(said_line, "no congestion control of that name")) {
        fprintf(stderr, "a name the kernel does not have was said %d times (want once): '%s'\n",
                said, said_line);
        errors++;
    }
    close(probe);
    close(a);
    close(b);
    close(c);
    close(d);
    if (errors)
        fprintf(stderr, "test_tcp_cc: %d errors\n", errors);
    else
        printf("test_tcp_cc: ok\n");
    return errors ? 1 : 0;
}
