/* ad: "mpirun --nameserver [--port N] [--bind ADDR]": a small TCP name
 * server that separate mpirun runs (DCFA_NAMESERVER=host:port in their
 * environment) and singletons share for MPI_Publish_name / MPI_Lookup_name.
 * Line protocol in src/assist/ns_wire.h and docs/launcher.md. It prints
 * "host:port" as its first line on stdout and serves until SIGTERM/SIGINT.
 *
 * Who may use it (docs/launcher.md, the trust model): it listens on
 * 127.0.0.1 unless --bind says otherwise, and answers a connection only when
 * it comes from a process of its own user on this host (a loopback peer
 * whose socket belongs to its uid, looked up in /proc/net/tcp: TCP carries
 * no credentials, SO_PEERCRED is for Unix sockets), or when the client first
 * sent "AUTH <secret>" with the secret of DCFA_NAMESERVER_SECRET; bound to
 * another address it needs that secret to start.
 *
 * Single-threaded, one poll() loop; every size is bounded: connections
 * (AD_NS_CLIENTS, idle ones closed after AD_NS_IDLE s), lines
 * (ASSIST_NS_LINE_MAX) and names (AD_NAMES_MAX). A malformed request gets an
 * "ERR EINVAL" reply; a line too long also closes its connection. */
#include "ad_nameserver.h"
#include "ad.h"
#include "assist/ns_wire.h"

#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <unistd.h>

#define AD_NS_CLIENTS 256
#define AD_NS_IDLE    60.0 /* seconds a connection may stay silent */

struct ad_ns_client {
    int fd;       /* -1: free slot */
    int admitted; /* its user's process here, or it sent the secret */
    size_t len;
    double last; /* time of its last request */
    char buf[ASSIST_NS_LINE_MAX];
};

static void ad_ns_close(struct ad_ns_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->len = 0;
    c->admitted = 0;
}

/* ---- who is asking --------------------------------------------------------------- */

static int ad_ns_loopback(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    if (a->ss_family == AF_INET6) {
        const struct in6_addr *v6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(v6) || (IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
    }
    return 0;
}

/* an endpoint as /proc/net/tcp{,6} prints it: the address's 32-bit words in memory
 * order as hex numbers, then the port */
static void ad_ns_proc_addr(const struct sockaddr_storage *a, char *out, size_t cap)
{
    uint32_t w[4];
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)a;
        memcpy(w, &v4->sin_addr, 4);
        snprintf(out, cap, "%08X:%04X", w[0], ntohs(v4->sin_port));
    } else {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)a;
        memcpy(w, &v6->sin6_addr, 16);
        snprintf(out, cap, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3], ntohs(v6->sin6_port));
    }
}

/* The owner of the socket whose local end is PEER and whose remote end is SELF, asked of
 * the kernel by its 4-tuple (NETLINK_SOCK_DIAG, one exact lookup). 0, -ENOENT when no such
 * socket, or another -errno when the kernel cannot answer. */
static int ad_ns_diag_uid(const struct sockaddr_storage *peer, const struct sockaddr_storage *self,
                          uid_t *uid)
{
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 r;
    } req;
    union {
        struct nlmsghdr nh;
        char buf[1024];
    } ans;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int fd, rc;

    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = sizeof(req);
    req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nh.nlmsg_flags = NLM_F_REQUEST;
    req.r.sdiag_family = (uint8_t)peer->ss_family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (peer->ss_family == AF_INET) {
        const struct sockaddr_in *p = (const struct sockaddr_in *)peer;
        const struct sockaddr_in *s = (const struct sockaddr_in *)self;
        req.r.id.idiag_sport = p->sin_port;
        req.r.id.idiag_dport = s->sin_port;
        memcpy(req.r.id.idiag_src, &p->sin_addr, 4);
        memcpy(req.r.id.idiag_dst, &s->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *p = (const struct sockaddr_in6 *)peer;
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)self;
        req.r.id.idiag_sport = p->sin6_port;
        req.r.id.idiag_dport = s->sin6_port;
        memcpy(req.r.id.idiag_src, &p->sin6_addr, 16);
        memcpy(req.r.id.idiag_dst, &s->sin6_addr, 16);
    }
    fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -errno;
    rc = -EIO;
    if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) ==
        (ssize_t)sizeof(req)) {
        struct timeval tv = {.tv_sec = 1};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        ssize_t n = recv(fd, &ans, sizeof(ans), 0);
        if (n >= (ssize_t)sizeof(struct nlmsghdr) && NLMSG_OK(&ans.nh, (size_t)n)) {
            if (ans.nh.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
                ans.nh.nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
                *uid = ((const struct inet_diag_msg *)NLMSG_DATA(&ans.nh))->idiag_uid;
                rc = 0;
            } else if (ans.nh.nlmsg_type == NLMSG_ERROR &&
                       ans.nh.nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
                int e = ((const struct nlmsgerr *)NLMSG_DATA(&ans.nh))->error;
                rc = e < 0 ? e : -EIO;
            }
        }
    }
    close(fd);
    return rc;
}

