/* Partitioned point-to-point (MPI 4.1 chapter 4), on the core's point-to-point.
 *
 * A partitioned request is a persistent request (MPII_REQ_PERSIST) whose
 * owner is an mpii_part. Pairing: at MPI_Psend_init the sender sends a small
 * SETUP message {base, partitions, bytes per partition} on the
 * communicator's collective context with tag PART_TAG_SETUP + tag; the k-th
 * MPI_Precv_init for (source, tag) receives the k-th of them (messages of one
 * pair and tag are not overtaken), so the two sides pair in the order of
 * their init calls whatever each side's partitioning. Data: MPI_Pready(p)
 * starts a send of partition p, straight from the user's buffer, with tag
 * part_tag(base + p); `base` is a per-(communicator, destination) running
 * count of the sender's partitions, so every partition of every partitioned
 * operation in flight between two processes has a tag of its own (tags wrap
 * after 2^30 - 16 partitions). The receiver, once it has the SETUP, posts one
 * receive per sender partition at each MPI_Start, directly into its buffer
 * (contiguous datatypes) or into a staging copy that is unpacked by byte
 * range. Rounds reuse the tags: a later round's messages cannot overtake
 * the earlier round's. Completion is checked by mpii_part_poll, which the
 * completion functions call for these requests (mpii_req_is_done).
 *
 * Tags on the collective context: collectives use 0 .. 2^30-1 and
 * communicator construction INT_MIN .. -2^30+5; SETUP uses 2^30 + tag and
 * the data -2 .. -2^30+15. */
#include "mpi/mpii.h"
#include "mpi/pt2pt/pt2pt.h"
#include "core/core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PART_TAG_SETUP (1 << 30)
#define PART_TAG_SPAN ((1u << 30) - 16)

struct mpii_part {
    int is_send;
    char *buf;
    int partitions;
    MPI_Count count;            /* elements of dt per partition */
    mpii_dtype *t;
    int peer, tag;
    MPI_Comm comm;
    size_t psize;               /* packed bytes of one of my partitions */
    uint32_t base;              /* tag base of the sender's partitions */
    core_req **sub;             /* per partition (sender's, on both sides) of this round */
    int nsub;
    char *ready;                /* send: Pready called for partition p in this round */
    int nready;
    /* receive side */
    core_req *setup_req;
    int64_t setup[3];           /* base, partitions, bytes per partition */
    int have_setup, posted;
    char *stage;                /* packed copy for a non-contiguous datatype */
    char *unpacked;             /* staging: sender partition q already unpacked */
};

/* the running tag base per (communicator, destination) of this process */
typedef struct part_base {
    struct part_base *next;
    uint32_t ctx;
    int lpid;
    uint32_t next_base;
} part_base;
static part_base *part_bases;

static int part_data_tag(uint32_t base, int p)
{
    return -2 - (int)((base + (uint32_t)p) % PART_TAG_SPAN);
}

static uint32_t part_take_base(const mpii_comm *c, int lpid, int partitions)
{
    part_base *b;
    for (b = part_bases; b; b = b->next)
        if (b->ctx == c->ctx && b->lpid == lpid)
            break;
    if (!b) {
        b = util_calloc(1, sizeof *b);
        b->ctx = c->ctx;
        b->lpid = lpid;
        b->next = part_bases;
        part_bases = b;
    }
    uint32_t base = b->next_base;
    b->next_base = (uint32_t)((b->next_base + (uint32_t)partitions) % PART_TAG_SPAN);
    return base;
}

void mpii_part_finalize(void)
{
    while (part_bases) {
        part_base *b = part_bases;
        part_bases = b->next;
        free(b);
    }
}

static core_req *part_of(mpii_part *pt, MPI_Comm comm)
{
    core_req *r = mpii_persist_new(comm);
    r->owner = pt;
    mpii_persist *p = mpii_persist_of(r);
    p->comm = comm;
    p->peer = pt->peer;
    p->tag = pt->tag;
    p->is_send = pt->is_send;
    return r;
}

