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
 *   anything else              ->  ERR EINVAL <text>
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
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ASSIST_NS_SERVICE_MAX ASSIST_SERVICE_MAX
#define ASSIST_NS_PORT_MAX    ASSIST_PORT_MAX
#define ASSIST_NS_LINE_MAX    2048
#define ASSIST_NS_TIMEOUT_MS  10000 /* connect, send and answer */

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

/* Sends one request line (with its '\n') to the name server at addr and
 * reads its reply line into reply[cap] (without the '\n'). 0, or -errno
 * (-ETIMEDOUT after timeout_ms, -EPROTO for a reply that is no line). */
static inline int assist_ns_call(const char *addr, const char *req, char *reply, size_t cap,
                                 int timeout_ms)
{
    struct timespec end;
    size_t len = strlen(req), got = 0;
    int fd, rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (end.tv_nsec >= 1000000000) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000;
    }
    fd = assist_ns_connect(addr, &end);
    if (fd < 0)
        return fd;
    while (rc == 0 && len > 0) {
        ssize_t n = send(fd, req, len, MSG_NOSIGNAL);
        if (n > 0) {
            req += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EAGAIN) {
            rc = assist_ns_wait(fd, POLLOUT, &end);
        } else if (n < 0 && errno != EINTR) {
            rc = -errno;
        }
    }
    while (rc == 0) {
        char *nl;
        ssize_t n;
        if (got + 1 >= cap) {
            rc = -EPROTO;
            break;
        }
        n = recv(fd, reply + got, cap - 1 - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            rc = assist_ns_wait(fd, POLLIN, &end);
            continue;
        }
        if (n <= 0) {
            rc = n == 0 ? -EPROTO : -errno;
            break;
        }
        got += (size_t)n;
        reply[got] = '\0';
        nl = memchr(reply, '\n', got);
        if (nl != NULL) {
            *nl = '\0';
            break;
        }
    }
    close(fd);
    return rc;
}

/* The status of a reply line: 0 for "OK" (*rest: what follows "OK ", or
 * ""), else -EEXIST, -ENOENT, -EINVAL, -ENOSPC, -EBUSY for "ERR <CODE> ..."
 * (*rest: the text), -EPROTO for anything else. */
static inline int assist_ns_status(const char *reply, const char **rest)
{
    static const struct {
        const char *name;
        int code;
    } codes[] = {{"EEXIST", EEXIST},
                 {"ENOENT", ENOENT},
                 {"EINVAL", EINVAL},
                 {"ENOSPC", ENOSPC},
                 {"EBUSY", EBUSY}};

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
