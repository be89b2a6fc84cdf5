/* assist: PMI client for the command channel (see assist.h): PMI-1
 * "simple" lines, or PMI-2's length-prefixed messages (Slurm's --mpi=pmi2,
 * Hydra, our mpirun), chosen by the environment at assist_init. Besides the
 * key/value exchange: spawn (PMI-1 "mcmd=spawn" blocks, PMI-2 "cmd=spawn")
 * and the name service (through the process manager, or for a singleton
 * the name server of DCFA_NAMESERVER, src/assist/ns_wire.h).
 *
 * A singleton runs without a daemon (its keys in a local table) until it
 * spawns or uses the name service without DCFA_NAMESERVER: then it starts
 * one, "mpirun --dcfa-singleton FD JOBID" (tools/mpirun/ad_singleton.c),
 * and speaks PMI-1 to it from then on (docs/launcher.md, "Singletons"). */
#include "assist/assist.h"
#include "assist/ns_wire.h"
#include "assist/pmi_wire.h"
#include "util/util.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* preput by a spawn of several commands under Slurm: assist_slurm_appnum */
#define ASSIST_SPAWN_APPS_KEY "dcfa-spawn-apps"

struct assist_kv {
    char key[ASSIST_KEY_MAX + 1];
    char *value;
};

static struct {
    pthread_mutex_t lock;
    int initialized;
    int singleton; /* no process manager, no daemon (yet) */
    int adopted;   /* a singleton that started its daemon: singleton is 0 then */
    int fd;
    int version;    /* 1 or 2: the wire protocol */
    int own_daemon; /* our mpirun (DCFA_JOBID set): it prints abort messages itself */
    int slurm;      /* Slurm's mpi/pmi2 plugin serves us: a spawn runs srun (docs/dpm.md) */
    int spawn_late; /* a Slurm spawn timed out: its reply may still come, and is dropped */
    int rank, size, appnum;
    char kvsname[ASSIST_WIRE_KVSNAME_MAX + 1];
    char jobid[ASSIST_JOBID_MAX + 1];
    char inbuf[ASSIST_WIRE_LINE_MAX];
    size_t inlen;
    struct assist_kv *local; /* singleton key/value table */
    size_t nlocal, caplocal;
} assist_st = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* ---- channel I/O ---------------------------------------------------------- */

static int assist_chan_write(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(assist_st.fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(assist_st.fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            fprintf(stderr, "dcfa assist: write to PMI fd %d failed: %s\n", assist_st.fd,
                    strerror(err));
            return -err;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads one '\n'-terminated line into line[max] (the '\n' replaced by NUL). */
static int assist_chan_read_line(char *line, size_t max)
{
    for (;;) {
        char *nl = memchr(assist_st.inbuf, '\n', assist_st.inlen);
        if (nl != NULL) {
            size_t len = (size_t)(nl - assist_st.inbuf);
            if (len + 1 > max)
                return -EMSGSIZE;
            memcpy(line, assist_st.inbuf, len);
            line[len] = '\0';
            assist_st.inlen -= len + 1;
            memmove(assist_st.inbuf, nl + 1, assist_st.inlen);
            return 0;
        }
        if (assist_st.inlen == sizeof(assist_st.inbuf))
            return -EMSGSIZE;
        ssize_t n = read(assist_st.fd, assist_st.inbuf + assist_st.inlen,
                         sizeof(assist_st.inbuf) - assist_st.inlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            fprintf(stderr, "dcfa assist: read from PMI fd %d failed: %s\n", assist_st.fd,
                    strerror(err));
            return -err;
        }
        if (n == 0) {
            fprintf(stderr, "dcfa assist: the process manager closed the PMI connection\n");
            return -ECONNRESET;
        }
        assist_st.inlen += (size_t)n;
    }
}

/* Reads exactly len bytes (after what is buffered). */
static int assist_chan_read_exact(char *buf, size_t len)
{
    while (len > 0) {
        if (assist_st.inlen > 0) {
            size_t n = assist_st.inlen < len ? assist_st.inlen : len;
            memcpy(buf, assist_st.inbuf, n);
            assist_st.inlen -= n;
            memmove(assist_st.inbuf, assist_st.inbuf + n, assist_st.inlen);
            buf += n;
            len -= n;
            continue;
        }
        ssize_t n = read(assist_st.fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = n < 0 ? errno : ECONNRESET;
            if (n == 0)
                fprintf(stderr, "dcfa assist: the process manager closed the PMI connection\n");
            else
                fprintf(stderr, "dcfa assist: read from PMI fd %d failed: %s\n", assist_st.fd,
                        strerror(err));
            return -err;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends req (a full line) and reads the reply, which must be "cmd=<expect>". */
static int assist_chan_call(const char *req, const char *expect, char *reply, size_t max)
{
    int rc = assist_chan_write(req, strlen(req));

    if (rc != 0)
        return rc;
    do
        rc = assist_chan_read_line(reply, max);
    while (rc == 0 && assist_st.spawn_late && strcmp(expect, "spawn_result") != 0 &&
           assist_wire_is(reply, "spawn_result"));
    if (rc != 0)
        return rc;
    if (!assist_wire_is(reply, expect)) {
        fprintf(stderr, "dcfa assist: expected cmd=%s from the process manager, got '%s'\n", expect,
                reply);
        return -EPROTO;
    }
    return 0;
}

/* PMI-2: sends body ("cmd=...;k=v;...") framed. */
static int assist_chan_send2(const char *body)
{
    char hdr[32];
    size_t len = strlen(body);
    int err;

    if (len > 999999)
        return -EMSGSIZE;
    snprintf(hdr, sizeof(hdr), "%-6zu", len);
    err = assist_chan_write(hdr, ASSIST_WIRE2_HDR);
    if (err == 0)
        err = assist_chan_write(body, len);
    return err;
}

/* PMI-2: reads the framed reply into reply[max] (NUL-terminated), which must
 * be "cmd=<expect>;..." (any rc). A late spawn-response is dropped. */
static int assist_chan_recv2(const char *expect, char *reply, size_t max)
{
    char hdr[32];
    long rlen;
    int err;

    do {
        err = assist_chan_read_exact(hdr, ASSIST_WIRE2_HDR);
        if (err != 0)
            return err;
        rlen = assist_wire2_len(hdr);
        if (rlen < 0 || (size_t)rlen + 1 > max) {
            fprintf(stderr, "dcfa assist: bad PMI-2 reply length '%.6s' from the process manager\n",
                    hdr);
            return -EPROTO;
        }
        err = assist_chan_read_exact(reply, (size_t)rlen);
        if (err != 0)
            return err;
        reply[rlen] = '\0';
    } while (assist_st.spawn_late && strcmp(expect, "spawn-response") != 0 &&
             assist_wire2_is(reply, "spawn-response"));
    if (!assist_wire2_is(reply, expect)) {
        fprintf(stderr, "dcfa assist: expected cmd=%s from the process manager, got '%s'\n", expect,
                reply);
        return -EPROTO;
    }
    return 0;
}

/* assist_chan_send2 then assist_chan_recv2. */
static int assist_chan_call2_any(const char *body, const char *expect, char *reply, size_t max)
{
    int err = assist_chan_send2(body);

    return err != 0 ? err : assist_chan_recv2(expect, reply, max);
}

/* assist_chan_call2_any, and the reply must have rc=0 (or none). */
static int assist_chan_call2(const char *body, const char *expect, char *reply, size_t max)
{
    long rc;
    int err = assist_chan_call2_any(body, expect, reply, max);

    if (err != 0)
        return err;
    if (assist_wire2_get_int(reply, "rc", &rc) == 0 && rc != 0) {
        fprintf(stderr, "dcfa assist: the process manager refused %s: '%s'\n", expect, reply);
        return -EIO;
    }
    return 0;
}

/* The "rc=" of a reply; absent means success. */
static long assist_reply_rc(const char *reply)
{
    long rc;

    if (assist_wire_get_int(reply, "rc", &rc) != 0)
        return 0;
    return rc;
}

/* ---- connection set-up ---------------------------------------------------- */

static int assist_env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return -ENOENT;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX) {
        fprintf(stderr, "dcfa assist: bad value '%s' in %s\n", s, name);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

/* PMI_PORT=host:port (Hydra -pmi-port): connect, then the initack handshake. */
static int assist_connect_port(const char *port)
{
    char host[256], line[ASSIST_WIRE_LINE_MAX], req[64];
    const char *colon = strrchr(port, ':');
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL, *a;
    int id, rc, got_rank = 0, got_size = 0;
    long v;

    if (colon == NULL || (size_t)(colon - port) >= sizeof(host)) {
        fprintf(stderr, "dcfa assist: bad PMI_PORT '%s'\n", port);
        return -EINVAL;
    }
    memcpy(host, port, (size_t)(colon - port));
    host[colon - port] = '\0';
    rc = assist_env_int("PMI_ID", &id);
    if (rc != 0) {
        fprintf(stderr, "dcfa assist: PMI_PORT is set but PMI_ID is not\n");
        return -EINVAL;
    }
    rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "dcfa assist: cannot resolve PMI_PORT '%s': %s\n", port, gai_strerror(rc));
        return -EHOSTUNREACH;
    }
    rc = -ECONNREFUSED;
    for (a = ai; a != NULL; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            assist_st.fd = fd;
            rc = 0;
            break;
        }
        rc = -errno;
        close(fd);
    }
    freeaddrinfo(ai);
    if (rc != 0) {
        fprintf(stderr, "dcfa assist: cannot connect to PMI_PORT '%s': %s\n", port, strerror(-rc));
        return rc;
    }
    snprintf(req, sizeof(req), "cmd=initack pmiid=%d\n", id);
    rc = assist_chan_call(req, "initack", line, sizeof(line));
    if (rc != 0)
        return rc;
    /* Then "cmd=set size=N", "cmd=set rank=N", "cmd=set debug=N". */
    for (;;) {
        rc = assist_chan_read_line(line, sizeof(line));
        if (rc != 0)
            return rc;
        if (!assist_wire_is(line, "set"))
            return -EPROTO;
        if (assist_wire_get_int(line, "size", &v) == 0) {
            assist_st.size = (int)v;
            got_size = 1;
        }
        if (assist_wire_get_int(line, "rank", &v) == 0) {
            assist_st.rank = (int)v;
            got_rank = 1;
        }
        if (assist_wire_get_int(line, "debug", &v) == 0)
            break;
    }
    return got_rank && got_size ? 0 : -EPROTO;
}

/* Job id from the kvsname (not under our mpirun): "k" + 64-bit FNV-1a hex. */
static void assist_jobid_from_kvsname(void)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (const char *p = assist_st.kvsname; *p != '\0'; p++) {
        h ^= (unsigned char)*p;
        h *= 0x100000001b3ull;
    }
    snprintf(assist_st.jobid, sizeof(assist_st.jobid), "k%016llx", (unsigned long long)h);
}

static int assist_jobid_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > ASSIST_JOBID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
    }
    return 1;
}

