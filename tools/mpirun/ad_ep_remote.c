/* ad: endpoints handed over across hosts (docs/launcher.md "Endpoints across hosts").
 *
 * A rank asks its daemon (ad_ep.c) for a connection to a rank of its job that runs on another
 * host. The two daemons, which keep their hosts' networks, make one TCP connection between the
 * hosts and each hands its end to its rank; from then on the ranks move every byte themselves.
 *
 * Each remote daemon of the tree listens on a data port (any address, a port the kernel picks)
 * and announces "<port>;<its networks>" up the tree (EPADDR); mpirun draws a 128-bit key for
 * the job and sends it with every daemon's announcement down the tree (EPMAP), before START.
 * The tree's links are the trusted path (ssh); the key proves on a data connection that the
 * other end is a daemon of this job.
 *
 * The requester's daemon (C) connects to the peer's daemon (L), which sends a CHALLENGE (a
 * nonce); C answers with HELLO (job, both ranks, the peer's token from the request, its own
 * nonce, and a SipHash MAC over all that and L's nonce under the job's key); L checks the MAC
 * and then everything ad_ep.c checks on one host (the job, the rank runs here, the token is
 * that rank's, its channel is open), answers ANSWER (status, text, a MAC over C's nonce),
 * then hands the accepted socket to its rank (INCOMING). C checks the answer's MAC and hands
 * its end to the asker (GRANT), or passes the refusal on (REFUSE with L's text). Each side
 * reads exactly its messages' bytes, so what the ranks send afterwards stays theirs. A
 * handshake that does not finish within AD_EPR_TIMEOUT seconds is refused. Under mpirun
 * --relay each daemon keeps the TCP connection and gives its rank a socket pair's end that it
 * relays to it (ad_relay_join): the bytes then pass through both daemons. */
#include "ad_ep_remote.h"
#include "ad.h"
#include "ad_ep.h"
#include "ad_sendfd.h"
#include "ad_link.h"
#include "ad_place.h"
#include "ad_relay.h"
#include "ad_seg.h"
#include "util/seg_wire.h"
#include "fabric/sock/sock_wire.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define AD_EPR_MAGIC   0x58444344u /* "DCDX" */
#define AD_EPR_VERSION 2
#define AD_EPR_TIMEOUT 10.0
#define AD_EPR_INFO    400 /* "<port>;<networks>" */

enum { AD_EPR_CHALLENGE = 1, AD_EPR_HELLO = 2, AD_EPR_ANSWER = 3, AD_EPF_HELLO = 4 };

/* L -> C, first on a data connection */
typedef struct ad_epr_challenge {
    uint32_t magic;  /* AD_EPR_MAGIC */
    uint8_t version; /* AD_EPR_VERSION */
    uint8_t type;    /* AD_EPR_CHALLENGE */
    uint16_t zero;
    uint32_t zero2;
    uint32_t zero3;
    uint64_t nonce[2]; /* L's, random */
} ad_epr_challenge;
_Static_assert(sizeof(ad_epr_challenge) == 32, "challenge is 32 bytes");

/* C -> L */
typedef struct ad_epr_hello {
    uint32_t magic;
    uint8_t version;
    uint8_t type; /* AD_EPR_HELLO */
    uint16_t zero;
    int32_t asker;              /* the rank that asked (runs on C's host) */
    int32_t peer;               /* the rank asked for (runs on L's host) */
    int32_t node;               /* C's node in the tree */
    uint32_t zero2;             /* 0 */
    uint64_t token;             /* the peer's token, from the asker's request (its card) */
    uint64_t nonce[2];          /* C's, random */
    char job[SOCK_EP_JOB_MAX];  /* the peer's job id, NUL-ended */
    char ajob[SOCK_EP_JOB_MAX]; /* the asker's job id (the same for two ranks of one job) */
    char akvs[64];              /* the asker's job's kvsname (sent, not checked: any two jobs */
    char aspawner[64];          /* of this mpirun are joined, the token is the right) and the
                                 * kvsname of the job that spawned the asker's, "" job 0 */
    uint64_t mac;               /* SipHash(key, this message with mac 0, then L's nonce) */
} ad_epr_hello;
_Static_assert(sizeof(ad_epr_hello) == 264 && offsetof(ad_epr_hello, job) == 48 &&
                   offsetof(ad_epr_hello, ajob) == 88 && offsetof(ad_epr_hello, akvs) == 128 &&
                   offsetof(ad_epr_hello, aspawner) == 192,
               "hello is 264 bytes");

/* L -> C */
typedef struct ad_epr_answer {
    uint32_t magic;
    uint8_t version;
    uint8_t type; /* AD_EPR_ANSWER */
    uint16_t zero;
    int32_t status; /* 0 granted, else a negative errno */
    uint32_t zero2;
    char text[SOCK_EP_TEXT_MAX]; /* a refusal's reason, NUL-ended */
    uint64_t mac;                /* SipHash(key, this message with mac 0, then C's nonce) */
} ad_epr_answer;
_Static_assert(sizeof(ad_epr_answer) == 184 && offsetof(ad_epr_answer, mac) == 176,
               "answer is 184 bytes");

/* C -> L between two mpiruns on one host (docs/launcher.md "Endpoints between two mpiruns"):
 * what is asked, and a MAC under the asker's right to it (the peer rank's token, or the
 * segment's tag), which is never sent */
enum { AD_EPF_CONNECT = 1, AD_EPF_OPEN = 2, AD_EPF_REMOVE = 3 };
typedef struct ad_epf_hello {
    uint32_t magic;
    uint8_t version;
    uint8_t type; /* AD_EPF_HELLO */
    uint16_t zero;
    uint32_t op;                /* AD_EPF_CONNECT, _OPEN, _REMOVE */
    int32_t asker;              /* the rank that asked (of C's mpirun) */
    int32_t peer;               /* CONNECT: the rank asked for; else -1 */
    uint32_t zero2;             /* 0 */
    uint64_t size;              /* OPEN: the segment's bytes */
    uint64_t nonce[2];          /* C's, random */
    char job[SOCK_EP_JOB_MAX];  /* the peer's (the segment's) job id, NUL-ended */
    char ajob[SOCK_EP_JOB_MAX]; /* the asker's job id */
    char stem[SEG_NAME_MAX];    /* OPEN, REMOVE: the name without its 16-digit tag */
    uint64_t mac;               /* SipHash(right, this message with mac 0, then L's nonce) */
} ad_epf_hello;
_Static_assert(sizeof(ad_epf_hello) == 232 && offsetof(ad_epf_hello, job) == 48 &&
                   offsetof(ad_epf_hello, stem) == 128 && offsetof(ad_epf_hello, mac) == 224,
               "foreign hello is 232 bytes");
#define AD_EPF_KEY2 0x6463666164706d31ull /* the right's key's second half ("dcfadpm1") */

