/* ad: shared-memory segments for ranks with no /dev/shm of their own (mpirun --isolate shm;
 * docs/launcher.md "--isolate shm", messages in src/util/seg_wire.h).
 *
 * The daemon keeps, per job, one memfd per segment name; a rank asks on its endpoint channel
 * to create one (a new name: a memfd of that size, its memory reserved, then sealed against
 * growing and shrinking), to open one (the name exists and has exactly that size) or to
 * remove a name (its memory lives on in the mappings). Every request must carry the asker's
 * own job, rank and endpoint token, and a name of its own job ("/dcfa-<job>-..."), or to open
 * or remove, a tagged name of another job of this mpirun that runs here (its parent, a job it
 * spawned, a sibling joined through MPI): one that ends in 16 hex digits, the creator's random
 * tag (or SipHash under its card's key), which the asker can only know from the creator's card
 * or from a message of the creator's, so the name is the capability as the token is for a
 * connection. A tagged name of a job of another mpirun on this host is asked of that mpirun's
 * daemon, which checks the tag by a challenge (ad_ep_remote.c, ad_epf_*). Anything else is
 * refused with the reason, naming the request, and nothing is
 * granted. A job's names go with the job (ad_seg_job_end). The daemon never maps a segment: it
 * holds fds. */
#include "ad_seg.h"
#include "ad_sendfd.h"
#include "ad.h"
#include "util/seg_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

struct ad_seg {
    char job[SEG_JOB_MAX];
    char name[SEG_NAME_MAX];
    uint64_t size;
    int fd;
    struct ad_seg *next;
};

static struct ad_seg *ad_segs;
static const char *const ad_seg_op[] = {"?", "create", "open", "remove"};

static void ad_seg_send(struct ad_proc *p, const seg_msg *a, int fd)
{
    if (p->ep_fd >= 0)
        (void)ad_send_fd(p->ep_fd, a, sizeof *a, fd);
}

static void ad_seg_answer(struct ad_proc *p, const seg_msg *q, int type, int status, int fd,
                          const char *fmt, ...)
{
    seg_msg a = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = (uint8_t)type,
                 .seq = q->seq,
                 .rank = q->rank,
                 .size = type == SEG_GRANT ? q->size : 0,
                 .status = status};
    memcpy(a.name, q->name, sizeof a.name);
    a.name[sizeof a.name - 1] = 0;
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a.text, sizeof a.text, fmt, ap);
        va_end(ap);
    }
    ad_seg_send(p, &a, fd);
}

void ad_seg_reply(struct ad_proc *p, unsigned seq, const char *name, unsigned long long size,
                  int type, int status, int fd, const char *text)
{
    seg_msg a = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = (uint8_t)type,
                 .seq = seq,
                 .rank = p->rank,
                 .size = type == SEG_GRANT ? size : 0,
                 .status = status};
    snprintf(a.name, sizeof a.name, "%s", name);
    if (text != NULL)
        snprintf(a.text, sizeof a.text, "%s", text);
    ad_seg_send(p, &a, fd);
}

static ad_seg_foreign_fn ad_seg_foreign;
static int (*ad_seg_is_foreign)(const char *jobid);

void ad_seg_set_foreign(ad_seg_foreign_fn fn, int (*is_foreign)(const char *jobid))
{
    ad_seg_foreign = fn;
    ad_seg_is_foreign = is_foreign;
}

int ad_seg_each(const char *job,
                int (*fn)(const char *name, unsigned long long size, int fd, void *ctx), void *ctx)
{
    for (struct ad_seg *s = ad_segs; s; s = s->next)
        if (strcmp(s->job, job) == 0) {
            int rc = fn(s->name, s->size, s->fd, ctx);
            if (rc != 0)
                return rc;
        }
    return 0;
}

void ad_seg_drop(const char *job, const char *name)
{
    for (struct ad_seg **pp = &ad_segs; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->job, job) == 0 && strcmp((*pp)->name, name) == 0) {
            struct ad_seg *s = *pp;
            *pp = s->next;
            close(s->fd);
            free(s);
            return;
        }
}