/* The wire protocol: DCFA_PMI_VERSION (1 or 2) if set, else PMI-2 where
 * Slurm's mpi/pmi2 plugin started us (it sets PMI_JOBID), else PMI-1. */
static int assist_choose_version(void)
{
    const char *v = getenv("DCFA_PMI_VERSION");

    if (v != NULL && *v != '\0') {
        if (strcmp(v, "1") == 0 || strcmp(v, "2") == 0)
            return *v - '0';
        fprintf(stderr, "dcfa assist: bad DCFA_PMI_VERSION '%s' (1 or 2): using PMI-1\n", v);
        return 1;
    }
    if (getenv("PMI_FD") != NULL && getenv("PMI_JOBID") != NULL)
        return 2;
    return 1;
}

static void assist_set_jobid(void);
static int assist_slurm_appnum(void);

/* The PMI-2 handshake: a PMI-1 init line asking for version 2, then
 * fullinit and job-getid in PMI-2 messages. */
static int assist_handshake2(void)
{
    char line[ASSIST_WIRE_LINE_MAX], req[256];
    const char *pmijobid = getenv("PMI_JOBID");
    long v;
    int rc;

    rc = assist_chan_call("cmd=init pmi_version=2 pmi_subversion=0\n", "response_to_init", line,
                          sizeof(line));
    if (rc != 0)
        return rc;
    if (assist_reply_rc(line) != 0 ||
        (assist_wire_get_int(line, "pmi_version", &v) == 0 && v != 2)) {
        fprintf(stderr, "dcfa assist: the process manager refused PMI-2: '%s'\n", line);
        return -EPROTO;
    }
    snprintf(req, sizeof(req), "cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;",
             pmijobid != NULL && *pmijobid != '\0' ? pmijobid : "0", assist_st.rank);
    rc = assist_chan_call2(req, "fullinit-response", line, sizeof(line));
    if (rc != 0)
        return rc;
    if (assist_wire2_get_int(line, "rank", &v) == 0 && v != assist_st.rank) {
        fprintf(stderr, "dcfa assist: PMI-2 rank %ld differs from PMI_RANK %d\n", v,
                assist_st.rank);
        return -EPROTO;
    }
    if (assist_wire2_get_int(line, "size", &v) == 0 && v >= 1 && v <= INT32_MAX)
        assist_st.size = (int)v;
    if (assist_wire2_get_int(line, "appnum", &v) == 0 && v >= -1 && v <= INT32_MAX)
        assist_st.appnum = (int)v; /* Slurm answers -1: assist_slurm_appnum */
    rc = assist_chan_call2("cmd=job-getid;", "job-getid-response", line, sizeof(line));
    if (rc != 0)
        return rc;
    if (assist_wire2_get(line, "jobid", assist_st.kvsname, sizeof(assist_st.kvsname)) != 0)
        return -EPROTO;
    assist_set_jobid();
    return 0;
}

/* The PMI-1 handshake once the channel is open. */
static int assist_handshake(void)
{
    char line[ASSIST_WIRE_LINE_MAX];
    long v;
    int rc;

    rc = assist_chan_call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line,
                          sizeof(line));
    if (rc != 0)
        return rc;
    if (assist_reply_rc(line) != 0) {
        fprintf(stderr, "dcfa assist: the process manager refused PMI-1: '%s'\n", line);
        return -EPROTO;
    }
    rc = assist_chan_call("cmd=get_maxes\n", "maxes", line, sizeof(line));
    if (rc != 0)
        return rc;
    if (assist_wire_get_int(line, "vallen_max", &v) == 0 && v < ASSIST_VALUE_MAX)
        fprintf(stderr, "dcfa assist: warning: process manager values are limited to %ld bytes\n",
                v);
    rc = assist_chan_call("cmd=get_appnum\n", "appnum", line, sizeof(line));
    if (rc != 0)
        return rc;
    if (assist_wire_get_int(line, "appnum", &v) == 0 && v >= -1 && v <= INT32_MAX)
        assist_st.appnum = (int)v; /* Slurm answers -1: assist_slurm_appnum */
    rc = assist_chan_call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof(line));
    if (rc != 0)
        return rc;
    rc = assist_wire_get(line, "kvsname", assist_st.kvsname, sizeof(assist_st.kvsname));
    if (rc != 0)
        return -EPROTO;
    assist_set_jobid();
    return 0;
}

/* ---- a launcher we do not speak ----------------------------------------------------
 * Without PMI_FD or PMI_PORT a process runs as a singleton. Started by another MPI's
 * launcher (or srun without an MPI plugin we speak) it would run as a job of one while
 * its launcher thinks it is one of several: each rank alone, silently. What each
 * launcher sets tells it; a job of one there is a singleton indeed. DCFA_SINGLETON=1
 * runs the process as a singleton anyway (independent processes under srun). */
struct assist_launcher {
    const char *rank_var, *size_var; /* what it sets (size_var may be NULL) */
    const char *who, *what;          /* in the message */
};

static const struct assist_launcher assist_launchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun", "PMIx"},
    {"PMIX_RANK", NULL, "a PMIx launcher such as prterun or srun --mpi=pmix", "PMIx"},
    {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "srun without --mpi=pmi2", "process manager"},
    {"PMI_RANK", "PMI_SIZE", "a launcher that gives no PMI_FD or PMI_PORT", "PMI"},
};

/* 1 with the line in msg[cap] when a launcher of a job of several processes started
 * this one; 0 when it is a singleton */
static int assist_foreign(char *msg, size_t cap)
{
    const char *force = getenv("DCFA_SINGLETON");
    if (force != NULL && strcmp(force, "1") == 0)
        return 0;
    for (size_t i = 0; i < sizeof assist_launchers / sizeof assist_launchers[0]; i++) {
        const struct assist_launcher *l = &assist_launchers[i];
        const char *rank = getenv(l->rank_var);
        const char *size_var = l->size_var ? l->size_var : "SLURM_STEP_NUM_TASKS";
        const char *size = getenv(size_var); /* PMIx sets no size: Slurm's does */
        if (rank == NULL && (size == NULL || l->size_var == NULL))
            continue;
        if ((rank == NULL || atol(rank) == 0) && (size == NULL || atol(size) <= 1))
            continue; /* rank 0 of 1: a singleton it is */
        char vars[256];
        snprintf(vars, sizeof vars, "%s=%.32s%s%s%s%.32s", l->rank_var, rank ? rank : "",
                 size ? ", " : "", size ? size_var : "", size ? "=" : "", size ? size : "");
        snprintf(msg, cap,
                 "[dcfa-mpi] pid %d: started by %s (%s), whose %s this library does not speak: "
                 "it would run alone, not as one of %s processes; use DCFA-MPI's mpirun, "
                 "mpiexec.hydra or srun --mpi=pmi2 (or DCFA_SINGLETON=1)\n",
                 (int)getpid(), l->who, vars, l->what, size ? size : "several");
        return 1;
    }
    return 0;
}

static void assist_set_jobid(void)
{
    const char *env_jobid = getenv("DCFA_JOBID");
    assist_st.own_daemon = env_jobid != NULL && assist_jobid_ok(env_jobid);
    if (assist_st.own_daemon)
        snprintf(assist_st.jobid, sizeof(assist_st.jobid), "%s", env_jobid);
    else
        assist_jobid_from_kvsname();
}