enum ad_epr_state {
    AD_EPR_CONNECTING, /* C: connect() in progress */
    AD_EPR_WAIT_CHAL,  /* C: reading the challenge */
    AD_EPR_WAIT_ANS,   /* C: hello sent, reading the answer */
    AD_EPR_WAIT_HELLO, /* L: challenge sent, reading the hello */
    AD_EPR_DEAD,       /* finished: freed at the next pollfds */
};

struct ad_epr_hs {
    int fd;
    enum ad_epr_state state;
    double deadline;
    unsigned char buf[sizeof(ad_epr_hello)]; /* the larger of hello and answer */
    size_t got;
    uint64_t nonce[2], theirs[2];
    char where[24]; /* the other daemon ("a.b.c.d:port"), for messages */
    /* C: the request */
    int jobnum, asker, peer;    /* jobnum: the asker's job */
    char pjob[SOCK_EP_JOB_MAX]; /* the peer's job id */
    uint32_t seq;
    uint64_t token;
    uint32_t addr[UTIL_NET_MAX];
    int naddr, ai, port;
    /* between two mpiruns (ad_epf_*): 1 C, 2 L; op, the segment's name and size, the right
     * (token or tag), a descriptor that came with the answer */
    int foreign, op;
    int tcp; /* the connection is TCP (another host): a segment cannot go over it */
    char name[SEG_NAME_MAX];
    uint64_t size, right;
    int rfd;
    struct ad_epr_hs *next;
};

static struct {
    int lfd;
    int port;
    char info[AD_EPR_INFO];
    uint64_t key[2];
    int have_key;
    char (*node_info)[AD_EPR_INFO]; /* [nnodes]: node v's at v - 1 */
    int nnodes;
    struct ad_epr_hs *hs;
    int nhs;
    int attached;
    int ffd;                    /* the listener for other mpiruns (abstract Unix socket) */
    struct ad_daemon *d;        /* whose requests go to other mpiruns */
    char self[SOCK_EP_JOB_MAX]; /* this mpirun's part of its job ids ("j<pid>_<rand>") */
} epr = {.lfd = -1, .ffd = -1};

/* ---- the data port and the map -------------------------------------------------------- */

static int ad_epr_random(void *buf, size_t len)
{
    return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -EIO;
}

const char *ad_epr_listen(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    const util_net *nets;
    char text[AD_EPR_INFO - 8];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        fprintf(stderr, "mpirun: cannot listen for endpoints of other hosts: %s\n",
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return "";
    }
    int n = util_net_list(&nets);
    if (util_net_format(nets, n, text, sizeof text) != UTIL_OK)
        text[0] = 0;
    epr.lfd = fd;
    epr.port = ntohs(a.sin_port);
    snprintf(epr.info, sizeof epr.info, "%d;%s", epr.port, text);
    ad_ep_set_daddr(epr.port, nets, n); /* in the ranks' cards: another mpirun's daemon connects */
    return epr.info;
}

static int ad_epr_nodes(int nnodes)
{
    if (epr.node_info != NULL)
        return nnodes == epr.nnodes ? 0 : -EINVAL;
    epr.node_info = calloc((size_t)nnodes, sizeof *epr.node_info);
    if (epr.node_info == NULL)
        return -ENOMEM;
    epr.nnodes = nnodes;
    return 0;
}

void ad_epr_note(int node, int nnodes, const char *info, size_t len)
{
    if (node < 1 || node > nnodes || ad_epr_nodes(nnodes) != 0)
        return;
    snprintf(epr.node_info[node - 1], AD_EPR_INFO, "%.*s", (int)strnlen(info, len), info);
}

int ad_epr_map(struct ad_buf *b, int nnodes)
{
    char hex[40];
    if (ad_epr_nodes(nnodes) != 0 || ad_epr_random(epr.key, sizeof epr.key) != 0)
        return -EIO;
    epr.have_key = 1;
    snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)epr.key[0],
             (unsigned long long)epr.key[1]);
    ad_buf_add_str(b, hex);
    for (int v = 0; v < nnodes; v++)
        ad_buf_add_str(b, epr.node_info[v]);
    return 0;
}

int ad_epr_set_map(int nnodes, const char *p, size_t len)
{
    const char *end = p + len;
    size_t k = strnlen(p, len);
    char hex[17];
    if (k != 32 || ad_epr_nodes(nnodes) != 0)
        return -EINVAL;
    snprintf(hex, sizeof hex, "%.16s", p);
    epr.key[0] = strtoull(hex, NULL, 16);
    snprintf(hex, sizeof hex, "%.16s", p + 16);
    epr.key[1] = strtoull(hex, NULL, 16);
    epr.have_key = 1;
    p += k + 1;
    for (int v = 0; v < nnodes && p < end; v++) {
        k = strnlen(p, (size_t)(end - p));
        snprintf(epr.node_info[v], AD_EPR_INFO, "%.*s", (int)k, p);
        p += k + 1;
    }
    return 0;
}

/* ---- handshakes ------------------------------------------------------------------------ */

static struct ad_epr_hs *ad_epr_hs_new(int fd)
{
    struct ad_epr_hs *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->fd = fd;
    h->rfd = -1;
    h->deadline = ad_now() + AD_EPR_TIMEOUT;
    if (ad_epr_random(h->nonce, sizeof h->nonce) != 0) {
        free(h);
        return NULL;
    }
    h->next = epr.hs;
    epr.hs = h;
    epr.nhs++;
    return h;
}

static void ad_epr_hs_end(struct ad_epr_hs *h)
{
    if (h->fd >= 0)
        close(h->fd);
    if (h->rfd >= 0)
        close(h->rfd);
    h->rfd = -1;
    h->fd = -1;
    h->state = AD_EPR_DEAD;
}

static uint64_t ad_epr_mac(const void *msg, size_t len, const uint64_t nonce[2])
{
    unsigned char m[sizeof(ad_epr_hello) + 16];
    _Static_assert(sizeof(ad_epr_hello) >= sizeof(ad_epr_answer), "hello is the larger");
    memcpy(m, msg, len);
    memset(m + len - sizeof(uint64_t), 0, sizeof(uint64_t)); /* the mac field, last */
    memcpy(m + len, nonce, 16);
    return util_siphash(epr.key, m, len + 16);
}

