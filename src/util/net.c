/* The IPv4 networks of this process's host, found rather than configured (docs/gateway.md):
 * the "net:" entry of the card (an interface's address and prefix), whether two processes
 * share a network, and whether this host has a route to an address at all (a network fabric
 * does not try a peer its kernel cannot route to). */
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct {
    int found;
    int n;
    util_net net[UTIL_NET_MAX];
} net_s;

static int net_prefix(uint32_t mask_host)
{
    int p = 0;
    while (p < 32 && (mask_host & (0x80000000u >> p)))
        p++;
    return p;
}

static uint32_t net_mask(int prefix)
{
    return prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~(0xffffffffu >> prefix);
}

int util_net_excluded(const char *ifname, uint32_t addr)
{
    static int warned;
    const char *s = getenv("DCFA_NET_EXCLUDE");
    while (s && *s) {
        size_t k = strcspn(s, ",");
        if (k && memchr(s, '/', k)) { /* a network */
            util_net n;
            if (util_net_parse(s, k, &n, 1) == 1) {
                if (util_net_on(&n, addr))
                    return 1;
            } else if (!warned++) {
                fprintf(stderr,
                        "[dcfa-mpi] DCFA_NET_EXCLUDE: '%.*s' is not a network a.b.c.d/n: "
                        "ignored\n",
                        (int)k, s); /* (mpirun has no util_log) */
            }
        } else if (k && ifname && strlen(ifname) == k && strncmp(ifname, s, k) == 0) {
            return 1; /* an interface by name */
        }
        s += k;
        if (*s == ',')
            s++;
    }
    return 0;
}

int util_net_list(const util_net **out)
{
    if (!net_s.found) {
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) == 0) {
            for (struct ifaddrs *i = ifs; i && net_s.n < UTIL_NET_MAX; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
                    continue;
                const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
                if (util_net_excluded(i->ifa_name, ntohl(a->sin_addr.s_addr)))
                    continue; /* a management network, say: not for MPI's data */
                const struct sockaddr_in *m = (const struct sockaddr_in *)i->ifa_netmask;
                net_s.net[net_s.n].addr = ntohl(a->sin_addr.s_addr);
                net_s.net[net_s.n].prefix = m ? net_prefix(ntohl(m->sin_addr.s_addr)) : 32;
                net_s.n++;
            }
            freeifaddrs(ifs);
        }
        net_s.found = 1;
    }
    *out = net_s.net;
    return net_s.n;
}

int util_net_on(const util_net *n, uint32_t addr)
{
    uint32_t m = net_mask(n->prefix);
    return (n->addr & m) == (addr & m);
}

int util_net_reaches(uint32_t addr)
{
    /* the kernel's routing table decides: a datagram socket "connected" to the address sends
     * nothing, and fails when no route leads there (a network of this host, or a router's) */
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1; /* cannot tell: let the fabric try */
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(addr)};
    int rc = connect(fd, (const struct sockaddr *)&sa, sizeof sa);
    int err = errno;
    close(fd);
    return rc == 0 || (err != ENETUNREACH && err != EHOSTUNREACH);
}

int util_net_format(const util_net *nets, int n, char *buf, size_t len)
{
    size_t off = 0;
    if (len)
        buf[0] = 0;
    for (int i = 0; i < n; i++) {
        uint32_t a = nets[i].addr;
        int k = snprintf(buf + off, len - off, "%s%u.%u.%u.%u/%d", i ? "," : "", a >> 24,
                         (a >> 16) & 255, (a >> 8) & 255, a & 255, nets[i].prefix);
        if (k < 0 || (size_t)k >= len - off)
            return UTIL_EINVAL;
        off += (size_t)k;
    }
    return UTIL_OK;
}