/* The uid of the process at the other end of an accepted loopback connection: the owner of
 * the socket whose local end is our peer and whose remote end is us. The kernel's sock_diag
 * answers for exactly that socket; /proc/net/tcp, where the kernel has no sock_diag, is
 * read as a listing that may miss a socket while others come and go, so it is read again
 * before the peer counts as unknown. 0 or -errno. */
static int ad_ns_peer_uid(int fd, uid_t *uid)
{
    struct sockaddr_storage peer, self;
    socklen_t pl = sizeof(peer), sl = sizeof(self);
    char want_local[64], want_rem[64], local[64], rem[64], line[512];
    unsigned u;
    int rc;

    if (getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 ||
        getsockname(fd, (struct sockaddr *)&self, &sl) != 0)
        return -errno;
    if ((peer.ss_family != AF_INET && peer.ss_family != AF_INET6) || !ad_ns_loopback(&peer))
        return -EPERM;
    rc = ad_ns_diag_uid(&peer, &self, uid);
    if (rc == 0 || rc == -ENOENT)
        return rc;
    ad_ns_proc_addr(&peer, want_local, sizeof(want_local));
    ad_ns_proc_addr(&self, want_rem, sizeof(want_rem));
    for (int pass = 0; pass < 3 && rc != 0; pass++) {
        FILE *f = fopen(peer.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6", "r");
        if (f == NULL)
            return -errno;
        rc = -ENOENT;
        while (rc != 0 && fgets(line, sizeof(line), f) != NULL)
            if (sscanf(line, "%*d: %63s %63s %*s %*s %*s %*s %u", local, rem, &u) == 3 &&
                strcasecmp(local, want_local) == 0 && strcasecmp(rem, want_rem) == 0) {
                *uid = (uid_t)u;
                rc = 0;
            }
        fclose(f);
    }
    return rc;
}

/* constant time in the length of the secret we hold */
static int ad_ns_secret_ok(const char *given, const char *secret)
{
    size_t n = strlen(secret), g = strlen(given);
    unsigned char diff = g != n;

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(secret[i] ^ (i < g ? given[i] : 0));
    return diff == 0;
}

/* Replies are one short line: a client that does not read them is dropped. */
static void ad_ns_reply(struct ad_ns_client *c, const char *text)
{
    size_t len = strlen(text);
    ssize_t n;

    do {
        n = send(c->fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)len)
        ad_ns_close(c);
}

static void ad_ns_request(struct ad_kvs *names, const char *secret, struct ad_ns_client *c,
                          char *line)
{
    char reply[ASSIST_NS_LINE_MAX + 64];
    char *tok[4] = {NULL, NULL, NULL, NULL};
    int ntok = 0;
    const char *port;

    line[strcspn(line, "\r")] = '\0';
    for (char *s = line; *s != '\0' && ntok < 4;) { /* fields: one space apart */
        tok[ntok++] = s;
        s += strcspn(s, " ");
        if (*s == ' ')
            *s++ = '\0';
    }
    if (ntok >= 1 && strcmp(tok[0], "AUTH") == 0) {
        if (secret != NULL && ntok == 2 && ad_ns_secret_ok(tok[1], secret)) {
            c->admitted = 1;
            ad_ns_reply(c, "OK\n");
        } else {
            ad_ns_reply(c, "ERR EACCES wrong secret\n");
            ad_ns_close(c);
        }
    } else if (!c->admitted) {
        ad_ns_reply(c, "ERR EACCES this name server answers its user's processes on its host, and "
                       "clients that send its secret (AUTH, DCFA_NAMESERVER_SECRET)\n");
        ad_ns_close(c);
    } else if (ntok == 0) {
        ad_ns_reply(c, "ERR EINVAL empty request\n");
    } else if (strcmp(tok[0], "PUBLISH") == 0 && ntok == 3 &&
               assist_ns_field_ok(tok[1], ASSIST_NS_SERVICE_MAX) &&
               assist_ns_field_ok(tok[2], ASSIST_NS_PORT_MAX)) {
        if (ad_kvs_get(names, tok[1]) != NULL) {
            snprintf(reply, sizeof(reply), "ERR EEXIST service '%s' is published already\n",
                     tok[1]);
            ad_ns_reply(c, reply);
        } else if (names->count >= AD_NAMES_MAX || ad_kvs_put(names, tok[1], tok[2]) != 0) {
            ad_ns_reply(c, "ERR ENOSPC the name table is full\n");
        } else {
            ad_ns_reply(c, "OK\n");
        }
    } else if ((strcmp(tok[0], "UNPUBLISH") == 0 || strcmp(tok[0], "LOOKUP") == 0) && ntok == 2 &&
               assist_ns_field_ok(tok[1], ASSIST_NS_SERVICE_MAX)) {
        int lookup = tok[0][0] == 'L';
        port = ad_kvs_get(names, tok[1]);
        if (port == NULL) {
            snprintf(reply, sizeof(reply), "ERR ENOENT service '%s' is not published\n", tok[1]);
        } else if (lookup) {
            snprintf(reply, sizeof(reply), "OK %s\n", port);
        } else {
            ad_kvs_del(names, tok[1]);
            snprintf(reply, sizeof(reply), "OK\n");
        }
        ad_ns_reply(c, reply);
    } else {
        ad_ns_reply(c, "ERR EINVAL expected PUBLISH <service> <port>, UNPUBLISH <service> or "
                       "LOOKUP <service> (no spaces or ';' in them)\n");
    }
}

static void ad_ns_input(struct ad_kvs *names, const char *secret, struct ad_ns_client *c)
{
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        ad_ns_close(c);
        return;
    }
    c->len += (size_t)n;
    c->last = ad_now();
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        size_t used;
        if (nl == NULL)
            break;
        *nl = '\0';
        used = (size_t)(nl + 1 - c->buf);
        ad_ns_request(names, secret, c, c->buf);
        if (c->fd < 0)
            return;
        c->len -= used;
        memmove(c->buf, c->buf + used, c->len);
    }
    if (c->len == sizeof(c->buf)) {
        ad_ns_reply(c, "ERR EINVAL line too long\n");
        ad_ns_close(c);
    }
}

