/* A stranger at a gateway daemon (docs/gateway.md "Who may use a gateway"): rank 0, in a job
 * started with mpirun --gateways, connects to each gateway daemon it can reach as a process
 * without the job's key would: it answers the CHALLENGE with a HELLO whose MAC is made up
 * (claiming a gid), and must get no WELCOME: the gateway closes the connection (its line
 * "a HELLO without the job's key" goes to mpirun's stderr, which the stage checks). A second
 * stranger sends a DATA frame without any HELLO, a third a PROXY (a connection to rank 0's
 * own host) with a made-up MAC: closed too, with no answer; a fourth says nothing after the
 * CHALLENGE and must be closed within DCFA_GW_HELLO_TIMEOUT (the stage sets 2 s). Then the job's
 * own traffic through the gateways goes on: every rank exchanges with every other (pairs on two
 * networks through a gateway). Without DCFA_GATEWAYS (no gateway in the job) there is nothing to
 * check: it says so and fails, so it runs only where it means something (run_multihost.sh twonet).
 */
#define GW_WIRE_FRAMES_ONLY
#include "mtest.h"
#include "../../src/fabric/gw/gw_wire.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

/* a TCP connection to addr:port within 2 s, or -1 */
static int dial(const char *addr, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int err = 0;
    socklen_t el = sizeof err;
    if (poll(&p, 1, 2000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, 0); /* blocking, with poll for the time limits below */
    return fd;
}

/* read exactly len bytes within ms: 1, 0 if the connection closed first, -1 on timeout */
static int read_all(int fd, void *buf, size_t len, int ms)
{
    size_t got = 0;
    while (got < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms) != 1)
            return -1;
        ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
        if (n <= 0)
            return n == 0 || errno == ECONNRESET ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

/* one stranger at the gateway at addr:port: 1 if refused as it must be */
enum { AS_HELLO, AS_DATA, AS_PROXY, AS_SILENT };
static const char *const as_what[] = {"HELLO", "DATA frame", "PROXY", "silent connection"};

static int stranger(const char *host, const char *addr, int port, int as)
{
    int fd = dial(addr, port);
    if (fd < 0)
        return -1; /* not on my network */
    gw_frame h;
    int ok = 1;
    if (read_all(fd, &h, sizeof h, 10000) != 1 || h.kind != GW_CHALLENGE ||
        h.version != GW_WIRE_VERSION) {
        mtest_check(0, "gateway %s: no CHALLENGE first (kind %u)", host, h.kind);
        ok = 0;
    } else {
        gw_frame f = {.version = GW_WIRE_VERSION, .src = 0x5eed5eed00000001ull};
        if (as == AS_HELLO) {
            f.kind = GW_HELLO;
            f.arg = 65536;
            f.dst = h.dst ^ 0x0123456789abcdefull; /* a MAC made up from the nonce */
        } else if (as == AS_DATA) {
            f.kind = GW_DATA; /* a frame for someone, without saying who it is */
            f.dst = 1;
        } else {
            struct in_addr ia;
            inet_pton(AF_INET, addr, &ia);
            f.kind = GW_PROXY; /* to port 22 of the gateway itself */
            f.src = (uint64_t)ntohl(ia.s_addr) << 16 | 22;
            f.dst = h.dst + 1;
        }
        if (as == AS_SILENT) {
            /* nothing: the gateway must close it by itself, well before 10 s */
            int r = read_all(fd, &h, sizeof h, 10000);
            mtest_check(r == 0, "gateway %s: a connection that said nothing was %s", host,
                        r == 1 ? "answered" : "left open for 10 s");
            ok = r == 0;
        } else if (send(fd, &f, sizeof f, MSG_NOSIGNAL) != (ssize_t)sizeof f) {
            mtest_check(0, "gateway %s: cannot send the stranger's frame", host);
            ok = 0;
        } else {
            int r = read_all(fd, &h, sizeof h, 10000);
            mtest_check(r == 0, "gateway %s: a %s without the key was %s", host, as_what[as],
                        r == 1 ? (h.kind == GW_WELCOME ? "WELCOMEd" : "answered")
                               : "left open for 10 s");
            ok = r == 0;
        }
    }
    close(fd);
    return ok;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *list = getenv("DCFA_GATEWAYS");
    mtest_check(list && *list, "no DCFA_GATEWAYS: run it with mpirun --gateways");
    if (rank == 0 && list) {
        /* "host:port:address/prefix,address/prefix;..." */
        int tried = 0;
        for (const char *s = list; *s;) {
            size_t k = strcspn(s, ";");
            char e[512], host[128];
            int port = 0;
            snprintf(e, sizeof e, "%.*s", (int)k, s);
            char *c1 = strchr(e, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (c1 && c2) {
                snprintf(host, sizeof host, "%.*s", (int)(c1 - e), e);
                port = atoi(c1 + 1);
                for (char *a = c2 + 1; *a;) {
                    size_t n = strcspn(a, ",");
                    char addr[64];
                    snprintf(addr, sizeof addr, "%.*s", (int)strcspn(a, "/,"), a);
                    for (int as = AS_HELLO; as <= AS_SILENT; as++)
                        tried += stranger(host, addr, port, as) >= 0;
                    a += n + (a[n] == ',');
                }
            }
            s += k + (s[k] == ';');
        }
        mtest_check(tried > 0, "rank 0 reached no gateway daemon of %s", list);
        printf("gw_stranger: %d stranger connections made\n", tried);
        fflush(stdout);
    }
    /* the job's own traffic through the gateways */
    for (int peer = 0; peer < size; peer++) {
        if (peer == rank)
            continue;
        int out = rank * 1000 + peer, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, peer, 7, &in, 1, MPI_INT, peer, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        mtest_check(in == peer * 1000 + rank, "from %d: %d", peer, in);
    }
    return mtest_finalize();
}