int assist_init(int *rank, int *size, int *appnum)
{
    const char *port = NULL;
    int rc = 0;

    pthread_mutex_lock(&assist_st.lock);
    if (assist_st.initialized)
        goto out_values;
    assist_st.appnum = 0;
    assist_st.inlen = 0;
    if (getenv("PMI_FD") != NULL) {
        rc = assist_env_int("PMI_FD", &assist_st.fd);
        if (rc == 0)
            rc = assist_env_int("PMI_RANK", &assist_st.rank);
        if (rc == 0)
            rc = assist_env_int("PMI_SIZE", &assist_st.size);
        if (rc != 0) {
            fprintf(stderr, "dcfa assist: PMI_FD needs PMI_RANK and PMI_SIZE\n");
            rc = -EINVAL;
            goto fail;
        }
        if (fcntl(assist_st.fd, F_SETFD, FD_CLOEXEC) != 0) {
            rc = -errno;
            fprintf(stderr, "dcfa assist: PMI_FD=%d is not open: %s\n", assist_st.fd,
                    strerror(errno));
            goto fail;
        }
    } else if ((port = getenv("PMI_PORT")) != NULL) {
        rc = assist_connect_port(port);
        if (rc != 0)
            goto fail_close;
    } else {
        char why[768];
        if (assist_foreign(why, sizeof why)) {
            fputs(why, stderr);
            rc = -EPROTONOSUPPORT;
            goto fail;
        }
        assist_st.singleton = 1;
        assist_st.rank = 0;
        assist_st.size = 1;
        snprintf(assist_st.jobid, sizeof(assist_st.jobid), "s%ld", (long)getpid());
        goto done;
    }
    if (assist_st.size < 1 || assist_st.rank >= assist_st.size) {
        fprintf(stderr, "dcfa assist: bad rank %d / size %d from the process manager\n",
                assist_st.rank, assist_st.size);
        rc = -EINVAL;
        goto fail_close;
    }
    assist_st.version = port != NULL ? 1 : assist_choose_version();
    rc = assist_st.version == 2 ? assist_handshake2() : assist_handshake();
    if (rc != 0)
        goto fail_close;
    /* Slurm's mpi/pmi2 plugin sets PMI_JOBID (Hydra and our mpirun do not) */
    assist_st.slurm = port == NULL && !assist_st.own_daemon && getenv("PMI_JOBID") != NULL &&
                      getenv("SLURM_JOB_ID") != NULL;
    if (assist_st.appnum < 0)
        assist_st.appnum = assist_slurm_appnum();
done:
    assist_st.initialized = 1;
out_values:
    *rank = assist_st.rank;
    *size = assist_st.size;
    *appnum = assist_st.appnum;
    pthread_mutex_unlock(&assist_st.lock);
    return 0;

fail_close:
    if (assist_st.fd >= 0)
        close(assist_st.fd);
fail:
    assist_st.fd = -1;
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

int assist_cleanup_is_mine(void) { return !assist_st.own_daemon || assist_st.adopted; }

int assist_is_singleton(void)
{
    return assist_st.initialized && (assist_st.singleton || assist_st.adopted);
}

const char *assist_job_id(void) { return assist_st.jobid; }

/* ---- key/value exchange --------------------------------------------------- */

static int assist_local_put(const char *key, const char *value)
{
    char *copy = strdup(value);
    size_t i;

    if (copy == NULL)
        return -ENOMEM;
    for (i = 0; i < assist_st.nlocal; i++) {
        if (strcmp(assist_st.local[i].key, key) == 0) {
            free(assist_st.local[i].value);
            assist_st.local[i].value = copy;
            return 0;
        }
    }
    if (assist_st.nlocal == assist_st.caplocal) {
        size_t cap = assist_st.caplocal ? 2 * assist_st.caplocal : 16;
        struct assist_kv *t = realloc(assist_st.local, cap * sizeof(*t));
        if (t == NULL) {
            free(copy);
            return -ENOMEM;
        }
        assist_st.local = t;
        assist_st.caplocal = cap;
    }
    snprintf(assist_st.local[i].key, sizeof(assist_st.local[i].key), "%s", key);
    assist_st.local[i].value = copy;
    assist_st.nlocal++;
    return 0;
}

static const char *assist_local_get(const char *key)
{
    for (size_t i = 0; i < assist_st.nlocal; i++)
        if (strcmp(assist_st.local[i].key, key) == 0)
            return assist_st.local[i].value;
    return NULL;
}

/* PMI-2 separates fields with ';' and has no escape for it, but a process's cards
 * are joined by ';' ("job:...;shm:...;ofi:..."): values put over PMI-2 carry ';' as
 * "%3B" and '%' as "%25", and kvs-get turns them back (job attributes, which the
 * process manager writes, are taken as they are). 0, or -1 when out[cap] is short. */
static int assist_pmi2_escape(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (; *in; in++) {
        const char *rep = *in == ';' ? "%3B" : *in == '%' ? "%25" : NULL;
        size_t n = rep ? 3 : 1;
        if (o + n >= cap)
            return -1;
        if (rep)
            memcpy(out + o, rep, 3);
        else
            out[o] = *in;
        o += n;
    }
    out[o] = '\0';
    return 0;
}

static void assist_pmi2_unescape(char *v)
{
    char *o = v;
    for (const char *i = v; *i; i++) {
        if (i[0] == '%' && i[1] == '3' && (i[2] == 'B' || i[2] == 'b')) {
            *o++ = ';';
            i += 2;
        } else if (i[0] == '%' && i[1] == '2' && i[2] == '5') {
            *o++ = '%';
            i += 2;
        } else {
            *o++ = *i;
        }
    }
    *o = '\0';
}

int assist_kvs_put(const char *key, const char *value)
{
    char req[ASSIST_WIRE_LINE_MAX], reply[ASSIST_WIRE_LINE_MAX];
    int rc;

    if (key == NULL || value == NULL || !assist_wire_key_ok(key, ASSIST_KEY_MAX) ||
        !assist_wire_value_ok(value, ASSIST_VALUE_MAX))
        return -EINVAL;
    pthread_mutex_lock(&assist_st.lock);
    if (!assist_st.initialized) {
        rc = -EINVAL;
    } else if (assist_st.singleton) {
        rc = assist_local_put(key, value);
    } else if (assist_st.version == 2) {
        char esc[3 * ASSIST_VALUE_MAX + 1];
        if (strchr(key, ';') != NULL || assist_pmi2_escape(value, esc, sizeof esc) != 0) {
            rc = -EINVAL; /* PMI-2 has no escape for ';' in keys */
        } else {
            int n = snprintf(req, sizeof(req), "cmd=kvs-put;key=%s;value=%s;", key, esc);
            rc = n < 0 || (size_t)n >= sizeof(req)
                     ? -EINVAL
                     : assist_chan_call2(req, "kvs-put-response", reply, sizeof(reply));
        }
    } else {
        snprintf(req, sizeof(req), "cmd=put kvsname=%s key=%s value=%s\n", assist_st.kvsname, key,
                 value);
        rc = assist_chan_call(req, "put_result", reply, sizeof(reply));
        if (rc == 0 && assist_reply_rc(reply) != 0) {
            fprintf(stderr, "dcfa assist: put of key '%s' refused: '%s'\n", key, reply);
            rc = -EIO;
        }
    }
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

int assist_kvs_fence(void)
{
    char reply[ASSIST_WIRE_LINE_MAX];
    int rc = 0;

    pthread_mutex_lock(&assist_st.lock);
    if (!assist_st.initialized)
        rc = -EINVAL;
    else if (!assist_st.singleton && assist_st.version == 2)
        rc = assist_chan_call2("cmd=kvs-fence;", "kvs-fence-response", reply, sizeof(reply));
    else if (!assist_st.singleton)
        rc = assist_chan_call("cmd=barrier_in\n", "barrier_out", reply, sizeof(reply));
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

/* PMI-2 get: the job attributes (PMI_process_mapping, ...) are asked with
 * info-getjobattr, the others with kvs-get. Caller holds the lock. */
static int assist_get2(const char *key, char *value, int maxlen)
{
    char req[ASSIST_WIRE_LINE_MAX], reply[ASSIST_WIRE_LINE_MAX];
    int rc;

    if (strchr(key, ';') != NULL)
        return -EINVAL;
    if (strncmp(key, "PMI_", 4) == 0) {
        snprintf(req, sizeof(req), "cmd=info-getjobattr;key=%s;", key);
        rc = assist_chan_call2(req, "info-getjobattr-response", reply, sizeof(reply));
    } else {
        snprintf(req, sizeof(req), "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;", assist_st.kvsname, key);
        rc = assist_chan_call2(req, "kvs-get-response", reply, sizeof(reply));
    }
    if (rc != 0)
        return rc;
    if (!assist_wire2_true(reply, "found"))
        return -ENOENT;
    rc = assist_wire2_get(reply, "value", value, (size_t)maxlen);
    if (rc == -ENOENT) {
        value[0] = '\0';
        rc = 0;
    }
    if (rc == 0 && strncmp(key, "PMI_", 4) != 0)
        assist_pmi2_unescape(value);
    return rc;
}

/* assist_kvs_get with the lock held, once the channel is up. */
static int assist_kvs_get_locked(const char *key, char *value, int maxlen)
{
    char req[ASSIST_WIRE_LINE_MAX], reply[ASSIST_WIRE_LINE_MAX];
    int rc;

    if (assist_st.singleton) {
        const char *v = assist_local_get(key);
        if (v == NULL) {
            rc = -ENOENT;
        } else if (strlen(v) + 1 > (size_t)maxlen) {
            rc = -ENOSPC;
        } else {
            memcpy(value, v, strlen(v) + 1);
            rc = 0;
        }
    } else if (assist_st.version == 2) {
        rc = assist_get2(key, value, maxlen);
    } else {
        snprintf(req, sizeof(req), "cmd=get kvsname=%s key=%s\n", assist_st.kvsname, key);
        rc = assist_chan_call(req, "get_result", reply, sizeof(reply));
        if (rc == 0 && assist_reply_rc(reply) != 0)
            rc = -ENOENT;
        if (rc == 0) {
            rc = assist_wire_get(reply, "value", value, (size_t)maxlen);
            if (rc == -ENOENT) { /* "value=" with nothing after it is an empty value */
                value[0] = '\0';
                rc = 0;
            }
        }
    }
    return rc;
}

int assist_kvs_get(const char *key, char *value, int maxlen)
{
    int rc;

    if (key == NULL || value == NULL || maxlen < 1 || !assist_wire_key_ok(key, ASSIST_KEY_MAX))
        return -EINVAL;
    pthread_mutex_lock(&assist_st.lock);
    rc = assist_st.initialized ? assist_kvs_get_locked(key, value, maxlen) : -EINVAL;
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

/* Slurm gives every process appnum -1, and starts the commands of a spawn as
 * one srun --multi-prog, ranks in command order: the parent preputs the
 * commands' process counts ("n0,n1,...", ASSIST_SPAWN_APPS_KEY) and a child
 * finds its command from its rank. Anything else: application 0. */
static int assist_slurm_appnum(void)
{
    char v[ASSIST_VALUE_MAX + 1];
    const char *spawned = getenv("PMI_SPAWNED");
    long first = 0;

    if (spawned == NULL || strcmp(spawned, "1") != 0 ||
        assist_kvs_get_locked(ASSIST_SPAWN_APPS_KEY, v, sizeof(v)) != 0)
        return 0;
    char *p = v, *end;
    for (int app = 0; *p != '\0'; app++) {
        long n = strtol(p, &end, 10);
        if (end == p || n < 1)
            break;
        first += n;
        if (assist_st.rank < first)
            return app;
        p = *end == ',' ? end + 1 : end;
    }
    fprintf(stderr, "dcfa assist: rank %d is in no command of '%s' (%s): appnum 0\n",
            assist_st.rank, v, ASSIST_SPAWN_APPS_KEY);
    return 0;
}

/* ---- end of job ----------------------------------------------------------- */

static int assist_abort_send(int exitcode, const char *msg);

int assist_abort(int exitcode, const char *msg)
{
    int rc;

    /* No lock: abort may be called from a thread stuck inside another call. */
    if (!assist_st.initialized || assist_st.singleton || assist_st.fd < 0)
        return 0;
    /* Our daemon removes the job's /dev/shm entries once its ranks are gone. Other process
     * managers (Hydra, Slurm) end the ranks with SIGKILL and know nothing of them: the
     * aborting rank removes this node's entries itself, before and after asking for the end
     * (a rank still running may make one in between). */
    if (assist_cleanup_is_mine())
        util_shm_unlink_job(assist_st.jobid);
    rc = assist_abort_send(exitcode, msg);
    if (assist_cleanup_is_mine())
        util_shm_unlink_job(assist_st.jobid);
    return rc;
}

static int assist_abort_send(int exitcode, const char *msg)
{
    char req[ASSIST_WIRE_LINE_MAX];
    size_t n;
    int rc = 0;

    if (assist_st.version == 2) {
        char body[ASSIST_WIRE_LINE_MAX - ASSIST_WIRE2_HDR], hdr[32];
        n = (size_t)snprintf(body, sizeof(body) - 1,
                             "cmd=abort;isworld=TRUE;exitcode=%d;message=", exitcode);
        for (const char *m = msg != NULL ? msg : ""; *m != '\0' && n < sizeof(body) - 2; m++)
            body[n++] = *m == ';' || *m == '\n' || *m == '\r' ? ' ' : *m;
        body[n++] = ';';
        body[n] = '\0';
        snprintf(hdr, sizeof(hdr), "%-6zu", n);
        rc = assist_chan_write(hdr, ASSIST_WIRE2_HDR);
        if (rc == 0)
            rc = assist_chan_write(body, n);
        return rc;
    }
    n = (size_t)snprintf(req, sizeof(req) - 1, "cmd=abort exitcode=%d", exitcode);
    if (msg != NULL && *msg != '\0' && n < sizeof(req) - 16) {
        n += (size_t)snprintf(req + n, sizeof(req) - 1 - n, " error_msg=%s", msg);
        if (n > sizeof(req) - 2)
            n = sizeof(req) - 2;
        for (size_t i = 0; i < n; i++)
            if (req[i] == '\n' || req[i] == '\r')
                req[i] = ' ';
    }
    req[n++] = '\n';
    req[n] = '\0';
    /* Our mpirun prints the message as the job's end line; other process
     * managers (Hydra) do not print it: say it here, once. */
    if (assist_st.adopted && msg != NULL && *msg != '\0') {
        /* a singleton's daemon does not print it: nothing waits for its last line */
        fprintf(stderr, "[dcfa-mpi] rank %d: %s\n", assist_st.rank, msg);
    } else if (!assist_st.own_daemon && msg != NULL && *msg != '\0') {
        fprintf(stderr, "[dcfa-mpi] rank %d: %s\n", assist_st.rank, msg);
        /* Hydra ends the job as soon as it reads the abort, output still in
         * the pipe may be dropped: give its proxy a moment to forward the line */
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    rc = assist_chan_write(req, n);
    return rc;
}

int assist_finalize(void)
{
    char reply[ASSIST_WIRE_LINE_MAX];
    int rc = 0;

    pthread_mutex_lock(&assist_st.lock);
    if (!assist_st.initialized) {
        rc = -EINVAL;
        goto out;
    }
    if (!assist_st.singleton) {
        if (assist_st.version == 2)
            rc = assist_chan_call2("cmd=finalize;", "finalize-response", reply, sizeof(reply));
        else
            rc = assist_chan_call("cmd=finalize\n", "finalize_ack", reply, sizeof(reply));
        close(assist_st.fd);
        assist_st.fd = -1;
    }
    for (size_t i = 0; i < assist_st.nlocal; i++)
        free(assist_st.local[i].value);
    free(assist_st.local);
    assist_st.local = NULL;
    assist_st.nlocal = assist_st.caplocal = 0;
    assist_st.initialized = 0;
    assist_st.singleton = 0;
    assist_st.adopted = 0;
out:
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

/* As mpirun, and the daemon a singleton starts, count it: DCFA_UNIVERSE_SIZE,
 * else the online CPUs (at least the job: 1). */
static int assist_singleton_universe(void)
{
    const char *s = getenv("DCFA_UNIVERSE_SIZE");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char *end;
    long v;

    if (s != NULL && *s != '\0') {
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno == 0 && *end == '\0' && v >= 1 && v <= 1000000)
            return (int)v;
    }
    if (cpus < 1)
        return 1;
    return cpus > 1000000 ? 1000000 : (int)cpus;
}

int assist_universe_size(void)
{
    char reply[ASSIST_WIRE_LINE_MAX];
    long v;
    int rc;

    pthread_mutex_lock(&assist_st.lock);
    if (!assist_st.initialized) {
        rc = -EINVAL;
    } else if (assist_st.singleton) {
        rc = assist_singleton_universe();
    } else if (assist_st.version == 2) {
        /* PMI-2 has it as a job attribute, when the process manager knows it */
        rc = assist_chan_call2("cmd=info-getjobattr;key=universeSize;", "info-getjobattr-response",
                               reply, sizeof(reply));
        if (rc == 0) {
            if (!assist_wire2_true(reply, "found") ||
                assist_wire2_get_int(reply, "value", &v) != 0 || v < 1 || v > INT32_MAX)
                v = assist_st.size;
            rc = (int)v;
        }
    } else {
        rc = assist_chan_call("cmd=get_universe_size\n", "universe_size", reply, sizeof(reply));
        if (rc == 0) {
            /* Hydra answers -1 for an unlimited universe: report the job size. */
            if (assist_wire_get_int(reply, "size", &v) != 0 || v < 1 || v > INT32_MAX)
                v = assist_st.size;
            rc = (int)v;
        }
    }
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

int assist_channel_lost(void)
{
    int fd = assist_st.fd;

    if (!assist_st.initialized || assist_st.singleton || fd < 0)
        return 0;
    struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
    int n;
    do {
        n = poll(&pfd, 1, 0);
    } while (n < 0 && errno == EINTR);
    return n == 1 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
}

/* ---- dynamic processes ---------------------------------------------------- */

/* A growable text buffer for spawn requests. */
struct assist_text {
    char *data;
    size_t len, cap;
    int oom;
};

static void assist_text_add(struct assist_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void assist_text_add(struct assist_text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->oom)
        return;
    for (;;) {
        size_t room = t->cap - t->len;
        va_start(ap, fmt);
        n = vsnprintf(t->data != NULL ? t->data + t->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = 1;
            return;
        }
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *d = realloc(t->data, cap);
        if (d == NULL) {
            t->oom = 1;
            return;
        }
        t->data = d;
        t->cap = cap;
    }
}

static void assist_errmsg(char *errmsg, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void assist_errmsg(char *errmsg, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (errmsg == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(errmsg, errlen, fmt, ap);
    va_end(ap);
    for (char *c = errmsg; *c != '\0'; c++) /* one line */
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

/* ---- a daemon on demand for a singleton ------------------------------------- */

#define ASSIST_DAEMON_START_MS 15000 /* for its first answer */

/* 0 when path is a regular file we may execute, else -errno. */
static int assist_exe_ok(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EACCES;
    return access(path, X_OK) == 0 ? 0 : -errno;
}

/* Tries dir + "/" + rel: 0 with the path in out[cap], else appends it to the
 * list of places looked at. */
static int assist_try_mpirun(const char *dir, const char *rel, char *out, size_t cap,
                             struct assist_text *looked)
{
    int n = snprintf(out, cap, "%s/%s", dir, rel);

    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    if (assist_exe_ok(out) == 0)
        return 0;
    assist_text_add(looked, "%s%s", looked->len > 0 ? ", " : "", out);
    return -ENOENT;
}

/* The mpirun binary: DCFA_MPIRUN; else next to this library (<libdir>/../bin,
 * or <libdir> itself: the build tree); else the install prefix. 0 with the
 * path in out[cap], or -ENOENT/-EACCES with the reason in errmsg. */
static int assist_find_mpirun(char *out, size_t cap, char *errmsg, size_t errlen)
{
    const char *env = getenv("DCFA_MPIRUN");
    struct assist_text looked = {0};
    Dl_info info;
    int rc;

    if (env != NULL && *env != '\0') {
        rc = assist_exe_ok(env);
        if (rc == 0 && strlen(env) < cap) {
            memcpy(out, env, strlen(env) + 1);
            return 0;
        }
        if (rc == 0)
            rc = -ENAMETOOLONG;
        assist_errmsg(errmsg, errlen,
                      "cannot start an assist daemon for this singleton: DCFA_MPIRUN='%.300s': %s",
                      env, strerror(-rc));
        return rc == -EACCES ? -EACCES : -ENOENT;
    }
    if (dladdr((void *)assist_find_mpirun, &info) != 0 && info.dli_fname != NULL &&
        strchr(info.dli_fname, '/') != NULL) {
        char dirs[2][PATH_MAX];
        int ndirs = 0;
        snprintf(dirs[0], sizeof(dirs[0]), "%s", info.dli_fname);
        if (realpath(info.dli_fname, dirs[1]) != NULL)
            ndirs = 2;
        else
            ndirs = 1;
        for (int i = 0; i < ndirs; i++)
            *strrchr(dirs[i], '/') = '\0'; /* both have a '/' */
        if (ndirs == 2 && strcmp(dirs[0], dirs[1]) == 0)
            ndirs = 1;
        for (int i = 0; i < ndirs; i++) {
            const char *dir = dirs[i][0] != '\0' ? dirs[i] : "/";
            if (assist_try_mpirun(dir, "../bin/mpirun", out, cap, &looked) == 0 ||
                assist_try_mpirun(dir, "mpirun", out, cap, &looked) == 0) {
                free(looked.data);
                return 0;
            }
        }
    }
#ifdef DCFA_PREFIX
    if (assist_try_mpirun(DCFA_PREFIX, "bin/mpirun", out, cap, &looked) == 0) {
        free(looked.data);
        return 0;
    }
#endif
    assist_errmsg(errmsg, errlen,
                  "cannot start an assist daemon for this singleton: no mpirun found (looked for "
                  "%.600s; set DCFA_MPIRUN to its path, or start the program with mpirun)",
                  looked.len > 0 && !looked.oom ? looked.data : "none");
    free(looked.data);
    return -ENOENT;
}

/* Waits up to ms for the channel to have something to read: 0 or -ETIMEDOUT. */
static int assist_chan_wait(int ms)
{
    struct pollfd pfd = {.fd = assist_st.fd, .events = POLLIN};
    struct timespec t0, t1;
    int n, left = ms;

    if (assist_st.inlen > 0)
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        n = poll(&pfd, 1, left);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        left = ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return -ETIMEDOUT;
    }
}

/* Starts mpirun's process, which forks the daemon and exits: reaped here,
 * so the daemon is not our child. Returns 0 with our end of the channel in
 * *fd, or -errno with errmsg. */
static int assist_daemon_exec(const char *path, int *fd, char *errmsg, size_t errlen)
{
    extern char **environ;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, deflt;
    char fdarg[16], jobid[ASSIST_JOBID_MAX + 1];
    char *argv[] = {(char *)path, "--dcfa-singleton", fdarg, jobid, NULL};
    int sv[2], target, rc, st;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        rc = -errno;
        assist_errmsg(errmsg, errlen, "cannot start an assist daemon for this singleton: %s",
                      strerror(errno));
        return rc;
    }
    target = sv[1] == 3 ? 4 : 3; /* a dup2 to another number clears FD_CLOEXEC */
    snprintf(fdarg, sizeof(fdarg), "%d", target);
    snprintf(jobid, sizeof(jobid), "%s", assist_st.jobid);
    sigemptyset(&none);
    sigemptyset(&deflt); /* what the daemon handles: not ignored, as we may have them */
    sigaddset(&deflt, SIGCHLD);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, SIGHUP);
    sigaddset(&deflt, SIGUSR1);
    rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawnattr_init(&at);
        if (rc != 0)
            posix_spawn_file_actions_destroy(&fa);
    }
    if (rc == 0) {
        if ((rc = posix_spawn_file_actions_adddup2(&fa, sv[1], target)) == 0 &&
            (rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
            (rc = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
            (rc = posix_spawnattr_setsigdefault(&at, &deflt)) == 0 &&
            (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) ==
                0)
            rc = posix_spawn(&pid, path, &fa, &at, argv, environ);
        posix_spawnattr_destroy(&at);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        assist_errmsg(errmsg, errlen, "cannot start an assist daemon for this singleton: '%.300s': %s",
                      path, strerror(rc));
        return -rc;
    }
    /* it exits at once (after its fork); ECHILD: SIGCHLD ignored, or reaped by the program */
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *fd = sv[0];
    return 0;
}

/* A singleton's first need of a daemon: start it, switch the channel to it
 * (PMI-1), hand it the keys put so far. Caller holds the lock. 0, or -errno
 * with errmsg (nothing changed then: still a singleton). */
static int assist_daemon_start(char *errmsg, size_t errlen)
{
    char path[PATH_MAX], line[ASSIST_WIRE_LINE_MAX], req[ASSIST_WIRE_LINE_MAX];
    char kvsname[ASSIST_WIRE_KVSNAME_MAX + 1];
    int fd = -1, rc;

    rc = assist_find_mpirun(path, sizeof(path), errmsg, errlen);
    if (rc == 0)
        rc = assist_daemon_exec(path, &fd, errmsg, errlen);
    if (rc != 0)
        return rc;
    assist_st.fd = fd;
    assist_st.inlen = 0;
    const char *init = "cmd=init pmi_version=1 pmi_subversion=1\n";
    rc = assist_chan_write(init, strlen(init));
    if (rc == 0)
        rc = assist_chan_wait(ASSIST_DAEMON_START_MS);
    if (rc == 0)
        rc = assist_chan_read_line(line, sizeof(line));
    if (rc == 0 && (!assist_wire_is(line, "response_to_init") || assist_reply_rc(line) != 0))
        rc = -EPROTO;
    if (rc == 0)
        rc = assist_chan_call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof(line));
    if (rc == 0 && assist_wire_get(line, "kvsname", kvsname, sizeof(kvsname)) != 0)
        rc = -EPROTO;
    /* what was put while we were alone goes to the daemon's table */
    for (size_t i = 0; rc == 0 && i < assist_st.nlocal; i++) {
        snprintf(req, sizeof(req), "cmd=put kvsname=%s key=%s value=%s\n", kvsname,
                 assist_st.local[i].key, assist_st.local[i].value);
        rc = assist_chan_call(req, "put_result", line, sizeof(line));
        if (rc == 0 && assist_reply_rc(line) != 0)
            rc = -EIO;
    }
    if (rc != 0) {
        close(fd); /* the daemon sees its channel close and ends */
        assist_st.fd = -1;
        assist_st.inlen = 0;
        assist_errmsg(errmsg, errlen,
                      "the assist daemon started for this singleton ('%.300s %s') did not answer: "
                      "%s",
                      path, "--dcfa-singleton", strerror(-rc));
        return rc == -ETIMEDOUT ? rc : -EIO;
    }
    for (size_t i = 0; i < assist_st.nlocal; i++)
        free(assist_st.local[i].value);
    free(assist_st.local);
    assist_st.local = NULL;
    assist_st.nlocal = assist_st.caplocal = 0;
    memcpy(assist_st.kvsname, kvsname, sizeof(kvsname));
    assist_st.version = 1;
    assist_st.own_daemon = 1; /* our mpirun: its extensions (hex values) hold */
    assist_st.singleton = 0;
    assist_st.adopted = 1;
    return 0;
}

#define ASSIST_SPAWN_VALUE_MAX (ASSIST_WIRE_LINE_MAX - 48) /* a value's text on the wire */
#define ASSIST_SPAWN_TEXT_MAX  (256 * 1024 - 8)            /* a request (our daemon's limit) */

/* How value s of a spawn travels: 0 as it is, 1 hex-encoded as "key:hex="
 * (our daemon's extension, for what the wire cannot carry: a newline in a
 * PMI-1 line, ';' in PMI-2), -1 not at all (too long, or another process
 * manager). A PMI-1 line holds at most ASSIST_WIRE_LINE_MAX bytes. */
static int assist_spawn_enc(const char *s)
{
    size_t n = strlen(s);

    if (strchr(s, '\n') == NULL && (assist_st.version != 2 || strchr(s, ';') == NULL))
        return n <= ASSIST_SPAWN_VALUE_MAX ? 0 : -1;
    return assist_st.own_daemon && 2 * n <= ASSIST_SPAWN_VALUE_MAX ? 1 : -1;
}

static int assist_spawn_str_ok(const char *s, int version)
{
    (void)version;
    return s != NULL && assist_spawn_enc(s) >= 0;
}

/* "key=value" + the wire's separator, or "key:hex=<hex>" when needed. */
static void assist_spawn_kv(struct assist_text *t, const char *key, const char *val)
{
    const char *sep = assist_st.version == 2 ? ";" : "\n";

    if (assist_spawn_enc(val) == 0) {
        assist_text_add(t, "%s=%s%s", key, val, sep);
        return;
    }
    assist_text_add(t, "%s:hex=", key);
    for (const unsigned char *c = (const unsigned char *)val; *c != '\0'; c++)
        assist_text_add(t, "%02x", *c);
    assist_text_add(t, "%s", sep);
}

/* Checks the arguments; 0 or -EINVAL with errmsg. total gets the process count. */
static int assist_spawn_check(int ncmds, const assist_spawn_cmd *cmds, int npreput,
                              const char *const *keys, const char *const *vals, int version,
                              int *total, char *errmsg, size_t errlen)
{
    long sum = 0;

    if (ncmds < 1 || cmds == NULL || npreput < 0 ||
        (npreput > 0 && (keys == NULL || vals == NULL))) {
        assist_errmsg(errmsg, errlen, "spawn: bad arguments (%d commands, %d preput pairs)", ncmds,
                      npreput);
        return -EINVAL;
    }
    for (int i = 0; i < ncmds; i++) {
        const assist_spawn_cmd *c = &cmds[i];
        if (c->command == NULL || c->command[0] == '\0' || c->maxprocs < 1 || c->ninfo < 0 ||
            (c->ninfo > 0 && (c->info_keys == NULL || c->info_vals == NULL))) {
            assist_errmsg(errmsg, errlen, "spawn: bad command %d", i);
            return -EINVAL;
        }
        sum += c->maxprocs;
        if (sum > INT_MAX / 2) {
            assist_errmsg(errmsg, errlen, "spawn: too many processes");
            return -EINVAL;
        }
        int ok = assist_spawn_str_ok(c->command, version);
        for (int a = 0; ok && c->argv != NULL && c->argv[a] != NULL; a++)
            ok = assist_spawn_str_ok(c->argv[a], version);
        for (int k = 0; ok && k < c->ninfo; k++)
            ok = assist_spawn_str_ok(c->info_keys[k], version) &&
                 assist_spawn_str_ok(c->info_vals[k], version) && c->info_keys[k][0] != '\0';
        if (!ok) {
            assist_errmsg(errmsg, errlen,
                          "spawn: command %d ('%.100s'): a program, argument or info that the "
                          "PMI-%d wire cannot carry (%s, or longer than %d bytes)",
                          i, c->command, version, version == 2 ? "';'" : "a newline",
                          ASSIST_SPAWN_VALUE_MAX);
            return -EINVAL;
        }
    }
    for (int k = 0; k < npreput; k++) {
        if (keys[k] == NULL || vals[k] == NULL || !assist_wire_key_ok(keys[k], ASSIST_KEY_MAX) ||
            !assist_wire_value_ok(vals[k], ASSIST_VALUE_MAX) ||
            (version == 2 && (strchr(keys[k], ';') != NULL || strchr(vals[k], ';') != NULL))) {
            assist_errmsg(errmsg, errlen, "spawn: bad preput pair %d ('%.64s')", k,
                          keys[k] != NULL ? keys[k] : "(null)");
            return -EINVAL;
        }
    }
    *total = (int)sum;
    return 0;
}

/* PMI-1: one "mcmd=spawn" block per command; one reply after the last. */
static void assist_spawn_text1(struct assist_text *t, int ncmds, const assist_spawn_cmd *cmds,
                               int npreput, const char *const *keys, const char *const *vals)
{
    char key[32];

    for (int i = 0; i < ncmds; i++) {
        const assist_spawn_cmd *c = &cmds[i];
        int argc = 0;
        while (c->argv != NULL && c->argv[argc] != NULL)
            argc++;
        assist_text_add(t, "mcmd=spawn\nnprocs=%d\n", c->maxprocs);
        assist_spawn_kv(t, "execname", c->command);
        assist_text_add(t, "totspawns=%d\nspawnssofar=%d\nargcnt=%d\n", ncmds, i + 1, argc);
        for (int a = 0; a < argc; a++) {
            snprintf(key, sizeof(key), "arg%d", a + 1);
            assist_spawn_kv(t, key, c->argv[a]);
        }
        if (i == 0) { /* as MPICH's client: the pairs go with the first block */
            assist_text_add(t, "preput_num=%d\n", npreput);
            for (int k = 0; k < npreput; k++)
                assist_text_add(t, "preput_key_%d=%s\npreput_val_%d=%s\n", k, keys[k], k, vals[k]);
        }
        assist_text_add(t, "info_num=%d\n", c->ninfo);
        for (int k = 0; k < c->ninfo; k++) {
            snprintf(key, sizeof(key), "info_key_%d", k);
            assist_spawn_kv(t, key, c->info_keys[k]);
            snprintf(key, sizeof(key), "info_val_%d", k);
            assist_spawn_kv(t, key, c->info_vals[k]);
        }
        assist_text_add(t, "endcmd\n");
    }
}

/* PMI-2: one message, a subcmd per command. */
static void assist_spawn_text2(struct assist_text *t, int ncmds, const assist_spawn_cmd *cmds,
                               int npreput, const char *const *keys, const char *const *vals)
{
    assist_text_add(t, "cmd=spawn;ncmds=%d;preputcount=%d;", ncmds, npreput);
    for (int k = 0; k < npreput; k++)
        assist_text_add(t, "ppkey%d=%s;ppval%d=%s;", k, keys[k], k, vals[k]);
    char key[32];

    for (int i = 0; i < ncmds; i++) {
        const assist_spawn_cmd *c = &cmds[i];
        int argc = 0;
        while (c->argv != NULL && c->argv[argc] != NULL)
            argc++;
        assist_spawn_kv(t, "subcmd", c->command);
        assist_text_add(t, "maxprocs=%d;argc=%d;", c->maxprocs, argc);
        for (int a = 0; a < argc; a++) {
            snprintf(key, sizeof(key), "argv%d", a);
            assist_spawn_kv(t, key, c->argv[a]);
        }
        assist_text_add(t, "infokeycount=%d;", c->ninfo);
        for (int k = 0; k < c->ninfo; k++) {
            snprintf(key, sizeof(key), "infokey%d", k);
            assist_spawn_kv(t, key, c->info_keys[k]);
            snprintf(key, sizeof(key), "infoval%d", k);
            assist_spawn_kv(t, key, c->info_vals[k]);
        }
    }
}

/* errcodes after the reply: a list "errcodes=a,b,..." (Slurm) or zeros on
 * success; after a failure the error for the command at fault (errcmd) and
 * -ECANCELED for the others, or the error for all. */
static void assist_spawn_codes(int *errcodes, int ncmds, const assist_spawn_cmd *cmds, int rc,
                               long errcmd, const char *list)
{
    int r = 0;

    if (errcodes == NULL)
        return;
    for (int i = 0; i < ncmds; i++) {
        for (int k = 0; k < cmds[i].maxprocs; k++, r++) {
            if (rc == 0)
                errcodes[r] = 0;
            else
                errcodes[r] = errcmd < 0 || errcmd >= ncmds || errcmd == i ? rc : -ECANCELED;
        }
    }
    if (rc == 0 && list != NULL) { /* the process manager's own codes (0 = started) */
        char *end;
        for (int i = 0; i < r && *list != '\0'; i++) {
            long v = strtol(list, &end, 10);
            if (end == list)
                break;
            errcodes[i] = v == 0 ? 0 : -EIO;
            list = *end == ',' ? end + 1 : end;
        }
    }
}

/* ---- spawn under Slurm ------------------------------------------------------------ */

/* Slurm's mpi/pmi2 plugin runs one srun for a spawn. Several commands become
 * "srun --multi-prog FILE": each command and its arguments written on a line
 * of FILE joined by blanks, and slurmstepd splits the line again, taking '\'
 * as an escape of the next character and '...' as a quote, and replacing
 * "%t" / "%o" (Slurm's src/plugins/mpi/pmi2/spawn.c, _exec_srun_multiple, and
 * src/slurmd/slurmstepd/multi_prog.c). Every process gets appnum -1 there.
 * For such a spawn the programs and arguments travel escaped, and the
 * commands' process counts are preput (assist_slurm_appnum). */
#define ASSIST_SLURM_MP_ARGS 126 /* slurmstepd's argv of 128 pointers: program + 126 + NULL */

struct assist_slurm_spawn {
    assist_spawn_cmd *cmds; /* copies of the commands, escaped */
    char **argvs;           /* the escaped arguments, every command's, each list NULL-ended */
    char **strs;            /* the escaped strings, for free */
    int nstrs;
    const char **keys, **vals; /* the preput pairs and ASSIST_SPAWN_APPS_KEY */
    char apps[ASSIST_VALUE_MAX + 1];
};

/* s as slurmstepd reads it back: blanks, '\\', '\'' and '%' escaped, "" as '';
 * NULL for a newline (FILE's lines) or out of memory. */
static char *assist_slurm_escape(const char *s)
{
    char *out = malloc(2 * strlen(s) + 3), *o = out;

    if (out == NULL || *s == '\0') {
        if (out != NULL)
            snprintf(out, 3, "''");
        return out;
    }
    for (; *s != '\0'; s++) {
        if (*s == '\n') {
            free(out);
            errno = EINVAL;
            return NULL;
        }
        if (isspace((unsigned char)*s) || *s == '\\' || *s == '\'' || *s == '%')
            *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

static void assist_slurm_spawn_free(struct assist_slurm_spawn *ss)
{
    for (int i = 0; i < ss->nstrs; i++)
        free(ss->strs[i]);
    free(ss->strs);
    free(ss->argvs);
    free(ss->cmds);
    free(ss->keys);
    free(ss->vals);
    memset(ss, 0, sizeof(*ss));
}

/* Prepares ss for a spawn of ncmds > 1 commands under Slurm (see above): 0, or
 * -EINVAL / -ENOMEM with errmsg. */
static int assist_slurm_spawn_prep(struct assist_slurm_spawn *ss, int ncmds,
                                   const assist_spawn_cmd *cmds, int npreput,
                                   const char *const *keys, const char *const *vals,
                                   char *errmsg, size_t errlen)
{
    int nargs = 0, a, k = 0;
    size_t len = 0;

    for (int i = 0; i < ncmds; i++)
        for (a = 0; cmds[i].argv != NULL && cmds[i].argv[a] != NULL; a++)
            nargs++;
    ss->cmds = calloc((size_t)ncmds, sizeof(*ss->cmds));
    ss->argvs = calloc((size_t)(nargs + ncmds), sizeof(*ss->argvs));
    ss->strs = calloc((size_t)(nargs + ncmds), sizeof(*ss->strs));
    ss->keys = calloc((size_t)npreput + 1, sizeof(*ss->keys));
    ss->vals = calloc((size_t)npreput + 1, sizeof(*ss->vals));
    if (ss->cmds == NULL || ss->argvs == NULL || ss->strs == NULL || ss->keys == NULL ||
        ss->vals == NULL)
        goto oom;
    for (int i = 0; i < ncmds; i++) {
        const assist_spawn_cmd *c = &cmds[i];
        char *e = assist_slurm_escape(c->command);
        ss->cmds[i] = *c;
        ss->cmds[i].argv = ss->argvs + k;
        if (e == NULL)
            goto bad;
        ss->strs[ss->nstrs++] = e;
        ss->cmds[i].command = e;
        for (a = 0; c->argv != NULL && c->argv[a] != NULL; a++) {
            if (a == ASSIST_SLURM_MP_ARGS) {
                assist_errmsg(errmsg, errlen,
                              "spawn: command %d ('%.100s') has more than %d arguments: Slurm's "
                              "srun --multi-prog, which starts the commands of "
                              "MPI_Comm_spawn_multiple, takes no more",
                              i, c->command, ASSIST_SLURM_MP_ARGS);
                assist_slurm_spawn_free(ss);
                return -EINVAL;
            }
            if ((e = assist_slurm_escape(c->argv[a])) == NULL)
                goto bad;
            ss->strs[ss->nstrs++] = e;
            ss->argvs[k++] = e;
        }
        ss->argvs[k++] = NULL;
        if (len < sizeof(ss->apps))
            len += (size_t)snprintf(ss->apps + len, sizeof(ss->apps) - len, "%s%d",
                                    i > 0 ? "," : "", c->maxprocs);
    }
    if (len >= sizeof(ss->apps)) {
        assist_errmsg(errmsg, errlen, "spawn: %d commands are too many under Slurm", ncmds);
        assist_slurm_spawn_free(ss);
        return -EINVAL;
    }
    for (k = 0; k < npreput; k++) {
        ss->keys[k] = keys[k];
        ss->vals[k] = vals[k];
    }
    ss->keys[npreput] = ASSIST_SPAWN_APPS_KEY;
    ss->vals[npreput] = ss->apps;
    return 0;
bad:
    if (errno != ENOMEM) {
        assist_errmsg(errmsg, errlen,
                      "spawn: a program or argument holds a newline, which Slurm's srun "
                      "--multi-prog (that starts the commands of MPI_Comm_spawn_multiple) "
                      "cannot take");
        assist_slurm_spawn_free(ss);
        return -EINVAL;
    }
oom:
    assist_errmsg(errmsg, errlen, "spawn: out of memory");
    assist_slurm_spawn_free(ss);
    return -ENOMEM;
}

/* Slurm's plugin answers a spawn only once the children's srun has its step:
 * when that srun fails (no CPUs left for the step, ...), no answer ever
 * comes. Waits DCFA_SPAWN_TIMEOUT for it: 0, -ETIMEDOUT with errmsg (the
 * answer, if it comes later, is dropped), or another -errno. */
static int assist_slurm_spawn_wait(int total, char *errmsg, size_t errlen)
{
    int s = util_cfg.spawn_timeout > 0 ? util_cfg.spawn_timeout : 60;
    int rc = assist_chan_wait(s > INT_MAX / 1000 ? INT_MAX : s * 1000);

    if (rc == -ETIMEDOUT) {
        assist_st.spawn_late = 1;
        assist_errmsg(errmsg, errlen,
                      "spawn: Slurm's mpi/pmi2 gave no answer within %d s (DCFA_SPAWN_TIMEOUT): "
                      "the srun it started for the %d new processes failed or waits for CPUs "
                      "(its error is on the job's stderr); run the parent in an allocation with "
                      "room for them, steps sharing it (salloc -n N, srun --overlap)",
                      s, total);
    }
    return rc;
}

int assist_spawn(int ncmds, const assist_spawn_cmd *cmds, int npreput, const char *const *keys,
                 const char *const *vals, int *errcodes, char *errmsg, size_t errlen)
{
    struct assist_text t = {0};
    struct assist_slurm_spawn ss = {0};
    const assist_spawn_cmd *wcmds = cmds; /* the commands as they go on the wire */
    char *reply = NULL, list[ASSIST_WIRE_LINE_MAX], msg[ASSIST_WIRE_LINE_MAX] = "";
    const size_t rmax = 64 * 1024;
    long prc = 0, err = 0, errcmd = -1;
    int rc, total = 0;

    assist_errmsg(errmsg, errlen, "%s", "");
    pthread_mutex_lock(&assist_st.lock);
    if (!assist_st.initialized) {
        rc = -EINVAL;
        assist_errmsg(errmsg, errlen, "spawn: the PMI client is not initialized");
        goto out_codes;
    }
    if (assist_st.singleton) { /* first the daemon: the checks depend on the wire */
        char why[1024];
        rc = assist_daemon_start(why, sizeof(why));
        if (rc != 0) {
            assist_errmsg(errmsg, errlen, "spawn: %s", why);
            goto out_codes;
        }
    }
    rc = assist_spawn_check(ncmds, cmds, npreput, keys, vals, assist_st.version, &total, errmsg,
                            errlen);
    if (rc == 0 && assist_st.slurm && ncmds > 1) {
        rc = assist_slurm_spawn_prep(&ss, ncmds, cmds, npreput, keys, vals, errmsg, errlen);
        if (rc == 0) {
            wcmds = ss.cmds;
            keys = ss.keys;
            vals = ss.vals;
            npreput++;
            rc = assist_spawn_check(ncmds, wcmds, npreput, keys, vals, assist_st.version, &total,
                                    errmsg, errlen);
        }
    }
    if (rc != 0)
        goto out_codes;
    reply = malloc(rmax);
    if (reply == NULL) {
        rc = -ENOMEM;
        assist_errmsg(errmsg, errlen, "spawn: out of memory");
        goto out_codes;
    }
    if (assist_st.version == 2)
        assist_spawn_text2(&t, ncmds, wcmds, npreput, keys, vals);
    else
        assist_spawn_text1(&t, ncmds, wcmds, npreput, keys, vals);
    if (!t.oom && t.len > ASSIST_SPAWN_TEXT_MAX) {
        rc = -EINVAL;
        assist_errmsg(errmsg, errlen, "spawn: the request is too long (%zu bytes, at most %d)",
                      t.len, ASSIST_SPAWN_TEXT_MAX);
        goto out_codes;
    }
    if (assist_st.version == 2) {
        rc = t.oom ? -ENOMEM : assist_chan_send2(t.data);
        if (rc == 0 && assist_st.slurm)
            rc = assist_slurm_spawn_wait(total, errmsg, errlen);
        if (rc == 0)
            rc = assist_chan_recv2("spawn-response", reply, rmax);
        if (rc == 0) {
            if (assist_wire2_get_int(reply, "rc", &prc) != 0)
                prc = 0;
            if (assist_wire2_get(reply, "errmsg", msg, sizeof(msg)) != 0)
                msg[0] = '\0';
            assist_wire2_get_int(reply, "errno", &err);
            assist_wire2_get_int(reply, "errcmd", &errcmd);
            if (assist_wire2_get(reply, "errcodes", list, sizeof(list)) != 0)
                list[0] = '\0';
        }
    } else {
        rc = t.oom ? -ENOMEM : assist_chan_write(t.data, t.len);
        if (rc == 0 && assist_st.slurm)
            rc = assist_slurm_spawn_wait(total, errmsg, errlen);
        if (rc == 0)
            rc = assist_chan_read_line(reply, ASSIST_WIRE_LINE_MAX);
        if (rc == 0 && !assist_wire_is(reply, "spawn_result")) {
            fprintf(stderr, "dcfa assist: expected cmd=spawn_result, got '%.200s'\n", reply);
            rc = -EPROTO;
        }
        if (rc == 0) {
            const char *m = strstr(reply, " msg="); /* runs to the end of the line */
            prc = assist_reply_rc(reply);
            snprintf(msg, sizeof(msg), "%s", m != NULL ? m + 5 : "");
            assist_wire_get_int(reply, "errno", &err);
            assist_wire_get_int(reply, "errcmd", &errcmd);
            if (assist_wire_get(reply, "errcodes", list, sizeof(list)) != 0)
                list[0] = '\0';
        }
    }
    if (rc != 0) {
        if (rc != -ETIMEDOUT) /* else assist_slurm_spawn_wait said why */
            assist_errmsg(errmsg, errlen, "spawn: the PMI exchange failed: %s", strerror(-rc));
        goto out_codes;
    }
    if (prc != 0) {
        rc = err > 0 && err < 4096 ? (int)-err : -EIO;
        if (msg[0] != '\0')
            assist_errmsg(errmsg, errlen, "%s", msg);
        else
            assist_errmsg(errmsg, errlen, "spawn: the process manager refused it: '%.300s'", reply);
    }
    assist_spawn_codes(errcodes, ncmds, cmds, rc, errcmd, rc == 0 && list[0] ? list : NULL);
    goto out;
out_codes:
    if (cmds != NULL && ncmds > 0)
        assist_spawn_codes(errcodes, ncmds, cmds, rc, -1, NULL);
out:
    pthread_mutex_unlock(&assist_st.lock);
    assist_slurm_spawn_free(&ss);
    free(t.data);
    free(reply);
    return rc;
}

/* ---- name service ------------------------------------------------------------ */

enum { ASSIST_PUBLISH, ASSIST_UNPUBLISH, ASSIST_LOOKUP };

/* The errno of a failed name request from the process manager's reason (our
 * mpirun's and Hydra's words); none: the usual failure of the operation. */
static int assist_name_error(int op, const char *msg)
{
    if (strcmp(msg, "key_already_present") == 0)
        return -EEXIST;
    if (strcmp(msg, "service_not_found") == 0)
        return -ENOENT;
    if (strcmp(msg, "bad_request") == 0)
        return -EINVAL;
    if (strcmp(msg, "name_table_full") == 0)
        return -ENOSPC;
    if (strcmp(msg, "name_server_failed") == 0) {
        fprintf(stderr, "dcfa assist: the name server of mpirun (DCFA_NAMESERVER) failed\n");
        return -EHOSTUNREACH;
    }
    return op == ASSIST_PUBLISH ? -EEXIST : -ENOENT;
}

/* A singleton: through the name server of DCFA_NAMESERVER. */
static int assist_name_server(int op, const char *service, const char *port, char *out, size_t cap)
{
    const char *addr = getenv("DCFA_NAMESERVER");
    char req[ASSIST_NS_LINE_MAX], reply[ASSIST_NS_LINE_MAX];
    const char *rest;
    int rc;

    if (addr == NULL || *addr == '\0')
        return -ENOSYS;
    if (op == ASSIST_PUBLISH)
        snprintf(req, sizeof(req), "PUBLISH %s %s\n", service, port);
    else
        snprintf(req, sizeof(req), "%s %s\n", op == ASSIST_LOOKUP ? "LOOKUP" : "UNPUBLISH",
                 service);
    rc = assist_ns_call(addr, req, reply, sizeof(reply), ASSIST_NS_TIMEOUT_MS);
    if (rc != 0) {
        fprintf(stderr, "dcfa assist: name server DCFA_NAMESERVER='%s': %s\n", addr, strerror(-rc));
        return -EHOSTUNREACH;
    }
    rc = assist_ns_status(reply, &rest);
    if (rc == -EPROTO || rc == -EBUSY || rc == -EACCES) {
        fprintf(stderr, "dcfa assist: name server '%s' answered '%.200s'\n", addr, reply);
        return -EHOSTUNREACH;
    }
    if (rc == 0 && op == ASSIST_LOOKUP) {
        if (strlen(rest) + 1 > cap)
            return -ENOSPC;
        memcpy(out, rest, strlen(rest) + 1);
    }
    return rc;
}

static int assist_name_call(int op, const char *service, const char *port, char *out, int maxlen)
{
    static const char *const v1[] = {"publish_name", "unpublish_name", "lookup_name"};
    static const char *const r1[] = {"publish_result", "unpublish_result", "lookup_result"};
    static const char *const v2[] = {"name-publish", "name-unpublish", "name-lookup"};
    char req[ASSIST_WIRE_LINE_MAX + 64], reply[ASSIST_WIRE_LINE_MAX], msg[256] = "";
    char got[ASSIST_PORT_MAX + 1] = "";
    const char *ns = NULL;
    long prc = 0;
    int rc, via_ns;

    if (!assist_ns_field_ok(service, ASSIST_SERVICE_MAX) ||
        (op == ASSIST_PUBLISH && !assist_ns_field_ok(port, ASSIST_PORT_MAX)) ||
        (op == ASSIST_LOOKUP && (out == NULL || maxlen < 1)))
        return -EINVAL;
    pthread_mutex_lock(&assist_st.lock);
    via_ns = assist_st.singleton && (ns = getenv("DCFA_NAMESERVER")) != NULL && *ns != '\0';
    if (assist_st.initialized && assist_st.singleton && !via_ns) {
        char why[1024];
        rc = assist_daemon_start(why, sizeof(why));
        if (rc != 0) {
            fprintf(stderr, "dcfa assist: %s\n", why);
            rc = -ENOSYS;
            goto out;
        }
    }
    if (!assist_st.initialized) {
        rc = -EINVAL;
    } else if (via_ns) {
        rc = assist_name_server(op, service, port, out, (size_t)maxlen);
    } else if (assist_st.version == 2) {
        if (op == ASSIST_PUBLISH)
            snprintf(req, sizeof(req), "cmd=%s;name=%s;port=%s;infokeycount=0;", v2[op], service,
                     port);
        else
            snprintf(req, sizeof(req), "cmd=%s;name=%s;infokeycount=0;", v2[op], service);
        snprintf(msg, sizeof(msg), "%s-response", v2[op]);
        rc = assist_chan_call2_any(req, msg, reply, sizeof(reply));
        msg[0] = '\0';
        if (rc == 0) {
            if (assist_wire2_get_int(reply, "rc", &prc) != 0)
                prc = 0;
            if (op == ASSIST_LOOKUP && prc == 0 &&
                assist_wire2_get(reply, "port", got, sizeof(got)) != 0 &&
                assist_wire2_get(reply, "value", got, sizeof(got)) != 0)
                prc = 1; /* Slurm says found=FALSE */
            assist_wire2_get(reply, "errmsg", msg, sizeof(msg));
        }
    } else {
        if (op == ASSIST_PUBLISH)
            snprintf(req, sizeof(req), "cmd=%s service=%s port=%s\n", v1[op], service, port);
        else
            snprintf(req, sizeof(req), "cmd=%s service=%s\n", v1[op], service);
        rc = assist_chan_call(req, r1[op], reply, sizeof(reply));
        if (rc == 0) {
            prc = assist_reply_rc(reply);
            if (op == ASSIST_LOOKUP && prc == 0 &&
                assist_wire_get(reply, "port", got, sizeof(got)) != 0)
                prc = 1;
            assist_wire_get(reply, "msg", msg, sizeof(msg));
        }
    }
    if (rc == 0 && !via_ns && prc != 0)
        rc = assist_name_error(op, msg);
    if (rc == 0 && !via_ns && op == ASSIST_LOOKUP) {
        if (strlen(got) + 1 > (size_t)maxlen)
            rc = -ENOSPC;
        else
            memcpy(out, got, strlen(got) + 1);
    }
out:
    pthread_mutex_unlock(&assist_st.lock);
    return rc;
}

int assist_name_publish(const char *service, const char *port)
{
    return assist_name_call(ASSIST_PUBLISH, service, port, NULL, 0);
}

int assist_name_unpublish(const char *service)
{
    return assist_name_call(ASSIST_UNPUBLISH, service, NULL, NULL, 0);
}

int assist_name_lookup(const char *service, char *port, int maxlen)
{
    return assist_name_call(ASSIST_LOOKUP, service, NULL, port, maxlen);
}
