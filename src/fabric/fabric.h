/* The fabric interface: what a transport offers the protocol engine.
 * Modelled on RDMA verbs, kept small: an endpoint with an address blob,
 * lazy connections, a receive ring per connection living in the receiver's
 * memory that the sender fills with one-sided writes, and one-sided bulk
 * read/write of registered memory. A fabric never sees an MPI object or a
 * request: the core hands it plain memory and gets plain results back. */
#ifndef DCFA_FABRIC_H
#define DCFA_FABRIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct fab_conn fab_conn;   /* fabric-private per-connection state */

#define FAB_IOV_MAX 1024                /* iovec entries per side of readv/writev */

typedef struct fab_params {
    const char *job_id;     /* names this job's resources */
    int self;               /* my process id (lpid) */
    int nprocs;             /* processes known at open (the job's world) */
    unsigned nblocks;       /* ring blocks per connection (MaxCredit) */
    size_t block_size;
    int use_cma;            /* single-copy bulk transfers allowed */
} fab_params;

/* The two rings of a connection, as the core sees them: `rx` is my receive
 * ring (the peer writes it), `tx` is where I write packets bound for the peer. */
typedef struct fab_rings {
    uint8_t *rx;
    uint8_t *tx;
} fab_rings;

typedef struct fab_caps {
    int priority;           /* higher wins when several fabrics reach a peer */
    int has_rdma;           /* read/write work without the peer's help */
} fab_caps;

typedef struct fab_ops {
    const char *name;
    int (*open)(const fab_params *p, char *addr, size_t addrlen);
    void (*close)(void);
    int (*reachable)(const char *peer_addr);
    /* connect on first use; the peer learns of it through accept(). With
     * `passive` set, complete a connection the peer started (no notification). */
    int (*connect)(int peer, const char *peer_addr, int passive, fab_conn **conn,
                   fab_rings *rings);
    /* poll for a peer that started a connection to us: 1 and *peer set, 0 if none */
    int (*accept)(int *peer);
    void (*caps)(fab_caps *caps);
    /* one-sided bulk transfer between local iovecs and the peer's address
     * range [raddr, raddr+len); UTIL_EAGAIN-free: completes before returning,
     * or fails (then the core falls back to copying through the ring). */
    int (*read)(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, size_t len);
    int (*write)(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, size_t len);
    /* optional (NULL: read/write per range): many remote ranges in one go,
     * at most FAB_IOV_MAX entries on each side, the same number of bytes */
    int (*readv)(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                 int nremote);
    int (*writev)(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                  int nremote);
    /* memory a fabric uses on behalf of this connection, for the footprint report */
    size_t (*footprint)(fab_conn *c);
    void (*disconnect)(fab_conn *c);
} fab_ops;

extern const fab_ops fab_shm_ops;

#endif