static void ad_ns_usage(FILE *f)
{
    fputs("Usage: mpirun --nameserver [--port N] [--bind ADDR]\n"
          "Serves MPI_Publish_name/MPI_Lookup_name to the runs started with\n"
          "DCFA_NAMESERVER=host:port (the first line it prints). --port 0 (the default)\n"
          "takes a free port; --bind ADDR listens on ADDR (default 127.0.0.1; 0.0.0.0:\n"
          "every address). It answers its own user's processes on this host, and clients\n"
          "that give the secret of DCFA_NAMESERVER_SECRET (at least 16 characters, set\n"
          "for the server and the clients alike); bound to an address other hosts reach,\n"
          "it needs that secret. Ends on SIGTERM or SIGINT.\n",
          f);
}

/* The address to print: the bound one, else this host's name when it
 * resolves, else 127.0.0.1. */
static void ad_ns_host(const char *bind_addr, int family, char *out, size_t cap)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    char me[256] = "";

    if (bind_addr != NULL && strcmp(bind_addr, "0.0.0.0") != 0 && strcmp(bind_addr, "::") != 0) {
        snprintf(out, cap, family == AF_INET6 ? "[%s]" : "%s", bind_addr);
        return;
    }
    gethostname(me, sizeof(me) - 1);
    if (me[0] != '\0' && getaddrinfo(me, NULL, &hints, &ai) == 0) {
        freeaddrinfo(ai);
        snprintf(out, cap, "%s", me);
        return;
    }
    snprintf(out, cap, "127.0.0.1");
}

