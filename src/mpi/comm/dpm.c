/* Dynamic processes (MPI 4.1 chapter 11; docs/dpm.md): ports, accept and
 * connect, join, spawn, disconnect.
 *
 * Everything that joins two groups of processes comes down to one step: the
 * two roots hold a connected socket, and the inter-communicator is built over
 * it as MPI_Intercomm_create builds one over a peer communicator
 * (mpii_intercomm_join): the roots swap their groups' names and fabric
 * addresses ("cards") and agree on a context pair, every member learns the
 * other group. Data connections are made later, on first use, by the fabrics.
 *
 *   - a port is a TCP listener of the process that opened it; its name
 *     "dcfa-port:<address>:<tcp port>:<nonce>" carries a random nonce the
 *     connecting side must present, so a stray connection is refused;
 *   - MPI_Comm_accept takes the next connection on the port that presents its
 *     nonce; MPI_Comm_connect opens one (MPI_ERR_PORT if nobody listens);
 *   - MPI_Comm_join uses the user's socket itself;
 *   - MPI_Comm_spawn: the root opens a port, asks the process manager to
 *     start the children with the port's name under PARENT_ROOT_PORT_NAME
 *     (one command over the assist channel), and accepts; the children's
 *     MPI_Init connects to it and gives MPI_Comm_get_parent.
 *
 * While a root waits on a socket it keeps the library progressing and
 * yields (the backoff), as every wait does. */
#include "core/core.h"
#include "fabric/gw/gw_dial.h"
#include "mpi/mpii.h"
#include "mpi/comm/comm.h"
#include "mpi/comm/dpm.h"
#include "mpi/group/group.h"
#include "mpi/info/info.h"
#include "assist/assist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DPM_MAGIC      0x44504d31u /* "DPM1" */
#define DPM_PORT_MAX   64          /* ports open at once in one process */
#define DPM_PARENT_KEY "PARENT_ROOT_PORT_NAME"

typedef struct dpm_port {
    int fd; /* the listener, -1: slot free */
    uint64_t nonce;
    char path[108]; /* a Unix-domain port's socket file (isolated ranks), "" for TCP */
    char name[MPI_MAX_PORT_NAME];
} dpm_port;

static struct {
    dpm_port ports[DPM_PORT_MAX];
    MPI_Comm parent;
    const char *waiting; /* what a root waits for on a socket (the hang report) */
} dpm = {.parent = MPI_COMM_NULL};

/* the hello a connecting root sends: the port's nonce */
typedef struct dpm_hello {
    uint32_t magic;
    uint32_t pad;
    uint64_t nonce;
} dpm_hello;

/* ---- sockets that keep the library progressing ---------------------------------------- */

/* wait until fd is ready for events (or a timeout in ms, < 0: none); progress meanwhile.
 * The peer is often a process still starting (a spawned child, the other job's root): the
 * wait sleeps in poll() between progress calls, 1 ms at a time, rather than spinning, so
 * that it never holds a core that process needs (on a busy node a spinning waiter cost
 * each socket round trip its whole DCFA_SPIN_US). 1 ready, 0 timed out, negative errno */
static int dpm_wait_fd(int fd, short events, int timeout_ms)
{
    util_backoff b;
    util_backoff_reset(&b);
    uint64_t end = timeout_ms >= 0 ? util_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
    for (;;) {
        int n = util_backoff_wait_fd(&b, fd, events, core_progress() == 0 ? 1 : 0);
        if (n != 0)
            return n;
        if (end && util_now_ns() >= end)
            return 0;
    }
}

int mpii_sock_swap(int fd, const void *s, size_t slen, void *r, size_t rlen)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) {
        mpii_cause("the connection's socket %d is not open: %m", fd);
        return MPI_ERR_OTHER;
    }
    if (!(flags & O_NONBLOCK))
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    size_t sent = 0, got = 0;
    int rc = MPI_SUCCESS;
    while (sent < slen || got < rlen) {
        short ev = (short)((sent < slen ? POLLOUT : 0) | (got < rlen ? POLLIN : 0));
        int w = dpm_wait_fd(fd, ev, -1);
        if (w < 0) {
            rc = MPI_ERR_OTHER;
            break;
        }
        if (sent < slen) {
            ssize_t n = send(fd, (const char *)s + sent, slen - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                mpii_cause("sending to the other group's root failed: %m");
                rc = MPI_ERR_OTHER;
                break;
            }
        }
        if (got < rlen) {
            ssize_t n = recv(fd, (char *)r + got, rlen - got, 0);
            if (n > 0) {
                got += (size_t)n;
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                mpii_cause("the other group's root closed the connection%s%s", n ? ": " : "",
                           n ? strerror(errno) : "");
                rc = MPI_ERR_OTHER;
                break;
            }
        }
    }
    if (!(flags & O_NONBLOCK))
        fcntl(fd, F_SETFL, flags);
    return rc;
}

