/* The name server's line protocol (mpirun --nameserver, docs/launcher.md),
 * shared by its clients: the library's singleton client (src/assist) and the
 * assist daemon when DCFA_NAMESERVER is set (tools/mpirun). Header-only
 * because mpirun does not link libmpi.
 *
 * A client connects over TCP and sends lines; each gets one reply line:
 *
 *   PUBLISH <service> <port>   ->  OK | ERR EEXIST <text>
 *   UNPUBLISH <service>        ->  OK | ERR ENOENT <text>
 *   LOOKUP <service>           ->  OK <port> | ERR ENOENT <text>
 *   AUTH <secret>              ->  OK | ERR EACCES <text> (and the connection closes)
 *   anything else              ->  ERR EINVAL <text>
 *
 * The server answers requests only from a process of its own user on this
 * host (a loopback connection whose socket belongs to its uid) or from a
 * client that sent AUTH with its secret first; others get ERR EACCES and
 * the connection closes. A client sends AUTH when DCFA_NAMESERVER_SECRET
 * is set (docs/launcher.md, "Name service": the trust model).
 *
 * Fields are separated by one space; a service is 1..ASSIST_NS_SERVICE_MAX
 * and a port 1..ASSIST_NS_PORT_MAX printable ASCII characters without spaces
 * or ';' (so that both PMI wire formats carry them). A line
 * is at most ASSIST_NS_LINE_MAX bytes with its '\n'. Other errors: ENOSPC
 * (table full), EBUSY (too many connections).
 */
#ifndef DCFA_ASSIST_NS_WIRE_H
#define DCFA_ASSIST_NS_WIRE_H

#include "assist/assist.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ASSIST_NS_SERVICE_MAX ASSIST_SERVICE_MAX
#define ASSIST_NS_PORT_MAX    ASSIST_PORT_MAX
#define ASSIST_NS_LINE_MAX    2048
#define ASSIST_NS_TIMEOUT_MS  10000 /* connect, send and answer */
#define ASSIST_NS_SECRET_ENV  "DCFA_NAMESERVER_SECRET"
#define ASSIST_NS_SECRET_MIN  16 /* characters */

/* 1 when s is a valid service (maxlen ASSIST_NS_SERVICE_MAX) or port. */
static inline int assist_ns_field_ok(const char *s, size_t maxlen)
{
    size_t n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n > maxlen)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f || s[i] == ';')
            return 0;
    return 1;
}

static inline int assist_ns_ms_left(const struct timespec *end)
{
    struct timespec now;
    long ms;

    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (long)(end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
    return ms > 0 ? (int)ms : 0;
}

/* Waits for events on fd until end; 0, or -ETIMEDOUT / -errno. */
static inline int assist_ns_wait(int fd, short events, const struct timespec *end)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events};
        int ms = assist_ns_ms_left(end);
        int n = ms > 0 ? poll(&pfd, 1, ms) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        return n == 0 ? -ETIMEDOUT : 0;
    }
}

/* Connects to addr ("host:port") within the deadline; an fd or -errno. */
static inline int assist_ns_connect(const char *addr, const struct timespec *end)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    int rc = -ECONNREFUSED;
    size_t hlen;

    if (colon == NULL || colon == addr || colon[1] == '\0')
        return -EINVAL;
    hlen = (size_t)(colon - addr);
    if (addr[0] == '[' && hlen >= 2 && addr[hlen - 1] == ']') { /* [v6]:port */
        addr++;
        hlen -= 2;
    }
    if (hlen >= sizeof(host))
        return -EINVAL;
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
        return -EHOSTUNREACH;
    for (struct addrinfo *a = ai; a != NULL; a = a->ai_next) {
        int fd =
            socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        int err = 0;
        socklen_t elen = sizeof(err);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
            rc = -errno;
            close(fd);
            continue;
        }
        rc = assist_ns_wait(fd, POLLOUT, end);
        if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err != 0)
            rc = -err;
        if (rc == 0) {
            freeaddrinfo(ai);
            return fd;
        }
        close(fd);
    }
    freeaddrinfo(ai);
    return rc;
}