int ad_nameserver_main(int argc, char **argv)
{
    static struct ad_ns_client clients[AD_NS_CLIENTS];
    struct pollfd pfds[AD_NS_CLIENTS + 2];
    int map[AD_NS_CLIENTS + 2];
    struct addrinfo hints = {
        .ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    struct ad_kvs names;
    const char *bind_addr = "127.0.0.1", *port = "0";
    const char *secret = getenv(ASSIST_NS_SECRET_ENV);
    char host[300], portstr[16];
    sigset_t mask;
    int lfd = -1, sigfd = -1, one = 1, rc = 1, grc;
    long v;
    char *end;

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            ad_ns_usage(stdout);
            return 0;
        } else if ((strcmp(a, "--port") == 0 || strcmp(a, "-port") == 0) && i + 1 < argc) {
            port = argv[++i];
        } else if (strncmp(a, "--port=", 7) == 0) {
            port = a + 7;
        } else if ((strcmp(a, "--bind") == 0 || strcmp(a, "-bind") == 0) && i + 1 < argc) {
            bind_addr = argv[++i];
        } else if (strncmp(a, "--bind=", 7) == 0) {
            bind_addr = a + 7;
        } else {
            fprintf(stderr, "mpirun --nameserver: bad argument '%s'\n", a);
            ad_ns_usage(stderr);
            return 2;
        }
    }
    errno = 0;
    v = strtol(port, &end, 10);
    if (*port == '\0' || *end != '\0' || errno != 0 || v < 0 || v > 65535) {
        fprintf(stderr, "mpirun --nameserver: bad port '%s' (0 to 65535)\n", port);
        return 2;
    }
    if (secret != NULL && *secret == '\0')
        secret = NULL;
    if (secret != NULL && strlen(secret) < ASSIST_NS_SECRET_MIN) {
        fprintf(stderr, "mpirun --nameserver: %s has %zu characters, fewer than %d\n",
                ASSIST_NS_SECRET_ENV, strlen(secret), ASSIST_NS_SECRET_MIN);
        return 2;
    }
    hints.ai_family = AF_UNSPEC;
    grc = getaddrinfo(bind_addr, port, &hints, &ai);
    if (grc != 0) {
        fprintf(stderr, "mpirun --nameserver: cannot use address '%s': %s\n", bind_addr,
                gai_strerror(grc));
        return 1;
    }
    if (secret == NULL && !ad_ns_loopback((struct sockaddr_storage *)ai->ai_addr)) {
        fprintf(stderr,
                "mpirun --nameserver: --bind %s lets other hosts connect: set %s (a shared "
                "secret of at least %d characters, given to the clients too), or bind to "
                "127.0.0.1\n",
                bind_addr, ASSIST_NS_SECRET_ENV, ASSIST_NS_SECRET_MIN);
        freeaddrinfo(ai);
        return 2;
    }
    lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(lfd, 128) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &salen) != 0) {
        fprintf(stderr, "mpirun --nameserver: cannot listen on %s port %s: %s\n", bind_addr, port,
                strerror(errno));
        freeaddrinfo(ai);
        if (lfd >= 0)
            close(lfd);
        return 1;
    }
    ad_ns_host(bind_addr, ai->ai_family, host, sizeof(host));
    freeaddrinfo(ai);
    snprintf(portstr, sizeof(portstr), "%u",
             (unsigned)ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                      : ((struct sockaddr_in *)&sa)->sin_port));
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sigfd < 0 || ad_kvs_init(&names) != 0) {
        fprintf(stderr, "mpirun --nameserver: cannot start: %s\n", strerror(errno));
        close(lfd);
        return 1;
    }
    printf("%s:%s\n", host, portstr);
    fflush(stdout);
    for (int i = 0; i < AD_NS_CLIENTS; i++)
        clients[i].fd = -1;
    for (;;) {
        double now = ad_now(), next = 0;
        int n = 0, prc;
        pfds[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        map[n++] = -1;
        pfds[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
        map[n++] = -2;
        for (int i = 0; i < AD_NS_CLIENTS; i++) {
            if (clients[i].fd < 0)
                continue;
            if (now >= clients[i].last + AD_NS_IDLE) {
                ad_ns_close(&clients[i]);
                continue;
            }
            if (next == 0 || clients[i].last + AD_NS_IDLE < next)
                next = clients[i].last + AD_NS_IDLE;
            pfds[n] = (struct pollfd){.fd = clients[i].fd, .events = POLLIN};
            map[n++] = i;
        }
        prc = poll(pfds, (nfds_t)n, next > 0 ? (int)((next - now) * 1000.0) + 1 : -1);
        if (prc < 0 && errno != EINTR)
            break;
        for (int k = 0; prc > 0 && k < n; k++) {
            if (pfds[k].revents == 0)
                continue;
            if (map[k] == -1) {
                struct signalfd_siginfo si;
                if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo != SIGHUP) {
                    rc = 0;
                    goto out;
                }
            } else if (map[k] == -2) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                int slot = -1;
                if (fd < 0)
                    continue;
                for (int i = 0; i < AD_NS_CLIENTS && slot < 0; i++)
                    if (clients[i].fd < 0)
                        slot = i;
                if (slot < 0) {
                    struct ad_ns_client busy = {.fd = fd};
                    ad_ns_reply(&busy, "ERR EBUSY too many connections\n");
                    ad_ns_close(&busy);
                    continue;
                }
                uid_t uid = (uid_t)-1;
                clients[slot].fd = fd;
                clients[slot].len = 0;
                clients[slot].last = ad_now();
                clients[slot].admitted = ad_ns_peer_uid(fd, &uid) == 0 && uid == geteuid();
            } else {
                ad_ns_input(&names, secret, &clients[map[k]]);
            }
        }
    }
out:
    for (int i = 0; i < AD_NS_CLIENTS; i++)
        ad_ns_close(&clients[i]);
    close(lfd);
    close(sigfd);
    ad_kvs_destroy(&names);
    return rc;
}