/* all of a small message on a fresh socket (its send buffer is empty): 0 or -1 */
static int ad_epr_write(int fd, const void *m, size_t len)
{
    ssize_t n;
    do
        n = send(fd, m, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

/* reads toward want bytes of h->buf: 1 complete, 0 not yet, -1 closed or failed */
static int ad_epr_read(struct ad_epr_hs *h, size_t want)
{
    while (h->got < want) {
        char cbuf[CMSG_SPACE(4 * sizeof(int))];
        struct iovec iov = {.iov_base = h->buf + h->got, .iov_len = want - h->got};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t n = recvmsg(h->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n > 0) /* a descriptor: only an answer between two mpiruns carries one (a segment) */
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
                    for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
                        if (h->rfd < 0 && h->foreign == 1)
                            h->rfd = fd;
                        else
                            close(fd);
                    }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            return -1;
        h->got += (size_t)n;
    }
    return 1;
}

static struct ad_proc *ad_epr_proc(struct ad_job *job, int rank)
{
    for (int i = 0; job != NULL && i < job->nprocs; i++)
        if (job->procs[i].rank == rank)
            return &job->procs[i];
    return NULL;
}

/* hand message m with the connection h went over to rank p: the socket itself (blocking, as
 * every socket a rank gets), or, when relay is set (mpirun --relay, a TCP connection to another
 * host), a socket pair's end that this daemon relays to it; the relay takes h's socket */
static void ad_epr_hand(struct ad_proc *p, const sock_ep_msg *m, struct ad_epr_hs *h, int relay)
{
    if (relay) {
        int one = 1; /* the rank's sock fabric sets this on a TCP socket it gets, not on ours */
        (void)setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        util_tcp_data(h->fd, util_net_timeout_env());
        int end = ad_relay_join(h->fd);
        if (end >= 0) {
            h->fd = -1;
            (void)ad_ep_send(p, m, end);
            close(end);
            return;
        }
        /* no relay to be had (out of memory or descriptors): the direct connection still works */
    }
    (void)fcntl(h->fd, F_SETFL, fcntl(h->fd, F_GETFL) & ~O_NONBLOCK);
    (void)ad_ep_send(p, m, h->fd);
}

/* GRANT to rank p of its request h: the connected socket h went over (relay: as ad_epr_hand) */
static void ad_epr_grant_socket(struct ad_proc *p, struct ad_epr_hs *h, int relay)
{
    sock_ep_msg g = {.magic = SOCK_EP_MAGIC,
                     .version = SOCK_VERSION,
                     .type = SOCK_EP_GRANT,
                     .seq = h->seq,
                     .rank = h->peer};
    snprintf(g.job, sizeof g.job, "%s", h->pjob);
    ad_epr_hand(p, &g, h, relay);
}

/* C: the asker's request failed; the asker hears why (fmt...), nothing is granted */
static void ad_epr_fail(struct ad_daemon *d, struct ad_epr_hs *h, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ad_epr_fail(struct ad_daemon *d, struct ad_epr_hs *h, int status, const char *fmt, ...)
{
    struct ad_job *job = ad_job_by_num(d, h->jobnum);
    struct ad_proc *p = ad_epr_proc(job, h->asker);
    sock_ep_msg req = {.seq = h->seq, .rank = h->peer};
    char text[SOCK_EP_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (p != NULL && p->ep_fd >= 0 && (h->op == AD_EPF_OPEN || h->op == AD_EPF_REMOVE))
        ad_seg_reply(p, h->seq, h->name, 0, SEG_REFUSE, status, -1, text);
    else if (p != NULL && p->ep_fd >= 0)
        ad_ep_refuse(p, &req, status, "%s", text);
    ad_epr_hs_end(h);
}

/* C: connect to the next address of the peer's daemon; 0 started, -1 none left */
static int ad_epr_connect_next(struct ad_epr_hs *h)
{
    while (h->ai < h->naddr) {
        uint32_t ad = h->addr[h->ai++];
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)h->port),
                                .sin_addr.s_addr = htonl(ad)};
        if (h->fd >= 0)
            close(h->fd);
        h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (h->fd < 0)
            return -1;
        snprintf(h->where, sizeof h->where, "%u.%u.%u.%u:%d", ad >> 24, (ad >> 16) & 255,
                 (ad >> 8) & 255, ad & 255, h->port);
        if (connect(h->fd, (struct sockaddr *)&a, sizeof a) == 0 || errno == EINPROGRESS) {
            h->state = AD_EPR_CONNECTING;
            return 0;
        }
    }
    return -1;
}

/* 1 when nets (util_net_format's text) are this host's own: the other daemon runs here */
static int ad_epr_same_host(const char *nets)
{
    const util_net *mine;
    int nmine = util_net_list(&mine);
    char own[AD_EPR_INFO];
    return util_net_format(mine, nmine, own, sizeof own) == UTIL_OK && strcmp(own, nets) == 0;
}

/* C: the addresses of the other daemon to try, in h->addr: those on a network of this host
 * first, then those the kernel routes to; loopback only when the two share this host */
static void ad_epr_order(struct ad_epr_hs *h, const util_net *nets, int nn, int same)
{
    const util_net *mine;
    int nmine = util_net_list(&mine);
    h->naddr = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < nn && h->naddr < UTIL_NET_MAX; i++) {
            uint32_t a = nets[i].addr;
            int loop = (a >> 24) == 127, on = 0;
            for (int k = 0; k < nmine && !loop; k++)
                on |= (mine[k].addr >> 24) != 127 && util_net_on(&mine[k], a);
            if ((pass == 0 && on) || (pass == 1 && !on && !loop && util_net_reaches(a)) ||
                (pass == 2 && loop && same))
                h->addr[h->naddr++] = a;
        }
}

void ad_epr_request(struct ad_daemon *d, struct ad_job *mine, struct ad_proc *p,
                    struct ad_job *peer, const sock_ep_msg *req)
{
    /* the peer's node: job 0's placement, else the node the peer's card names (a hint: the
     * daemon there checks that the rank runs under it, so a wrong one is only a refusal) */
    int node = peer != NULL ? ad_tree_rank_node(d, peer, req->rank) : -1;
    int self = ad_t(d) != NULL ? ad_t(d)->node : -1;
    char pjob[SOCK_EP_JOB_MAX];
    if (peer != NULL)
        snprintf(pjob, sizeof pjob, "%s", peer->jobid);
    else
        snprintf(pjob, sizeof pjob, "%.*s", (int)strnlen(req->job, sizeof req->job), req->job);
    if (node < 1)
        node = req->node;
    const char *info = node >= 1 && node <= epr.nnodes ? epr.node_info[node - 1] : "";
    util_net nets[UTIL_NET_MAX];
    int nn = 0;
    char *semi = strchr(info, ';');
    struct ad_epr_hs *h;

    if (node < 1 || node > epr.nnodes || node == self || !epr.have_key || semi == NULL) {
        ad_ep_refuse(p, req, -EHOSTUNREACH,
                     "rank %d of job %s asked for rank %d of job %s, which runs on another host "
                     "whose daemon takes no endpoint requests%s",
                     p->rank, mine->jobid, req->rank, pjob,
                     node < 1 || node > epr.nnodes ? " (its card names no host of this mpirun)"
                     : node == self                ? " (its card names this host)"
                                                   : "");
        return;
    }
    nn = util_net_parse(semi + 1, strlen(semi + 1), nets, UTIL_NET_MAX);
    h = ad_epr_hs_new(-1);
    if (h == NULL || nn <= 0) {
        ad_ep_refuse(p, req, -ENOMEM, "rank %d asked for rank %d of job %s: %s", p->rank, req->rank,
                     pjob, h == NULL ? "out of memory" : "no address known");
        if (h != NULL)
            h->state = AD_EPR_DEAD;
        return;
    }
    h->jobnum = mine->num;
    snprintf(h->pjob, sizeof h->pjob, "%s", pjob);
    h->asker = p->rank;
    h->peer = req->rank;
    h->seq = req->seq;
    h->token = req->token;
    h->port = atoi(info);
    ad_epr_order(h, nets, nn, ad_epr_same_host(semi + 1));
    h->fd = -1;
    if (ad_epr_connect_next(h) != 0) {
        ad_epr_fail(d, h, -EHOSTUNREACH,
                    "rank %d asked for rank %d of job %s: no address of its host's daemon (%s) "
                    "is reachable from here",
                    p->rank, req->rank, pjob, info);
    }
}