/* ---- ports ------------------------------------------------------------------------------ */

/* the address other hosts reach this one at: DCFA_PORT_ADDR, else the first IPv4 address of an
 * interface that is up and not loopback, else loopback */
static void dpm_my_address(char *buf, size_t len)
{
    const char *env = getenv("DCFA_PORT_ADDR");
    if (env && *env && strlen(env) < len && !strchr(env, ':')) {
        snprintf(buf, len, "%s", env);
        return;
    }
    snprintf(buf, len, "127.0.0.1");
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0)
        return;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK) ||
            util_net_excluded(i->ifa_name,
                              ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr)))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, (socklen_t)len);
        break;
    }
    freeifaddrs(ifs);
}

static dpm_port *dpm_port_find(const char *name)
{
    for (int i = 0; i < DPM_PORT_MAX; i++)
        if (dpm.ports[i].fd >= 0 && strcmp(dpm.ports[i].name, name) == 0)
            return &dpm.ports[i];
    return NULL;
}

static void dpm_ports_init(void)
{
    static int done;
    if (done)
        return;
    for (int i = 0; i < DPM_PORT_MAX; i++)
        dpm.ports[i].fd = -1;
    done = 1;
}

/* mpirun --isolate: a rank in a network namespace of its own listens where its TCP port would
 * reach nobody (its loopback is its own), or may not open an AF_INET socket at all (seccomp).
 * Its port is a Unix-domain socket file instead, which a rank of another job on this host
 * reaches whatever its network namespace: "dcfa-port-unix:<path>:<nonce>" */
/* the socket files of the Unix-domain ports still open: removed when the process ends
 * without closing them (util_die, exit, MPI_Abort); async-signal-safe */
static pid_t dpm_ports_pid; /* the process that made them (not a child forked since) */

void mpii_dpm_ports_unlink(void)
{
    if (getpid() != dpm_ports_pid)
        return;
    for (int i = 0; i < DPM_PORT_MAX; i++)
        if (dpm.ports[i].fd >= 0 && dpm.ports[i].path[0])
            (void)unlink(dpm.ports[i].path);
}

static int dpm_port_open_unix(dpm_port *p, char *name)
{
    static int registered;
    if (!registered) {
        registered = 1;
        dpm_ports_pid = getpid();
        util_die_cleanup_add(mpii_dpm_ports_unlink);
        (void)atexit(mpii_dpm_ports_unlink);
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir || strlen(dir) > 60 || strchr(dir, ':'))
        dir = "/tmp";
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(p->path, sizeof p->path, "%s/dcfa-port-%d-%016llx", dir, (int)getpid(),
             (unsigned long long)p->nonce);
    snprintf(a.sun_path, sizeof a.sun_path, "%s", p->path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
        mpii_cause("cannot listen on a Unix-domain port at %s: %m", p->path);
        if (fd >= 0)
            close(fd);
        p->path[0] = 0;
        return MPI_ERR_PORT;
    }
    (void)chmod(p->path, 0600);
    p->fd = fd;
    snprintf(p->name, sizeof p->name, "dcfa-port-unix:%s:%016llx", p->path,
             (unsigned long long)p->nonce);
    snprintf(name, MPI_MAX_PORT_NAME, "%s", p->name);
    return MPI_SUCCESS;
}