int util_net_parse(const char *s, size_t slen, util_net *nets, int max)
{
    int n = 0;
    const char *end = s + slen;
    while (s < end) {
        unsigned a, b, c, d;
        int prefix, used = 0;
        char one[40];
        size_t k = strcspn(s, ",");
        if (k > (size_t)(end - s))
            k = (size_t)(end - s);
        if (k == 0 || k >= sizeof one)
            return UTIL_EINVAL;
        memcpy(one, s, k);
        one[k] = 0;
        if (sscanf(one, "%u.%u.%u.%u/%d%n", &a, &b, &c, &d, &prefix, &used) != 5 ||
            (size_t)used != k || a > 255 || b > 255 || c > 255 || d > 255 || prefix < 0 ||
            prefix > 32)
            return UTIL_EINVAL;
        if (n == max)
            return UTIL_EINVAL;
        nets[n++] = (util_net){.addr = a << 24 | b << 16 | c << 8 | d, .prefix = prefix};
        s += k;
        if (s < end && *s == ',')
            s++;
    }
    return n;
}

int util_net_common(const util_net *a, int na, const util_net *b, int nb)
{
    for (int i = 0; i < na; i++) {
        if ((a[i].addr >> 24) == 127) /* loopback is every host's own: no network in common */
            continue;
        for (int j = 0; j < nb; j++)
            if ((b[j].addr >> 24) != 127 && a[i].prefix == b[j].prefix &&
                util_net_on(&a[i], b[j].addr))
                return 1;
    }
    return 0;
}

void util_tcp_ack_now(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

/* a TCP connection (to another host) whose peer stops answering fails within about t seconds
 * (DCFA_NET_TIMEOUT) instead of never: keepalive probes while it idles, and a bound on
 * unacknowledged data (TCP_USER_TIMEOUT); nothing for t <= 0 */
static void util_tcp_liveness(int fd, int t)
{
    if (t <= 0)
        return;
    /* idle for a third of the bound, then a probe every sixth: the peer's kernel answers them
     * however busy its processes are, so only a host or link that is gone misses them all */
    int one = 1, idle = t / 3 > 0 ? t / 3 : 1, intvl = t / 6 > 0 ? t / 6 : 1, cnt = 6;
    unsigned ms = (unsigned)t * 1000u;
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

void (*util_net_say)(const char *line);

int util_tcp_congestion(int fd, const char *name)
{
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, (socklen_t)strlen(name)) == 0)
        return 0;
    return -errno;
}

/* the first line of a /proc/sys file, or "" */
static void util_proc_line(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)len, f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

void util_tcp_data(int fd, int secs)
{
    struct sockaddr_storage a;
    socklen_t al = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &al) != 0 ||
        (a.ss_family != AF_INET && a.ss_family != AF_INET6))
        return;
    util_tcp_liveness(fd, secs);
    static int said; /* the failure is told once per process */
    const char *cc = getenv("DCFA_TCP_CONGESTION");
    if (!cc || !*cc)
        return;
    int rc = util_tcp_congestion(fd, cc);
    if (rc == 0 || said)
        return;
    said = 1;
    char allowed[256], available[256];
    util_proc_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control", allowed, sizeof allowed);
    util_proc_line("/proc/sys/net/ipv4/tcp_available_congestion_control", available,
                   sizeof available);
    char line[768];
    snprintf(line, sizeof line,
             "DCFA_TCP_CONGESTION=%s: %s (this kernel has: %s; allowed to every user: %s); the "
             "TCP connections keep the system's congestion control",
             cc,
             rc == -ENOENT  ? "no congestion control of that name"
             : rc == -EPERM ? "not allowed to this user"
                            : strerror(-rc),
             *available ? available : "?", *allowed ? allowed : "?");
    if (util_net_say)
        util_net_say(line);
    else
        fprintf(stderr, "[dcfa-mpi] pid %d: %s\n", (int)getpid(), line);
}

int util_net_timeout_env(void)
{
    const char *s = getenv("DCFA_NET_TIMEOUT");
    return s && *s ? atoi(s) : 60;
}