/* L: a connection on the data port */
static void ad_epr_accept(void)
{
    for (;;) {
        struct sockaddr_in a;
        socklen_t al = sizeof a;
        int fd = accept4(epr.lfd, (struct sockaddr *)&a, &al, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        /* a daemon of this job (a keyed HELLO) or of another mpirun (a HELLO-X, the right
         * its rank's token): told apart by the hello's type */
        struct ad_epr_hs *h = ad_epr_hs_new(fd);
        if (h == NULL) {
            close(fd);
            continue;
        }
        h->tcp = 1;
        uint32_t ad = ntohl(a.sin_addr.s_addr);
        snprintf(h->where, sizeof h->where, "%u.%u.%u.%u:%d", ad >> 24, (ad >> 16) & 255,
                 (ad >> 8) & 255, ad & 255, ntohs(a.sin_port));
        ad_epr_challenge c = {.magic = AD_EPR_MAGIC,
                              .version = AD_EPR_VERSION,
                              .type = AD_EPR_CHALLENGE,
                              .nonce = {h->nonce[0], h->nonce[1]}};
        h->state = AD_EPR_WAIT_HELLO;
        if (ad_epr_write(fd, &c, sizeof c) != 0)
            ad_epr_hs_end(h);
    }
}

/* L: answer the hello (status 0: then hand the socket to the rank) */
static void ad_epr_answer_send(struct ad_epr_hs *h, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ad_epr_answer_send(struct ad_epr_hs *h, int status, const char *fmt, ...)
{
    ad_epr_answer a = {
        .magic = AD_EPR_MAGIC, .version = AD_EPR_VERSION, .type = AD_EPR_ANSWER, .status = status};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a.text, sizeof a.text, fmt, ap);
    va_end(ap);
    a.mac = ad_epr_mac(&a, sizeof a, h->theirs);
    (void)ad_epr_write(h->fd, &a, sizeof a);
}

/* L: a complete hello: the checks of one host, then INCOMING to the rank */
static void ad_epr_hello_in(struct ad_daemon *d, struct ad_epr_hs *h)
{
    ad_epr_hello m;
    memcpy(&m, h->buf, sizeof m);
    m.job[sizeof m.job - 1] = 0;
    m.ajob[sizeof m.ajob - 1] = 0;
    m.akvs[sizeof m.akvs - 1] = 0;
    m.aspawner[sizeof m.aspawner - 1] = 0;
    h->theirs[0] = m.nonce[0];
    h->theirs[1] = m.nonce[1];
    if (!epr.have_key || m.magic != AD_EPR_MAGIC || m.version != AD_EPR_VERSION ||
        m.type != AD_EPR_HELLO || m.mac != ad_epr_mac(&m, sizeof m, h->nonce)) {
        ad_epr_answer_send(h, -EACCES,
                           "a request from %s that is not from a daemon of this job (no valid "
                           "MAC): refused",
                           h->where);
        fprintf(stderr,
                "mpirun: host '%s': refused an endpoint request from %s: not from a "
                "daemon of this job\n",
                d->host != NULL ? d->host : "?", h->where);
        goto out;
    }
    struct ad_job *job = NULL;
    for (int j = 0; j < d->njobs; j++)
        if (strcmp(d->jobs[j]->jobid, m.job) == 0)
            job = d->jobs[j];
    struct ad_proc *q = ad_epr_proc(job, m.peer);
    int same = strcmp(m.ajob, m.job) == 0, anode = -1;
    if (job != NULL && same)
        anode = ad_tree_rank_node(d, job, m.asker); /* job 0's placement; -1 a spawned job's */
    if (job == NULL) {
        ad_epr_answer_send(h, -EACCES,
                           "rank %d asked for rank %d of job '%.40s', which does not run on host "
                           "%s",
                           m.asker, m.peer, m.job, d->host);
    } else if (m.asker < 0 || (same && (m.asker >= job->size || m.asker == m.peer)) ||
               (anode >= 1 && anode != m.node)) {
        ad_epr_answer_send(h, -EINVAL,
                           "a request for rank %d of job %s names rank %d as the asker, which "
                           "does not run on the asking daemon's host",
                           m.peer, job->jobid, m.asker);
    } else if (m.peer < 0 || m.peer >= job->size) {
        ad_epr_answer_send(h, -ENOENT,
                           "rank %d asked for rank %d of job %s, which has no such rank", m.asker,
                           m.peer, job->jobid);
    } else if (q == NULL) {
        ad_epr_answer_send(h, -EHOSTUNREACH,
                           "rank %d asked for rank %d of job %s, which does not run on host %s",
                           m.asker, m.peer, job->jobid, d->host);
    } else if (m.token != q->ep_token) {
        ad_epr_answer_send(h, -EACCES,
                           "rank %d asked for rank %d of job %s with token %016llx, which is not "
                           "that rank's (a forged card)",
                           m.asker, m.peer, job->jobid, (unsigned long long)m.token);
    } else if (q->ep_fd < 0 || !q->running) {
        ad_epr_answer_send(h, -ECONNREFUSED, "rank %d asked for rank %d of job %s, which has ended",
                           m.asker, m.peer, job->jobid);
    } else {
        sock_ep_msg in = {.magic = SOCK_EP_MAGIC,
                          .version = SOCK_VERSION,
                          .type = SOCK_EP_INCOMING,
                          .rank = m.asker};
        snprintf(in.job, sizeof in.job, "%s", m.ajob);
        int one = 1;
        (void)setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ad_epr_answer_send(h, 0, "granted");
        /* blocking again (the rank's socket is its own business), or relayed */
        ad_epr_hand(q, &in, h, ad_relay_enabled());
    }
out:
    ad_epr_hs_end(h);
}

/* C: a complete answer: GRANT the socket to the asker, or pass the refusal on */
static void ad_epr_answer_in(struct ad_daemon *d, struct ad_epr_hs *h)
{
    ad_epr_answer a;
    memcpy(&a, h->buf, sizeof a);
    a.text[sizeof a.text - 1] = 0;
    if (a.magic != AD_EPR_MAGIC || a.version != AD_EPR_VERSION || a.type != AD_EPR_ANSWER ||
        a.mac != ad_epr_mac(&a, sizeof a, h->nonce)) {
        ad_epr_fail(d, h, -EPROTO,
                    "rank %d asked for rank %d: the daemon at %s did not prove it is one of this "
                    "job's (no valid MAC)",
                    h->asker, h->peer, h->where);
        return;
    }
    if (a.status != 0) {
        ad_epr_fail(d, h, a.status < 0 ? a.status : -EPROTO, "%s", a.text);
        return;
    }
    struct ad_job *job = ad_job_by_num(d, h->jobnum);
    struct ad_proc *p = ad_epr_proc(job, h->asker);
    if (p != NULL && p->ep_fd >= 0) {
        ad_epr_grant_socket(p, h, ad_relay_enabled());
    }
    ad_epr_hs_end(h);
}

/* ---- endpoints between two mpiruns on one host ------------------------------------------
 *
 * Every daemon that runs ranks listens on the abstract Unix socket "@dcfa-ad-<M>", M being
 * its mpirun's part of every job id ("j<pid>_<rand>", the job ids of spawned jobs add "_<n>").
 * A rank's card names its job, so it names its daemon; the address only finds it, the right
 * is checked by a challenge: C connects, L sends CHALLENGE (its nonce), C sends an
 * ad_epf_hello with a MAC under the right (the peer rank's token from its card, or the
 * segment's tag from its name) over the hello and L's nonce, L checks it with the right it
 * holds and answers ANSWER, a grant with a MAC under the right over C's nonce: both daemons
 * prove they know the right, neither sends it. A granted connection is the connection itself
 * (INCOMING to the peer, GRANT to the asker, as across hosts); a granted segment comes as the
 * memfd with the ANSWER. A refusal carries no MAC (it grants nothing). */

static void ad_epf_seg(struct ad_job *job, struct ad_proc *p, int op, const char *name,
                       unsigned long long size, unsigned seq);
static void ad_epf_request(struct ad_daemon *d, struct ad_job *mine, struct ad_proc *p,
                           const sock_ep_msg *req);

/* the length of jobid's mpirun part: up to its second '_' */
static size_t ad_epf_mpirun_len(const char *jobid)
{
    const char *u = strchr(jobid, '_');
    if (u == NULL)
        return strlen(jobid);
    const char *v = strchr(u + 1, '_');
    return v != NULL ? (size_t)(v - jobid) : strlen(jobid);
}

/* 1 when jobid is a job of another mpirun (and looks like one: "j<hex>_<hex>...") */
static int ad_epf_is_foreign(const char *jobid)
{
    size_t n = ad_epf_mpirun_len(jobid);
    if (epr.self[0] == 0 || jobid[0] != 'j' || n < 4 || n >= 32 ||
        strspn(jobid, "j0123456789abcdef_") != strlen(jobid))
        return 0;
    return !(n == strlen(epr.self) && strncmp(jobid, epr.self, n) == 0);
}

static socklen_t ad_epf_addr(struct sockaddr_un *a, const char *jobid)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "dcfa-ad-%.*s",
                     (int)ad_epf_mpirun_len(jobid), jobid);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static uint64_t ad_epf_mac(uint64_t right, const void *msg, size_t len, const uint64_t nonce[2])
{
    const uint64_t key[2] = {right, AD_EPF_KEY2};
    unsigned char m[sizeof(ad_epr_hello) + 16];
    _Static_assert(sizeof(ad_epr_hello) >= sizeof(ad_epf_hello), "hello is the larger");
    memcpy(m, msg, len);
    memset(m + len - sizeof(uint64_t), 0, sizeof(uint64_t)); /* the mac field, last */
    memcpy(m + len, nonce, 16);
    return util_siphash(key, m, len + 16);
}