int mpii_port_open(char *name)
{
    dpm_ports_init();
    dpm_port *p = NULL;
    for (int i = 0; i < DPM_PORT_MAX && !p; i++)
        if (dpm.ports[i].fd < 0)
            p = &dpm.ports[i];
    if (!p) {
        mpii_cause("%d ports are open in this process already", DPM_PORT_MAX);
        return MPI_ERR_NO_MEM;
    }
    if (getrandom(&p->nonce, sizeof p->nonce, 0) != (ssize_t)sizeof p->nonce)
        p->nonce = util_now_ns() ^ ((uint64_t)getpid() << 32);
    const char *iso = getenv("DCFA_ISOLATE");
    if (iso && *iso && strcmp(iso, "none") != 0)
        return dpm_port_open_unix(p, name);
    p->path[0] = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        mpii_cause("cannot listen on a TCP port: %m");
        if (fd >= 0)
            close(fd);
        return MPI_ERR_PORT;
    }
    char addr[64];
    dpm_my_address(addr, sizeof addr);
    p->fd = fd;
    snprintf(p->name, sizeof p->name, "dcfa-port:%s:%u:%016llx", addr, (unsigned)ntohs(a.sin_port),
             (unsigned long long)p->nonce);
    snprintf(name, MPI_MAX_PORT_NAME, "%s", p->name);
    return MPI_SUCCESS;
}

int mpii_port_close(const char *name)
{
    dpm_ports_init();
    dpm_port *p = dpm_port_find(name);
    if (!p)
        return MPI_ERR_PORT;
    close(p->fd);
    p->fd = -1;
    if (p->path[0])
        (void)unlink(p->path);
    p->path[0] = 0;
    return MPI_SUCCESS;
}

/* "dcfa-port:<ipv4>:<port>:<nonce>" */
static int dpm_port_parse(const char *name, struct sockaddr_in *a, uint64_t *nonce)
{
    char addr[64];
    unsigned port;
    unsigned long long n;
    int used = 0;
    if (sscanf(name, "dcfa-port:%63[0-9.]:%u:%16llx%n", addr, &port, &n, &used) != 3 ||
        name[used] != 0 || port == 0 || port > 65535)
        return MPI_ERR_PORT;
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &a->sin_addr) != 1)
        return MPI_ERR_PORT;
    *nonce = n;
    return MPI_SUCCESS;
}

/* Accept at the root: the next connection that presents the port's nonce (others are
 * dropped). timeout_ms < 0: none. The socket, or a negative error class. */
static int dpm_accept_fd(dpm_port *p, int timeout_ms, const char *what)
{
    uint64_t end = timeout_ms >= 0 ? util_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
    dpm.waiting = what;
    for (;;) {
        int left = -1;
        if (end) {
            uint64_t now = util_now_ns();
            left = now >= end ? 0 : (int)((end - now) / 1000000u);
        }
        int w = dpm_wait_fd(p->fd, POLLIN, left);
        if (w <= 0) {
            dpm.waiting = NULL;
            return w == 0 ? -MPI_ERR_SPAWN : -MPI_ERR_PORT;
        }
        int fd = accept4(p->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        dpm_hello h;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        /* the hello is sent right after the connect: a peer that does not send it within
         * seconds is not one of ours */
        if (dpm_wait_fd(fd, POLLIN, 10000) == 1 &&
            recv(fd, &h, sizeof h, MSG_WAITALL) == (ssize_t)sizeof h && h.magic == DPM_MAGIC &&
            h.nonce == p->nonce) {
            dpm.waiting = NULL;
            return fd;
        }
        util_log("%s: dropped a connection to the port that did not present its key", what);
        close(fd);
    }
}

/* a Unix-domain port (dpm_port_open_unix): its socket, or a negative error class */
static int dpm_connect_unix(const char *name, uint64_t *nonce)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    const char *path = name + strlen("dcfa-port-unix:");
    const char *colon = strrchr(path, ':');
    char *end = NULL;
    unsigned long long n = colon ? strtoull(colon + 1, &end, 16) : 0;
    if (!colon || path[0] != '/' || (size_t)(colon - path) >= sizeof a.sun_path || !end ||
        *end != 0 || end - colon != 17) {
        mpii_cause("'%s' is not a port name of this library", name);
        return -MPI_ERR_PORT;
    }
    memcpy(a.sun_path, path, (size_t)(colon - path));
    *nonce = n;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        mpii_cause("nobody accepts on port %s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -MPI_ERR_PORT;
    }
    return fd;
}