static struct ad_seg *ad_seg_find(const char *job, const char *name)
{
    for (struct ad_seg *s = ad_segs; s; s = s->next)
        if (strcmp(s->job, job) == 0 && strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

/* a new memfd of size bytes, memory reserved, sealed: fd or -errno */
static int ad_seg_make(uint64_t size)
{
    int fd = memfd_create("dcfa-seg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    int err = ftruncate(fd, (off_t)size) != 0 ? errno : posix_fallocate(fd, 0, (off_t)size);
    if (err == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        err = errno;
    if (err != 0) {
        close(fd);
        return -err;
    }
    return fd;
}

#define AD_SEG_TAG 16 /* hex digits at the end of a name another job may open */

/* the job whose names hold name: job's own, or for OPEN and REMOVE that of another job of
 * this mpirun when the name ends in its tag of AD_SEG_TAG hex digits; NULL if none */
static struct ad_job *ad_seg_owner(struct ad_job *const *jobs, int njobs, struct ad_job *job,
                                   int op, const char *name)
{
    char prefix[SEG_JOB_MAX + 8];
    size_t nlen = strlen(name);
    for (int i = -1; i < njobs; i++) {
        struct ad_job *j = i < 0 ? job : jobs[i];
        if (j == NULL || (i >= 0 && (j == job || op == SEG_CREATE)))
            continue;
        snprintf(prefix, sizeof prefix, "/dcfa-%s-", j->jobid);
        size_t plen = strlen(prefix);
        if (strncmp(name, prefix, plen) != 0 || name[plen] == 0)
            continue;
        if (i >= 0 && (nlen < plen + AD_SEG_TAG ||
                       strspn(name + nlen - AD_SEG_TAG, "0123456789abcdef") != AD_SEG_TAG))
            continue; /* another job's name without its tag: anyone could guess it */
        return j;
    }
    return NULL;
}

int ad_seg_request(struct ad_job *const *jobs, int njobs, struct ad_job *job, struct ad_proc *p,
                   const void *buf, size_t len)
{
    seg_msg q;
    if (len < 4 || memcmp(buf, &(uint32_t){SEG_MAGIC}, 4) != 0)
        return 0; /* not a segment request */
    memset(&q, 0, sizeof q);
    memcpy(&q, buf, len < sizeof q ? len : sizeof q);
    int op = q.type >= SEG_CREATE && q.type <= SEG_REMOVE ? q.type : 0;
    q.name[sizeof q.name - 1] = 0;
    q.job[sizeof q.job - 1] = 0;
    if (len != sizeof q || q.version != SEG_VERSION || op == 0) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EPROTO, -1,
                      "rank %d sent a malformed segment request (%zu bytes, type %u, version %u)",
                      p->rank, len, q.type, q.version);
        return 1;
    }
    const char *what = ad_seg_op[op];
    if (strcmp(q.job, job->jobid) != 0) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EACCES, -1,
                      "rank %d asked to %s segment %.60s as a rank of job '%.40s', not its own",
                      p->rank, what, q.name, q.job);
        return 1;
    }
    if (q.rank != p->rank) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EACCES, -1,
                      "rank %d asked to %s segment %.60s in the name of rank %d", p->rank, what,
                      q.name, (int)q.rank);
        return 1;
    }
    if (q.token != p->ep_token) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EACCES, -1,
                      "rank %d asked to %s segment %.60s with token %016llx, which is not its "
                      "own (a forged token)",
                      p->rank, what, q.name, (unsigned long long)q.token);
        return 1;
    }
    size_t nlen = strlen(q.name);
    struct ad_job *owner = ad_seg_owner(jobs, njobs, job, op, q.name);
    int chars_ok =
        strspn(q.name + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
        nlen - 1;
    if (owner == NULL && chars_ok && op != SEG_CREATE && ad_seg_foreign != NULL &&
        strncmp(q.name, "/dcfa-", 6) == 0 && nlen > 6 + AD_SEG_TAG &&
        strspn(q.name + nlen - AD_SEG_TAG, "0123456789abcdef") == AD_SEG_TAG) {
        /* a tagged name of a job of another mpirun: its daemon holds the segment and checks
         * that the asker knows the tag (ad_ep_remote.c, "Endpoints between two mpiruns") */
        char oj[SEG_JOB_MAX];
        size_t jl = strcspn(q.name + 6, "-");
        if (jl > 0 && jl < sizeof oj && q.name[6 + jl] == '-') {
            memcpy(oj, q.name + 6, jl);
            oj[jl] = 0;
            if (ad_seg_is_foreign(oj)) {
                if (op == SEG_OPEN && q.size == 0) {
                    ad_seg_answer(p, &q, SEG_REFUSE, -EINVAL, -1,
                                  "rank %d asked to open segment %.60s of 0 bytes", p->rank,
                                  q.name);
                    return 1;
                }
                ad_seg_foreign(job, p, op, q.name, (unsigned long long)q.size, q.seq);
                return 1;
            }
        }
    }
    if (owner == NULL || !chars_ok) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EACCES, -1,
                      "rank %d asked to %s %.40s, which is no name of its job %s nor a "
                      "tagged one of another job",
                      p->rank, what, q.name, job->jobid);
        return 1;
    }
    struct ad_seg *s = ad_seg_find(owner->jobid, q.name);
    if (op == SEG_REMOVE) {
        if (s != NULL) {
            for (struct ad_seg **pp = &ad_segs; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                    *pp = s->next;
                    break;
                }
            close(s->fd);
            free(s);
        }
        ad_seg_answer(p, &q, SEG_DONE, s != NULL ? 0 : -ENOENT, -1, NULL);
        return 1;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t cap = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 40;
    if (q.size == 0 || q.size > cap) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EINVAL, -1,
                      "rank %d asked to %s segment %.60s of %llu bytes (1 to %llu)", p->rank, what,
                      q.name, (unsigned long long)q.size, (unsigned long long)cap);
        return 1;
    }
    if (op == SEG_OPEN) {
        if (s == NULL)
            ad_seg_answer(p, &q, SEG_REFUSE, -ENOENT, -1,
                          "rank %d asked to open segment %.60s, which does not exist", p->rank,
                          q.name);
        else if (s->size != q.size)
            ad_seg_answer(p, &q, SEG_REFUSE, -EINVAL, -1,
                          "rank %d asked to open segment %.60s as %llu bytes; it has %llu", p->rank,
                          q.name, (unsigned long long)q.size, (unsigned long long)s->size);
        else
            ad_seg_answer(p, &q, SEG_GRANT, 0, s->fd, NULL);
        return 1;
    }
    if (s != NULL) {
        ad_seg_answer(p, &q, SEG_REFUSE, -EEXIST, -1,
                      "rank %d asked to create segment %.60s, which exists already", p->rank,
                      q.name);
        return 1;
    }
    int fd = ad_seg_make(q.size);
    s = fd >= 0 ? calloc(1, sizeof *s) : NULL;
    if (s == NULL) {
        int err = fd >= 0 ? ENOMEM : -fd;
        if (fd >= 0)
            close(fd);
        ad_seg_answer(p, &q, SEG_REFUSE, -err, -1,
                      "rank %d asked to create segment %.60s of %llu bytes: %s", p->rank, q.name,
                      (unsigned long long)q.size, strerror(err));
        return 1;
    }
    snprintf(s->job, sizeof s->job, "%s", job->jobid);
    memcpy(s->name, q.name, sizeof s->name);
    s->size = q.size;
    s->fd = fd;
    s->next = ad_segs;
    ad_segs = s;
    ad_seg_answer(p, &q, SEG_GRANT, 0, s->fd, NULL);
    return 1;
}

void ad_seg_job_end(const char *jobid)
{
    for (struct ad_seg **pp = &ad_segs; *pp;) {
        struct ad_seg *s = *pp;
        if (strcmp(s->job, jobid) == 0) {
            *pp = s->next;
            close(s->fd);
            free(s);
        } else {
            pp = &s->next;
        }
    }
}