int ad_epf_listen(struct ad_daemon *d, const char *jobid)
{
    struct sockaddr_un a;
    epr.d = d;
    ad_seg_set_foreign(ad_epf_seg, ad_epf_is_foreign);
    ad_ep_set_foreign(ad_epf_is_foreign, ad_epf_request);
    ad_epr_attach();
    snprintf(epr.self, sizeof epr.self, "%.*s", (int)ad_epf_mpirun_len(jobid), jobid);
    socklen_t al = ad_epf_addr(&a, jobid);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, al) != 0 || listen(fd, 64) != 0) {
        /* taken (another daemon of this mpirun on this host, or a squatter): this daemon
         * takes no requests of other mpiruns; its own requests still go out */
        int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    epr.ffd = fd;
    return 0;
}

/* C: over TCP to the daemon at daddr ("<port>:<networks>", from the peer's card), which runs
 * on another host: 0 connecting, 1 daddr names this host (or nothing usable: the Unix socket
 * then), -1 failed (the asker has its refusal) */
static int ad_epf_start_tcp(struct ad_epr_hs *h, struct ad_job *mine, struct ad_proc *p,
                            const char *daddr)
{
    util_net nets[UTIL_NET_MAX];
    char *end;
    long port = strtol(daddr, &end, 10);
    if (end == daddr || *end != ':' || port <= 0 || port > 65535)
        return 1;
    int nn = util_net_parse(end + 1, strlen(end + 1), nets, UTIL_NET_MAX);
    if (nn <= 0 || ad_epr_same_host(end + 1))
        return 1;
    h->tcp = 1;
    h->port = (int)port;
    ad_epr_order(h, nets, nn, 0);
    if (ad_epr_connect_next(h) != 0) {
        ad_epr_fail(epr.d, h, -EHOSTUNREACH,
                    "rank %d of job %s asked for rank %d of job '%.40s' of another mpirun: no "
                    "address of its daemon (%.80s) is reachable from here",
                    p->rank, mine->jobid, h->peer, h->pjob, daddr);
        return -1;
    }
    return 0;
}

/* C: a request of p (of job mine) that another mpirun's daemon answers: on this host through
 * its Unix socket, on another (daddr, a connection only) over TCP to its data port */
static void ad_epf_start(struct ad_job *mine, struct ad_proc *p, int op, const char *pjob, int peer,
                         uint64_t right, const char *name, uint64_t size, uint32_t seq,
                         const char *daddr)
{
    struct ad_epr_hs *h = ad_epr_hs_new(-1);
    struct sockaddr_un a;
    sock_ep_msg req = {.seq = seq, .rank = peer};
    if (h == NULL) {
        if (op == AD_EPF_CONNECT)
            ad_ep_refuse(p, &req, -ENOMEM, "rank %d asked for rank %d of job %s: out of memory",
                         p->rank, peer, pjob);
        else
            ad_seg_reply(p, seq, name, 0, SEG_REFUSE, -ENOMEM, -1, "out of memory");
        return;
    }
    h->foreign = 1;
    h->op = op;
    h->jobnum = mine->num;
    h->asker = p->rank;
    h->peer = peer;
    h->seq = seq;
    h->right = right;
    h->size = size;
    snprintf(h->pjob, sizeof h->pjob, "%s", pjob);
    snprintf(h->name, sizeof h->name, "%s", name != NULL ? name : "");
    if (op == AD_EPF_CONNECT && daddr != NULL && daddr[0] != 0 &&
        ad_epf_start_tcp(h, mine, p, daddr) <= 0)
        return;
    socklen_t al = ad_epf_addr(&a, pjob);
    snprintf(h->where, sizeof h->where, "@%.22s", a.sun_path + 1);
    h->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (h->fd < 0 || connect(h->fd, (struct sockaddr *)&a, al) != 0) {
        int e = errno;
        if (op == AD_EPF_CONNECT)
            ad_epr_fail(epr.d, h, -EHOSTUNREACH,
                        "rank %d of job %s asked for rank %d of job '%.40s' of another mpirun, "
                        "whose daemon takes no requests on this host (@dcfa-ad-%.24s: %s)",
                        p->rank, mine->jobid, peer, pjob, epr.self[0] ? a.sun_path + 9 : "?",
                        strerror(e));
        else
            ad_epr_fail(epr.d, h, -ENOENT,
                        "rank %d of job %s asked to %s segment %.60s of another mpirun, whose "
                        "daemon takes no requests on this host (%s)",
                        p->rank, mine->jobid, op == AD_EPF_OPEN ? "open" : "remove", name,
                        strerror(e));
        return;
    }
    h->state = AD_EPR_WAIT_CHAL;
    h->got = 0;
}