/* the port's key, first on a new connection to it: fd, or an error code (fd closed) */
static int dpm_send_hello(int fd, uint64_t nonce)
{
    dpm_hello h = {.magic = DPM_MAGIC, .nonce = nonce};
    if (send(fd, &h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) {
        close(fd);
        return -MPI_ERR_PORT;
    }
    return fd;
}

static int dpm_connect_fd(const char *name, int timeout_ms)
{
    struct sockaddr_in a;
    uint64_t nonce;
    if (strncmp(name, "dcfa-port-unix:", 15) == 0) {
        int fd = dpm_connect_unix(name, &nonce);
        return fd < 0 ? fd : dpm_send_hello(fd, nonce);
    }
    if (dpm_port_parse(name, &a, &nonce) != MPI_SUCCESS) {
        mpii_cause("'%s' is not a port name of this library", name);
        return -MPI_ERR_PORT;
    }
    uint32_t to = ntohl(a.sin_addr.s_addr);
    if (!util_net_reaches(to) && fab_gw_can_dial()) {
        /* on a network this host is not on (a spawn across gateways): through a gateway */
        char why[300];
        dpm.waiting = "MPI_Comm_connect: the connection to the port through a gateway daemon";
        int fd = fab_gw_dial(to, ntohs(a.sin_port), timeout_ms, why, sizeof why);
        dpm.waiting = NULL;
        if (fd < 0) {
            mpii_cause("nobody accepts on port %s: %s", name, why);
            return -MPI_ERR_PORT;
        }
        return dpm_send_hello(fd, nonce);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -MPI_ERR_OTHER;
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    if (rc != 0 && errno == EINPROGRESS) {
        dpm.waiting = "MPI_Comm_connect: the TCP connection to the port";
        int w = dpm_wait_fd(fd, POLLOUT, timeout_ms);
        dpm.waiting = NULL;
        int err = 0;
        socklen_t elen = sizeof err;
        if (w == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0)
            rc = 0;
        else
            errno = w == 1 ? err : ETIMEDOUT;
    }
    if (rc != 0) {
        mpii_cause("nobody accepts on port %s: %s", name, strerror(errno));
        close(fd);
        return -MPI_ERR_PORT;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return dpm_send_hello(fd, nonce);
}

/* the root's outcome (a socket or an error) to the group, then the join */
static int dpm_join_from_root(mpii_comm *c, int root, int fd, mpii_comm **out)
{
    int st = c->rank == root ? (fd >= 0 ? MPI_SUCCESS : -fd) : MPI_SUCCESS;
    int rc = mpii_bcast(&st, 1, MPI_INT, root, c);
    if (rc == MPI_SUCCESS)
        rc = st;
    if (rc == MPI_SUCCESS)
        rc = mpii_intercomm_join(c, root, c->rank == root ? fd : -1, out);
    if (c->rank == root && fd >= 0)
        close(fd);
    return rc;
}

static int dpm_info_int(MPI_Info info, const char *key, int dflt)
{
    char v[64];
    int flag = 0, len = sizeof v;
    if (info == MPI_INFO_NULL || PMPI_Info_get_string(info, key, &len, v, &flag) != MPI_SUCCESS ||
        !flag)
        return dflt;
    return atoi(v);
}

int mpii_comm_accept(const char *port, MPI_Info info, mpii_comm *c, int root, mpii_comm **out)
{
    int fd = -MPI_ERR_PORT;
    *out = NULL;
    if (c->rank == root) {
        dpm_ports_init();
        dpm_port *p = dpm_port_find(port);
        if (!p) {
            mpii_cause("port '%s' is not open in this process (MPI_Open_port)", port);
        } else {
            int t = dpm_info_int(info, "timeout", 0);  /* seconds; none by default */
            fd = dpm_accept_fd(p, t > 0 ? t * 1000 : -1,
                               "MPI_Comm_accept: waiting for MPI_Comm_connect on the port");
        }
        if (fd == -MPI_ERR_SPAWN)
            fd = -MPI_ERR_PORT;
    }
    return dpm_join_from_root(c, root, fd, out);
}

int mpii_comm_connect(const char *port, MPI_Info info, mpii_comm *c, int root, mpii_comm **out)
{
    int fd = -MPI_ERR_PORT;
    *out = NULL;
    if (c->rank == root) {
        int t = dpm_info_int(info, "timeout", 30);
        fd = dpm_connect_fd(port, t > 0 ? t * 1000 : -1);
    }
    return dpm_join_from_root(c, root, fd, out);
}

int mpii_comm_join(int fd, mpii_comm **out)
{
    return mpii_intercomm_join(mpii_comm_get(MPI_COMM_SELF), 0, fd, out);
}

/* ---- disconnect and the parent ------------------------------------------------------------- */

int mpii_comm_disconnect(mpii_comm *c)
{
    /* every member calls it: once all are in, nothing is left in flight on c */
    int rc = mpii_barrier(c);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the connections to the other jobs' processes of c: a FIN each way behind all traffic */
    uint64_t job = FAB_GID_JOB(core_gid(mpii_group_self_lpid()));
    int n = c->size + (c->is_inter ? c->remote->size : 0), k = 0;
    int *lp = util_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        int l = i < c->size ? c->group->lpids[i] : c->remote->lpids[i - c->size];
        if (FAB_GID_JOB(core_gid(l)) != job)
            lp[k++] = l;
    }
    core_disconnect(lp, k);
    free(lp);
    if (c->handle == dpm.parent)
        dpm.parent = MPI_COMM_NULL;
    return mpii_comm_free(c);
}

MPI_Comm mpii_comm_parent(void)
{
    if (dpm.parent != MPI_COMM_NULL && !mpii_comm_get(dpm.parent))
        dpm.parent = MPI_COMM_NULL; /* freed by the user */
    return dpm.parent;
}

/* MPI_Init of a spawned process: connect to the parent's port (collective over the world) */
int mpii_dpm_init(void)
{
    const char *spawned = getenv("PMI_SPAWNED");
    if (!spawned || strcmp(spawned, "1") != 0)
        return MPI_SUCCESS;
    char port[MPI_MAX_PORT_NAME];
    if (assist_kvs_get(DPM_PARENT_KEY, port, sizeof port) != 0) {
        util_log("MPI_Init: this process was spawned, but its process manager has no %s",
                 DPM_PARENT_KEY);
        return MPI_ERR_SPAWN;
    }
    mpii_comm *world = mpii_comm_get(MPI_COMM_WORLD), *parent = NULL;
    int rc = mpii_comm_connect(port, MPI_INFO_NULL, world, 0, &parent);
    if (rc != MPI_SUCCESS) {
        util_log("MPI_Init: cannot connect to the parent job");
        return rc;
    }
    snprintf(parent->name, sizeof parent->name, "MPI_COMM_PARENT");
    dpm.parent = parent->handle;
    return MPI_SUCCESS;
}

/* ---- the name service: the process manager's (or DCFA_NAMESERVER's) table ------------ */

int mpii_name_publish(const char *service, const char *port)
{
    return assist_name_publish(service, port);
}

int mpii_name_unpublish(const char *service) { return assist_name_unpublish(service); }

int mpii_name_lookup(const char *service, char *port)
{
    return assist_name_lookup(service, port, MPI_MAX_PORT_NAME);
}

void mpii_dpm_dump(void)
{
    if (dpm.waiting)
        util_log("  %s", dpm.waiting);
}

/* ---- spawn ---------------------------------------------------------------------------------- */

/* the info keys the process manager takes */
static const char *const dpm_pm_keys[] = {"host", "hosts", "wdir", "path", "file", "arch", "hostfile"};

/* "soft": the counts allowed, as "a,b:c,d:e:s" (MPI 4.1 11.3.4); the largest allowed that is
 * <= maxprocs, or maxprocs when there is no soft key; -1 if none is allowed */
static int dpm_soft_max(MPI_Info info, int maxprocs)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0, len = sizeof v;
    if (info == MPI_INFO_NULL || PMPI_Info_get_string(info, "soft", &len, v, &flag) != MPI_SUCCESS ||
        !flag)
        return maxprocs;
    int best = -1;
    for (char *tok = strtok(v, ","); tok; tok = strtok(NULL, ",")) {
        int a = 0, b = 0, st = 1;
        int n = sscanf(tok, "%d:%d:%d", &a, &b, &st);
        if (n == 1)
            b = a;
        if (n < 1 || st <= 0 || a < 0)
            continue;
        for (int x = a; x <= b && x <= maxprocs; x += st)
            if (x > best)
                best = x;
    }
    return best;
}

int mpii_comm_spawn(int count, char *cmds[], char **argvs[], const int maxprocs[],
                    const MPI_Info infos[], int root, mpii_comm *c, mpii_comm **out,
                    int errcodes[])
{
    int total = 0, fd = -MPI_ERR_SPAWN;
    *out = NULL;
    if (c->rank == root) {
        char port[MPI_MAX_PORT_NAME];
        assist_spawn_cmd *sc = util_calloc((size_t)count, sizeof *sc);
        const char **keys = util_calloc((size_t)count * 6 + 1, sizeof *keys);
        const char **vals = util_calloc((size_t)count * 6 + 1, sizeof *vals);
        char (*valbuf)[MPI_MAX_INFO_VAL + 1] = util_calloc((size_t)count * 6 + 1, sizeof *valbuf);
        int nkv = 0, bad = 0;
        for (int i = 0; i < count; i++) {
            MPI_Info info = infos ? infos[i] : MPI_INFO_NULL;
            sc[i].command = cmds[i];
            sc[i].argv = argvs ? argvs[i] : NULL;
            sc[i].maxprocs = dpm_soft_max(info, maxprocs[i]);
            if (sc[i].maxprocs < 0) {
                mpii_cause("the info key soft allows no count up to maxprocs=%d", maxprocs[i]);
                bad = 1;
            }
            total += sc[i].maxprocs > 0 ? sc[i].maxprocs : 0;
            sc[i].info_keys = keys + nkv;
            sc[i].info_vals = vals + nkv;
            for (size_t k = 0; info != MPI_INFO_NULL && k < sizeof dpm_pm_keys / sizeof *dpm_pm_keys; k++) {
                int flag = 0, len = MPI_MAX_INFO_VAL + 1;
                if (PMPI_Info_get_string(info, dpm_pm_keys[k], &len, valbuf[nkv], &flag) ==
                        MPI_SUCCESS && flag) {
                    keys[nkv] = dpm_pm_keys[k];
                    vals[nkv] = valbuf[nkv];
                    nkv++;
                    sc[i].ninfo++;
                }
            }
        }
        int *ec = util_calloc((size_t)total + 1, sizeof *ec);
        int rc = bad ? MPI_ERR_SPAWN : mpii_port_open(port);
        if (rc == MPI_SUCCESS) {
            const char *pk[1] = {DPM_PARENT_KEY}, *pv[1] = {port};
            char why[1024] = "";
            int src = total == 0 ? 0 : assist_spawn(count, sc, 1, pk, pv, ec, why, sizeof why);
            if (src != 0) {
                mpii_cause("the process manager did not start %s: %s", cmds[0],
                           why[0] ? why : strerror(-src));
                fd = -MPI_ERR_SPAWN;
            } else if (total > 0) {
                fd = dpm_accept_fd(dpm_port_find(port), util_cfg.spawn_timeout * 1000,
                                   "MPI_Comm_spawn: waiting for the spawned processes to connect");
                if (fd == -MPI_ERR_SPAWN)
                    mpii_cause("the %d processes of %s did not connect within %d s "
                               "(DCFA_SPAWN_TIMEOUT)",
                               total, cmds[0], util_cfg.spawn_timeout);
            }
            mpii_port_close(port);
        } else {
            fd = -rc;
        }
        for (int i = 0; i < total && errcodes; i++)
            errcodes[i] = fd >= 0 && ec[i] == 0 ? MPI_SUCCESS : MPI_ERR_SPAWN;
        free(ec);
        free(sc);
        free(keys);
        free(vals);
        free(valbuf);
    }
    /* the count of processes is the root's to know: broadcast it with the errcodes */
    int hdr[2] = {c->rank == root ? (fd >= 0 ? MPI_SUCCESS : -fd) : 0, total};
    int rc = mpii_bcast(hdr, 2, MPI_INT, root, c);
    if (rc == MPI_SUCCESS && errcodes && hdr[1] > 0)
        rc = mpii_bcast(errcodes, hdr[1], MPI_INT, root, c);
    if (rc == MPI_SUCCESS)
        rc = hdr[0];
    /* the children run on this node (spawn is local to the root's daemon): they count
     * for the wait policy while this group waits for them and as long as it is joined
     * to them, so that parents and children do not spin for one core */
    int neighbours = rc == MPI_SUCCESS ? hdr[1] : 0;
    util_backoff_neighbours(neighbours);
    if (rc == MPI_SUCCESS)
        rc = mpii_intercomm_join(c, root, c->rank == root ? fd : -1, out);
    if (c->rank == root && fd >= 0)
        close(fd);
    if (*out)
        (*out)->neighbours = neighbours;
    else
        util_backoff_neighbours(-neighbours);
    return rc;
}
