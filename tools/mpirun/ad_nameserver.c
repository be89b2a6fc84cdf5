/* ad: "mpirun --nameserver [--port N] [--bind ADDR]": a small TCP name
 * server that separate mpirun runs (DCFA_NAMESERVER=host:port in their
 * environment) and singletons share for MPI_Publish_name / MPI_Lookup_name.
 * Line protocol in src/assist/ns_wire.h and docs/launcher.md. It prints
 * "host:port" as its first line on stdout and serves until SIGTERM/SIGINT.
 *
 * Single-threaded, one poll() loop; every size is bounded: connections
 * (AD_NS_CLIENTS, idle ones closed after AD_NS_IDLE s), lines
 * (ASSIST_NS_LINE_MAX) and names (AD_NAMES_MAX). A malformed request gets an
 * "ERR EINVAL" reply; a line too long also closes its connection. */
#include "ad.h"
#include "assist/ns_wire.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define AD_NS_CLIENTS 256
#define AD_NS_IDLE    60.0 /* seconds a connection may stay silent */

struct ad_ns_client {
    int fd; /* -1: free slot */
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

static void ad_ns_request(struct ad_kvs *names, struct ad_ns_client *c, char *line)
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
    if (ntok == 0) {
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

static void ad_ns_input(struct ad_kvs *names, struct ad_ns_client *c)
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
        ad_ns_request(names, c, c->buf);
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
          "takes a free port; --bind ADDR listens on ADDR only (default: all, 0.0.0.0).\n"
          "Ends on SIGTERM or SIGINT.\n",
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
    const char *bind_addr = NULL, *port = "0";
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
    if (bind_addr != NULL)
        hints.ai_family = AF_UNSPEC;
    grc = getaddrinfo(bind_addr, port, &hints, &ai);
    if (grc != 0) {
        fprintf(stderr, "mpirun --nameserver: cannot use address '%s': %s\n",
                bind_addr ? bind_addr : "0.0.0.0", gai_strerror(grc));
        return 1;
    }
    lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(lfd, 128) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &salen) != 0) {
        fprintf(stderr, "mpirun --nameserver: cannot listen on %s port %s: %s\n",
                bind_addr ? bind_addr : "0.0.0.0", port, strerror(errno));
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
                clients[slot].fd = fd;
                clients[slot].len = 0;
                clients[slot].last = ad_now();
            } else {
                ad_ns_input(&names, &clients[map[k]]);
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