/* ad_ep.c: a REQUEST for a rank of another mpirun's job */
static void ad_epf_request(struct ad_daemon *d, struct ad_job *mine, struct ad_proc *p,
                           const sock_ep_msg *req)
{
    char pjob[SOCK_EP_JOB_MAX];
    (void)d;
    snprintf(pjob, sizeof pjob, "%.*s", (int)strnlen(req->job, sizeof req->job), req->job);
    if (req->rank < 0) {
        ad_ep_refuse(p, req, -ENOENT, "rank %d asked for rank %d of job %s, which has no such rank",
                     p->rank, req->rank, pjob);
        return;
    }
    /* the peer's daemon's data address, from its card (text is free in a REQUEST) */
    char daddr[SOCK_EP_TEXT_MAX];
    snprintf(daddr, sizeof daddr, "%.*s", (int)strnlen(req->text, sizeof req->text), req->text);
    ad_epf_start(mine, p, AD_EPF_CONNECT, pjob, req->rank, req->token, NULL, 0, req->seq, daddr);
}

/* ad_seg.c: an OPEN or REMOVE of a tagged name of another mpirun's job */
static void ad_epf_seg(struct ad_job *job, struct ad_proc *p, int op, const char *name,
                       unsigned long long size, unsigned seq)
{
    char oj[SOCK_EP_JOB_MAX];
    size_t nlen = strlen(name), jl = strcspn(name + 6, "-");
    snprintf(oj, sizeof oj, "%.*s", (int)jl, name + 6);
    uint64_t tag = strtoull(name + nlen - 16, NULL, 16);
    ad_epf_start(job, p, op == SEG_OPEN ? AD_EPF_OPEN : AD_EPF_REMOVE, oj, -1, tag, name, size, seq,
                 NULL);
}