/* Reads one reply line from fd into reply[cap] (without the '\n'), at most until end;
 * what follows it stays in the socket. 0, or -errno (-EPROTO: no line). */
static inline int assist_ns_read_line(int fd, char *reply, size_t cap, const struct timespec *end)
{
    size_t got = 0;
    int rc = 0;

    while (rc == 0) {
        ssize_t n;
        if (got + 1 >= cap)
            return -EPROTO;
        n = recv(fd, reply + got, 1, 0); /* byte by byte: two replies may come together */
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            rc = assist_ns_wait(fd, POLLIN, end);
            continue;
        }
        if (n <= 0)
            return n == 0 ? -EPROTO : -errno;
        if (reply[got] == '\n') {
            reply[got] = '\0';
            return 0;
        }
        got++;
        reply[got] = '\0';
    }
    return rc;
}

/* Sends one request line (with its '\n') to the name server at addr and
 * reads its reply line into reply[cap] (without the '\n'); with
 * DCFA_NAMESERVER_SECRET set, "AUTH <secret>" goes first (its "OK" is not
 * returned; a refusal is, with -EACCES). 0, or -errno (-ETIMEDOUT after
 * timeout_ms, -EPROTO for a reply that is no line). */
static inline int assist_ns_call(const char *addr, const char *req, char *reply, size_t cap,
                                 int timeout_ms)
{
    struct timespec end;
    const char *secret = getenv(ASSIST_NS_SECRET_ENV);
    char auth[ASSIST_NS_LINE_MAX];
    size_t len, alen = 0;
    int fd, rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (end.tv_nsec >= 1000000000) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000;
    }
    if (secret != NULL && *secret != '\0') {
        int n = snprintf(auth, sizeof(auth), "AUTH %s\n", secret);
        if (n < 0 || (size_t)n >= sizeof(auth))
            return -EINVAL;
        alen = (size_t)n;
    }
    fd = assist_ns_connect(addr, &end);
    if (fd < 0)
        return fd;
    for (int part = alen > 0 ? 0 : 1; rc == 0 && part < 2; part++) {
        const char *p = part == 0 ? auth : req;
        len = part == 0 ? alen : strlen(req);
        while (rc == 0 && len > 0) {
            ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
            if (n > 0) {
                p += n;
                len -= (size_t)n;
            } else if (n < 0 && errno == EAGAIN) {
                rc = assist_ns_wait(fd, POLLOUT, &end);
            } else if (n < 0 && errno != EINTR) {
                rc = -errno;
            }
        }
    }
    if (rc == 0 && alen > 0) {
        rc = assist_ns_read_line(fd, reply, cap, &end); /* AUTH's */
        if (rc == 0 && strcmp(reply, "OK") != 0) {      /* refused: that is the answer */
            close(fd);
            return 0;
        }
    }
    if (rc == 0)
        rc = assist_ns_read_line(fd, reply, cap, &end);
    close(fd);
    return rc;
}

/* The status of a reply line: 0 for "OK" (*rest: what follows "OK ", or
 * ""), else -EEXIST, -ENOENT, -EINVAL, -ENOSPC, -EBUSY, -EACCES for "ERR <CODE> ..."
 * (*rest: the text), -EPROTO for anything else. */
static inline int assist_ns_status(const char *reply, const char **rest)
{
    static const struct {
        const char *name;
        int code;
    } codes[] = {{"EEXIST", EEXIST}, {"ENOENT", ENOENT}, {"EINVAL", EINVAL},
                 {"ENOSPC", ENOSPC}, {"EBUSY", EBUSY},   {"EACCES", EACCES}};

    *rest = "";
    if (strcmp(reply, "OK") == 0)
        return 0;
    if (strncmp(reply, "OK ", 3) == 0) {
        *rest = reply + 3;
        return 0;
    }
    if (strncmp(reply, "ERR ", 4) != 0)
        return -EPROTO;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        size_t n = strlen(codes[i].name);
        if (strncmp(reply + 4, codes[i].name, n) == 0 &&
            (reply[4 + n] == ' ' || reply[4 + n] == '\0')) {
            *rest = reply[4 + n] == ' ' ? reply + 5 + n : "";
            return -codes[i].code;
        }
    }
    return -EPROTO;
}

#endif