int mpii_part_init(int is_send, void *buf, int partitions, MPI_Count count, MPI_Datatype dt,
                   int peer, int tag, mpii_comm *c, core_req **out)
{
    mpii_part *pt = util_calloc(1, sizeof *pt);
    pt->is_send = is_send;
    pt->buf = buf;
    pt->partitions = partitions;
    pt->count = count;
    pt->t = mpii_dtype_get(dt);
    mpii_dtype_ref(pt->t);
    pt->peer = peer;
    pt->tag = tag;
    pt->comm = c->handle;
    pt->psize = (size_t)count * pt->t->dt.size;
    if (is_send) {
        pt->ready = util_calloc((size_t)partitions + 1, 1);
        pt->sub = util_calloc((size_t)partitions + 1, sizeof *pt->sub);
        pt->nsub = partitions;
    }
    if (peer != MPI_PROC_NULL) {
        int rc;
        if (is_send) {
            /* the pairing message: nobody waits for it */
            pt->base = part_take_base(c, mpii_comm_peer_lpid(c, peer), partitions);
            pt->setup[0] = pt->base;
            pt->setup[1] = partitions;
            pt->setup[2] = (int64_t)pt->psize;
            core_req *s;
            rc = mpii_start_send(pt->setup, 3, MPI_INT64_T, peer, PART_TAG_SETUP + tag, c, 1,
                                 CORE_SEND_STD, &s);
            if (rc == MPI_SUCCESS)
                mpii_req_detach(s);
        } else {
            rc = mpii_start_recv(pt->setup, 3, MPI_INT64_T, peer, PART_TAG_SETUP + tag, c, 1,
                                 &pt->setup_req);
        }
        if (rc != MPI_SUCCESS) {
            mpii_dtype_release(pt->t);
            free(pt->ready);
            free(pt->sub);
            free(pt);
            return rc;
        }
    }
    *out = part_of(pt, c->handle);
    return MPI_SUCCESS;
}

/* the receive side has the sender's partitioning: check it and make room */
static void part_got_setup(mpii_part *pt)
{
    pt->have_setup = 1;
    pt->base = (uint32_t)pt->setup[0];
    int64_t np = pt->setup[1], ps = pt->setup[2];
    int err = mpii_req_error(pt->setup_req);
    mpii_req_release(pt->setup_req);
    pt->setup_req = NULL;
    if (err != MPI_SUCCESS || np < 0 || ps < 0 ||
        (uint64_t)np * (uint64_t)ps > (uint64_t)pt->partitions * pt->psize) {
        /* more data than room (as a receive would): every round fails with MPI_ERR_TRUNCATE */
        pt->nsub = -1;
        return;
    }
    pt->nsub = (int)np;
    pt->setup[2] = ps;
    pt->sub = util_calloc((size_t)(np ? np : 1), sizeof *pt->sub);
    if (!pt->t->dt.contig && pt->psize) {
        pt->stage = util_malloc((size_t)pt->partitions * pt->psize);
        pt->unpacked = util_calloc((size_t)(np ? np : 1), 1);
    }
}