/* L: a connection from another mpirun's daemon */
static void ad_epf_accept(void)
{
    for (;;) {
        int fd = accept4(epr.ffd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        struct ad_epr_hs *h = ad_epr_hs_new(fd);
        if (h == NULL) {
            close(fd);
            continue;
        }
        h->foreign = 2;
        snprintf(h->where, sizeof h->where, "another mpirun");
        ad_epr_challenge c = {.magic = AD_EPR_MAGIC,
                              .version = AD_EPR_VERSION,
                              .type = AD_EPR_CHALLENGE,
                              .nonce = {h->nonce[0], h->nonce[1]}};
        h->state = AD_EPR_WAIT_HELLO;
        if (ad_epr_write(fd, &c, sizeof c) != 0)
            ad_epr_hs_end(h);
    }
}

/* L: an answer; a grant (status 0) carries a MAC under the right, and fd (a segment) */
static void ad_epf_answer_send(struct ad_epr_hs *h, int status, uint64_t right, int fd,
                               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void ad_epf_answer_send(struct ad_epr_hs *h, int status, uint64_t right, int fd,
                               const char *fmt, ...)
{
    ad_epr_answer a = {
        .magic = AD_EPR_MAGIC, .version = AD_EPR_VERSION, .type = AD_EPR_ANSWER, .status = status};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a.text, sizeof a.text, fmt, ap);
    va_end(ap);
    if (status == 0)
        a.mac = ad_epf_mac(right, &a, sizeof a, h->theirs);
    (void)ad_send_fd(h->fd, &a, sizeof a, fd);
}

struct ad_epf_find {
    const ad_epf_hello *m;
    const uint64_t *nonce;
    size_t stem;
    const char *name;
    uint64_t size, tag;
    int fd;
};

/* a segment whose name is the stem and a tag under which the hello's MAC holds */
static int ad_epf_find_seg(const char *name, unsigned long long size, int fd, void *ctx)
{
    struct ad_epf_find *f = ctx;
    if (strlen(name) != f->stem + 16 || strncmp(name, f->m->stem, f->stem) != 0)
        return 0;
    uint64_t tag = strtoull(name + f->stem, NULL, 16);
    if (f->m->mac != ad_epf_mac(tag, f->m, sizeof *f->m, f->nonce))
        return 0;
    f->name = name;
    f->size = size;
    f->tag = tag;
    f->fd = fd;
    return 1;
}

/* L: a complete hello of another mpirun's daemon */
static void ad_epf_hello_in(struct ad_daemon *d, struct ad_epr_hs *h)
{
    ad_epf_hello m;
    memcpy(&m, h->buf, sizeof m);
    m.job[sizeof m.job - 1] = 0;
    m.ajob[sizeof m.ajob - 1] = 0;
    m.stem[sizeof m.stem - 1] = 0;
    h->theirs[0] = m.nonce[0];
    h->theirs[1] = m.nonce[1];
    struct ad_job *job = NULL;
    for (int j = 0; j < d->njobs; j++)
        if (d->jobs[j] != NULL && strcmp(d->jobs[j]->jobid, m.job) == 0)
            job = d->jobs[j];
    if (m.magic != AD_EPR_MAGIC || m.version != AD_EPR_VERSION || m.type != AD_EPF_HELLO ||
        m.op < AD_EPF_CONNECT || m.op > AD_EPF_REMOVE) {
        ad_epf_answer_send(h, -EPROTO, 0, -1, "a malformed request of another mpirun's daemon");
    } else if (job == NULL) {
        ad_epf_answer_send(h, -ENOENT, 0, -1,
                           "rank %d of job %.40s asked for job '%.40s', which this mpirun's "
                           "daemon does not run%s",
                           m.asker, m.ajob, m.job, h->tcp ? " on this host" : "");
    } else if (h->tcp && m.op != AD_EPF_CONNECT) {
        ad_epf_answer_send(h, -EPROTO, 0, -1,
                           "rank %d of job %.40s asked for a segment of job %s from another host "
                           "(segments are shared on one host only)",
                           m.asker, m.ajob, job->jobid);
    } else if (m.op == AD_EPF_CONNECT) {
        struct ad_proc *q = ad_epr_proc(job, m.peer);
        if (m.peer < 0 || m.peer >= job->size) {
            ad_epf_answer_send(h, -ENOENT, 0, -1,
                               "rank %d of job %.40s asked for rank %d of job %s, which has no "
                               "such rank",
                               m.asker, m.ajob, m.peer, job->jobid);
        } else if (q == NULL) {
            ad_epf_answer_send(h, -EHOSTUNREACH, 0, -1,
                               "rank %d of job %.40s asked for rank %d of job %s, which does "
                               "not run on this host",
                               m.asker, m.ajob, m.peer, job->jobid);
        } else if (m.mac != ad_epf_mac(q->ep_token, &m, sizeof m, h->nonce)) {
            ad_epf_answer_send(h, -EACCES, 0, -1,
                               "rank %d of job %.40s asked for rank %d of job %s of another "
                               "mpirun without that rank's token (a forged card: its daemon's "
                               "challenge failed)",
                               m.asker, m.ajob, m.peer, job->jobid);
        } else if (q->ep_fd < 0 || !q->running) {
            ad_epf_answer_send(h, -ECONNREFUSED, 0, -1,
                               "rank %d of job %.40s asked for rank %d of job %s, which has "
                               "ended",
                               m.asker, m.ajob, m.peer, job->jobid);
        } else {
            sock_ep_msg in = {.magic = SOCK_EP_MAGIC,
                              .version = SOCK_VERSION,
                              .type = SOCK_EP_INCOMING,
                              .rank = m.asker};
            snprintf(in.job, sizeof in.job, "%s", m.ajob);
            ad_epf_answer_send(h, 0, q->ep_token, -1, "granted");
            ad_epr_hand(q, &in, h, h->tcp && ad_relay_enabled());
        }
    } else {
        struct ad_epf_find f = {.m = &m, .nonce = h->nonce, .stem = strlen(m.stem), .fd = -1};
        const char *what = m.op == AD_EPF_OPEN ? "open" : "remove";
        if (ad_seg_each(job->jobid, ad_epf_find_seg, &f) == 0) {
            ad_epf_answer_send(h, -ENOENT, 0, -1,
                               "rank %d of job %.40s asked to %s segment %.60s<tag> of another "
                               "mpirun, which does not exist (or not with that tag)",
                               m.asker, m.ajob, what, m.stem);
        } else if (m.op == AD_EPF_OPEN && f.size != m.size) {
            ad_epf_answer_send(h, -EINVAL, f.tag, -1,
                               "rank %d asked to open segment %.60s as %llu bytes; it has %llu",
                               m.asker, f.name, (unsigned long long)m.size,
                               (unsigned long long)f.size);
        } else if (m.op == AD_EPF_OPEN) {
            ad_epf_answer_send(h, 0, f.tag, f.fd, "granted");
        } else {
            ad_epf_answer_send(h, 0, f.tag, -1, "removed");
            ad_seg_drop(job->jobid, f.name);
        }
    }
    ad_epr_hs_end(h);
}

/* C: the challenge came: the hello */
static int ad_epf_hello_send(struct ad_daemon *d, struct ad_epr_hs *h, const uint64_t nonce[2])
{
    struct ad_job *job = ad_job_by_num(d, h->jobnum);
    ad_epf_hello m = {.magic = AD_EPR_MAGIC,
                      .version = AD_EPR_VERSION,
                      .type = AD_EPF_HELLO,
                      .op = (uint32_t)h->op,
                      .asker = h->asker,
                      .peer = h->peer,
                      .size = h->size,
                      .nonce = {h->nonce[0], h->nonce[1]}};
    snprintf(m.job, sizeof m.job, "%s", h->pjob);
    if (job != NULL)
        snprintf(m.ajob, sizeof m.ajob, "%s", job->jobid);
    if (h->op != AD_EPF_CONNECT)
        snprintf(m.stem, sizeof m.stem, "%.*s", (int)(strlen(h->name) - 16), h->name);
    m.mac = ad_epf_mac(h->right, &m, sizeof m, nonce);
    return ad_epr_write(h->fd, &m, sizeof m);
}

/* C: a complete answer of another mpirun's daemon */
static void ad_epf_answer_in(struct ad_daemon *d, struct ad_epr_hs *h)
{
    ad_epr_answer a;
    memcpy(&a, h->buf, sizeof a);
    a.text[sizeof a.text - 1] = 0;
    if (a.magic != AD_EPR_MAGIC || a.version != AD_EPR_VERSION || a.type != AD_EPR_ANSWER) {
        ad_epr_fail(d, h, -EPROTO, "rank %d asked another mpirun's daemon (%s): no answer",
                    h->asker, h->where);
        return;
    }
    if (a.status != 0) { /* a refusal grants nothing: its text is passed on as it is */
        ad_epr_fail(d, h, a.status < 0 ? a.status : -EPROTO, "%s", a.text);
        return;
    }
    if (a.mac != ad_epf_mac(h->right, &a, sizeof a, h->nonce)) {
        ad_epr_fail(d, h, -EPROTO,
                    "rank %d asked another mpirun's daemon (%s), whose grant does not prove it "
                    "knows the right (no valid MAC)",
                    h->asker, h->where);
        return;
    }
    struct ad_job *job = ad_job_by_num(d, h->jobnum);
    struct ad_proc *p = ad_epr_proc(job, h->asker);
    if (p == NULL || p->ep_fd < 0) {
        ad_epr_hs_end(h);
        return;
    }
    if (h->op == AD_EPF_CONNECT) {
        /* a Unix socket of this host is never relayed, a TCP connection to another host is */
        ad_epr_grant_socket(p, h, h->tcp && ad_relay_enabled());
    } else if (h->op == AD_EPF_REMOVE) {
        ad_seg_reply(p, h->seq, h->name, 0, SEG_DONE, 0, -1, NULL);
    } else {
        struct stat st;
        if (h->rfd < 0 || fstat(h->rfd, &st) != 0 || !S_ISREG(st.st_mode) ||
            (uint64_t)st.st_size != h->size) {
            ad_epr_fail(d, h, -EPROTO,
                        "rank %d asked to open segment %.60s: another mpirun's daemon granted "
                        "no segment of %llu bytes",
                        h->asker, h->name, (unsigned long long)h->size);
            return;
        }
        ad_seg_reply(p, h->seq, h->name, h->size, SEG_GRANT, 0, h->rfd, NULL);
    }
    ad_epr_hs_end(h);
}

static void ad_epr_step(struct ad_daemon *d, struct ad_epr_hs *h, short ev)
{
    int rc;
    switch (h->state) {
    case AD_EPR_CONNECTING: {
        int err = 0;
        socklen_t el = sizeof err;
        if (!(ev & (POLLOUT | POLLERR | POLLHUP)))
            return;
        if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
            err = errno;
        if (err != 0) {
            if (ad_epr_connect_next(h) != 0) {
                ad_epr_fail(d, h, -ECONNREFUSED,
                            "rank %d asked for rank %d: cannot connect to its host's daemon at "
                            "%s: %s",
                            h->asker, h->peer, h->where, strerror(err));
            }
            return;
        }
        h->state = AD_EPR_WAIT_CHAL;
        h->got = 0;
        return;
    }
    case AD_EPR_WAIT_CHAL: {
        if ((rc = ad_epr_read(h, sizeof(ad_epr_challenge))) == 0)
            return;
        ad_epr_challenge c;
        memcpy(&c, h->buf, sizeof c);
        if (rc < 0 || c.magic != AD_EPR_MAGIC || c.version != AD_EPR_VERSION ||
            c.type != AD_EPR_CHALLENGE) {
            ad_epr_fail(d, h, -EPROTO, "rank %d asked for rank %d: the daemon at %s %s", h->asker,
                        h->peer, h->where, rc < 0 ? "closed the connection" : "sent no challenge");
            return;
        }
        if (h->foreign == 1) {
            h->got = 0;
            h->state = AD_EPR_WAIT_ANS;
            if (ad_epf_hello_send(d, h, c.nonce) != 0)
                ad_epr_fail(d, h, -EPROTO,
                            "rank %d asked another mpirun's daemon (%s), which closed the "
                            "connection",
                            h->asker, h->where);
            return;
        }
        struct ad_job *job = ad_job_by_num(d, h->jobnum);
        ad_epr_hello m = {.magic = AD_EPR_MAGIC,
                          .version = AD_EPR_VERSION,
                          .type = AD_EPR_HELLO,
                          .asker = h->asker,
                          .peer = h->peer,
                          .node = ad_t(d) != NULL ? ad_t(d)->node : -1,
                          .token = h->token,
                          .nonce = {h->nonce[0], h->nonce[1]}};
        snprintf(m.job, sizeof m.job, "%s", h->pjob);
        if (job != NULL) {
            snprintf(m.ajob, sizeof m.ajob, "%s", job->jobid);
            snprintf(m.akvs, sizeof m.akvs, "%s", job->kvsname);
            snprintf(m.aspawner, sizeof m.aspawner, "%s", job->spawner);
        }
        m.mac = ad_epr_mac(&m, sizeof m, c.nonce);
        h->got = 0;
        h->state = AD_EPR_WAIT_ANS;
        if (ad_epr_write(h->fd, &m, sizeof m) != 0)
            ad_epr_fail(d, h, -EPROTO,
                        "rank %d asked for rank %d: the daemon at %s closed the connection",
                        h->asker, h->peer, h->where);
        return;
    }
    case AD_EPR_WAIT_ANS:
        if ((rc = ad_epr_read(h, sizeof(ad_epr_answer))) > 0) {
            if (h->foreign == 1)
                ad_epf_answer_in(d, h);
            else
                ad_epr_answer_in(d, h);
        } else if (rc < 0) {
            ad_epr_fail(d, h, -EPROTO,
                        "rank %d asked for rank %d: the daemon at %s closed the connection "
                        "without an answer",
                        h->asker, h->peer, h->where);
        }
        return;
    case AD_EPR_WAIT_HELLO:
        if (h->tcp && h->foreign == 0 && h->got < 8) {
            /* the data port: the type says whose hello it is (this job's daemon, or another
             * mpirun's asking with a rank's token) */
            if ((rc = ad_epr_read(h, 8)) <= 0) {
                if (rc < 0)
                    ad_epr_hs_end(h);
                return;
            }
            if (h->buf[5] == AD_EPF_HELLO)
                h->foreign = 2;
        }
        rc = ad_epr_read(h, h->foreign == 2 ? sizeof(ad_epf_hello) : sizeof(ad_epr_hello));
        if (rc > 0 && h->foreign == 2)
            ad_epf_hello_in(d, h);
        else if (rc > 0)
            ad_epr_hello_in(d, h);
        else if (rc < 0)
            ad_epr_hs_end(h);
        return;
    case AD_EPR_DEAD:
        return;
    }
}

/* ---- the loop's hooks ----------------------------------------------------------------- */

static int ad_epr_nfds(struct ad_daemon *d)
{
    (void)d;
    return 2 + epr.nhs;
}

static int ad_epr_pollfds(struct ad_daemon *d, struct pollfd *pfds, struct ad_fd_ref *refs, int n)
{
    double now = ad_now();
    for (struct ad_epr_hs **pp = &epr.hs; *pp != NULL;) {
        struct ad_epr_hs *h = *pp;
        if (h->state != AD_EPR_DEAD && now >= h->deadline) {
            if (h->state == AD_EPR_WAIT_HELLO) {
                ad_epr_hs_end(h);
            } else {
                ad_epr_fail(d, h, -ETIMEDOUT,
                            "rank %d asked for rank %d: no answer from its host's daemon at %s "
                            "within %.0f s",
                            h->asker, h->peer, h->where, AD_EPR_TIMEOUT);
            }
        }
        if (h->state == AD_EPR_DEAD) {
            *pp = h->next;
            epr.nhs--;
            free(h);
            continue;
        }
        pfds[n] = (struct pollfd){.fd = h->fd,
                                  .events = h->state == AD_EPR_CONNECTING ? POLLOUT : POLLIN};
        refs[n++] = (struct ad_fd_ref){.kind = AD_FD_EPR, .epr = h};
        pp = &h->next;
    }
    if (epr.lfd >= 0) {
        pfds[n] = (struct pollfd){.fd = epr.lfd, .events = POLLIN};
        refs[n++] = (struct ad_fd_ref){.kind = AD_FD_EPR, .epr = NULL};
    }
    if (epr.ffd >= 0) { /* told from the data port by its fd */
        pfds[n] = (struct pollfd){.fd = epr.ffd, .events = POLLIN};
        refs[n++] = (struct ad_fd_ref){.kind = AD_FD_EPR, .epr = NULL};
    }
    return n;
}

static int ad_epr_event(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    if (ref->epr == NULL) { /* the data port or the listener for other mpiruns */
        ad_epr_accept();
        ad_epf_accept();
    } else
        ad_epr_step(d, ref->epr, revents);
    return 0;
}

static double ad_epr_deadline(struct ad_daemon *d)
{
    double next = 0;
    (void)d;
    for (const struct ad_epr_hs *h = epr.hs; h != NULL; h = h->next)
        if (h->state != AD_EPR_DEAD && (next == 0 || h->deadline < next))
            next = h->deadline;
    return next;
}

static const struct ad_source ad_epr_source = {ad_epr_nfds, ad_epr_pollfds, ad_epr_deadline};

void ad_epr_attach(void)
{
    if (epr.attached++)
        return;
    ad_reactor_handle(AD_FD_EPR, ad_epr_event);
    ad_ep_set_remote(ad_epr_request);
    (void)ad_reactor_add_source(&ad_epr_source);
}

void ad_epr_close(void)
{
    while (epr.hs != NULL) {
        struct ad_epr_hs *h = epr.hs;
        epr.hs = h->next;
        if (h->fd >= 0)
            close(h->fd);
        free(h);
    }
    epr.nhs = 0;
    if (epr.lfd >= 0)
        close(epr.lfd);
    epr.lfd = -1;
    if (epr.ffd >= 0)
        close(epr.ffd);
    epr.ffd = -1;
    free(epr.node_info);
    epr.node_info = NULL;
    epr.nnodes = 0;
}