static int part_post(mpii_part *pt)
{
    mpii_comm *c = mpii_comm_get(pt->comm);
    if (!c)
        return MPI_ERR_COMM;
    size_t ps = (size_t)pt->setup[2];
    char *dst = pt->stage ? pt->stage : pt->buf + pt->t->dt.true_lb;
    for (int q = 0; q < pt->nsub; q++) {
        int rc = mpii_start_recv(dst + (size_t)q * ps, (MPI_Aint)ps, MPI_BYTE, pt->peer,
                                 part_data_tag(pt->base, q), c, 1, &pt->sub[q]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (pt->unpacked)
        memset(pt->unpacked, 0, (size_t)pt->nsub);
    pt->posted = 1;
    return MPI_SUCCESS;
}

static void part_unpack(mpii_part *pt, int q)
{
    size_t ps = (size_t)pt->setup[2];
    core_dt_unpack(pt->buf, (size_t)pt->partitions * (size_t)pt->count, &pt->t->dt,
                   (size_t)q * ps, pt->stage + (size_t)q * ps, ps);
    pt->unpacked[q] = 1;
}

/* the round's request (mpii_persist_of(r)->active, a MPII_REQ_DONE completed here) is over */
static void part_round_done(mpii_part *pt, core_req *a, int err)
{
    /* a receive reports what the sender sends, which may be less than its room */
    size_t total = pt->have_setup ? (size_t)pt->setup[1] * (size_t)pt->setup[2] : 0;
    a->status.source = pt->is_send ? MPI_ANY_SOURCE : pt->peer;
    a->status.tag = pt->is_send ? MPI_ANY_TAG : pt->tag;
    a->status.count = pt->is_send || err != MPI_SUCCESS ? 0 : (long long)total;
    a->status.error = err;
    a->complete = 1;
}

/* moves the round of a partitioned request on; returns nothing, sets
 * pt->active->complete when the round is over */
void mpii_part_poll(core_req *r)
{
    mpii_part *pt = r->owner;
    core_req *a = mpii_persist_of(r)->active;
    if (!a || a->complete)
        return;
    if (pt->peer == MPI_PROC_NULL) {
        part_round_done(pt, a, MPI_SUCCESS);
        return;
    }
    if (!pt->is_send) {
        if (!pt->have_setup) {
            if (!pt->setup_req->complete)
                return;
            part_got_setup(pt);
        }
        if (pt->nsub < 0) {
            part_round_done(pt, a, MPI_ERR_TRUNCATE);
            return;
        }
        if (!pt->posted) {
            int rc = part_post(pt);
            if (rc != MPI_SUCCESS) {
                part_round_done(pt, a, rc);
                return;
            }
        }
    } else if (pt->nready < pt->partitions) {
        return;
    }
    int err = MPI_SUCCESS;
    for (int q = 0; q < pt->nsub; q++)
        if (pt->sub[q] && !pt->sub[q]->complete)
            return;
    for (int q = 0; q < pt->nsub; q++) {
        if (!pt->sub[q])
            continue;
        if (pt->stage && !pt->unpacked[q])
            part_unpack(pt, q);
        if (mpii_req_error(pt->sub[q]) != MPI_SUCCESS && err == MPI_SUCCESS)
            err = mpii_req_error(pt->sub[q]);
        mpii_req_release(pt->sub[q]);
        pt->sub[q] = NULL;
    }
    part_round_done(pt, a, err);
}

int mpii_part_start(core_req *r)
{
    mpii_part *pt = r->owner;
    core_req *a = core_req_alloc(MPII_REQ_DONE);
    a->up.obj = r->up.obj;
    mpii_persist_of(r)->active = a;
    pt->posted = 0;
    if (pt->is_send) {
        memset(pt->ready, 0, (size_t)pt->partitions);
        pt->nready = 0;
    }
    mpii_part_poll(r);
    return MPI_SUCCESS;
}

int mpii_part_is_send(core_req *r) { return ((mpii_part *)r->owner)->is_send; }
int mpii_part_partitions(core_req *r) { return ((mpii_part *)r->owner)->partitions; }

/* MPI_ERR_ARG when partition p was already marked ready in this round */
int mpii_part_ready(core_req *r, int p)
{
    mpii_part *pt = r->owner;
    if (pt->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (pt->ready[p])
        return MPI_ERR_ARG;
    pt->ready[p] = 1;
    pt->nready++;
    mpii_comm *c = mpii_comm_get(pt->comm);
    if (!c)
        return MPI_ERR_COMM;
    const char *src = pt->buf + (ptrdiff_t)p * (ptrdiff_t)pt->count * pt->t->dt.extent;
    int rc = mpii_start_send(src, (MPI_Aint)pt->count, pt->t->handle, pt->peer,
                             part_data_tag(pt->base, p), c, 1, CORE_SEND_STD, &pt->sub[p]);
    if (pt->nready == pt->partitions)
        mpii_part_poll(r);
    return rc;
}

/* has every byte of my partition p arrived (the sender partitions that overlap it)? */
int mpii_part_arrived(core_req *r, int p)
{
    mpii_part *pt = r->owner;
    core_req *a = mpii_persist_of(r)->active;
    if (!a || pt->peer == MPI_PROC_NULL || a->complete)
        return 1;
    mpii_progress();
    mpii_part_poll(r);
    if (a->complete)
        return 1;
    if (!pt->have_setup || !pt->posted || pt->nsub <= 0)
        return 0;
    size_t ps = (size_t)pt->setup[2];
    int qlo = 0, qhi = pt->nsub - 1;
    if (ps > 0 && pt->psize > 0) {
        size_t lo = (size_t)p * pt->psize, hi = lo + pt->psize; /* bytes [lo, hi) */
        qlo = (int)(lo / ps);
        qhi = (int)((hi - 1) / ps);
        if (qhi >= pt->nsub) /* beyond what the sender sends: once all of that is there */
            qlo = 0, qhi = pt->nsub - 1;
    } /* else no bytes at all: partition p is there once every sender partition is */
    for (int q = qlo; q <= qhi; q++)
        if (pt->sub[q] && !pt->sub[q]->complete)
            return 0;
    if (pt->stage)
        for (int q = qlo; q <= qhi; q++)
            if (pt->sub[q] && !pt->unpacked[q])
                part_unpack(pt, q);
    return 1;
}

void mpii_part_free(mpii_part *pt)
{
    if (pt->setup_req) {
        if (!pt->setup_req->complete)
            core_cancel_recv(pt->setup_req);
        mpii_req_detach(pt->setup_req);
    }
    for (int q = 0; q < pt->nsub; q++)
        if (pt->sub && pt->sub[q])
            mpii_req_detach(pt->sub[q]);
    mpii_dtype_release(pt->t);
    free(pt->ready);
    free(pt->sub);
    free(pt->stage);
    free(pt->unpacked);
    free(pt);
}
