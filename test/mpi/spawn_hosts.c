/* MPI_Comm_spawn onto chosen hosts (our mpirun with -hosts/-hostfile: the
 * tree of daemons; docs/dpm.md, docs/launcher.md). The parent job (any size,
 * root 0) spawns copies of this program and checks where they run and that
 * both sides can talk. Parent rank 0 reads the environment (and broadcasts
 * what the other parent ranks need; the children get their part as argv):
 *
 *   SPAWN_HOSTS_INFO    if set and not empty: info key "host" with this value
 *                       (e.g. "dcfa-h2" or "dcfa-h3:2"); else MPI_INFO_NULL
 *                       (the process manager's default placement)
 *   SPAWN_HOSTS_KEY     the info key for SPAWN_HOSTS_INFO: "host" (default) or
 *                       "hosts"
 *   SPAWN_HOSTS_N       the number of children (default 2, 1..64)
 *   SPAWN_HOSTS_EXPECT  optional comma list: the gethostname() of child rank
 *                       0..n-1, in order (checked at parent rank 0)
 *   SPAWN_HOSTS_NESTED  optional: the children (collectively, root 0) spawn 1
 *                       grandchild with info host = this value; it reports
 *                       its hostname and exchanges 64 KiB each way with child
 *                       rank 0
 *   SPAWN_HOSTS_NESTED_EXPECT  optional: the grandchild's expected hostname
 *   SPAWN_HOSTS_BAD     optional: a host name; first a spawn with info host =
 *                       that name must fail (error class MPI_ERR_SPAWN on
 *                       every parent rank, every errcode != MPI_SUCCESS, no
 *                       inter-communicator); then the normal spawn follows
 *   SPAWN_HOSTS_NAMES   "0" skips the name-service step (below)
 *   SPAWN_HOSTS_FIRST_MS  optional: parent rank 0 fails unless the (second)
 *                       spawn and the children's first message back (the
 *                       gather, step 2) take less than this many ms together;
 *                       the time goes to stderr ("first message from the
 *                       children after ... ms"). With the children's ofi held
 *                       back (DCFA_OFI_LATE_DELAY) this checks that they reach
 *                       their parent on another host without waiting for it
 *                       (docs/fabric.md, "First contact over sock")
 *
 * After the spawn, over the inter-communicator:
 *   1. a bcast parent -> children (sizes, a token);
 *   2. MPI_Gather of the children's hostnames to parent rank 0 (checked
 *      against SPAWN_HOSTS_EXPECT);
 *   3. point-to-point between parent rank 0 and every child at 8 B, 64 KiB
 *      and 1 MiB, patterns checked both ways;
 *   4. MPI_Bcast both ways (64 KiB each), MPI_Allreduce;
 *   5. names: child rank 0 opens a port and publishes it under a name made
 *      of the parent's token; parent rank 0 looks it up (the port name must
 *      be the one the child bcasts), connects, an exchange, disconnect;
 *      child rank 0 unpublishes and closes the port;
 *   6. MPI_Intercomm_merge (parents low) + MPI_Allreduce and MPI_Allgather
 *      on the merged communicator;
 *   7. the nested spawn, when asked for (children only);
 *   8. the children's error count to the parent (an allreduce), then
 *      MPI_Comm_disconnect on both sides.
 * Parent rank 0 prints " No Errors" (mtest) and nothing else on stdout;
 * children print nothing; their stderr lines are tagged "rank 100+c",
 * the grandchild's "rank 200". */
#include "mtest.h"
#include <limits.h>
#include <unistd.h>

#define CHILD_ARG "--spawn-hosts-child"
#define GRAND_ARG "--spawn-hosts-grandchild"
#define MAXCHILD  64
#define HOSTLEN   256
#define MID       (64 * 1024)
#define TOKLEN    96

static const int sizes[3] = {8, 64 * 1024, 1024 * 1024};
static double first_ms;    /* SPAWN_HOSTS_FIRST_MS at parent rank 0, 0 = no bound */
static double spawn_start; /* MPI_Wtime() before the spawn */

/* What parent rank 0 broadcasts to the other parent ranks and the children. */
struct cfg {
    int np;       /* parent job size */
    int n;        /* children */
    int names;    /* do the name step */
    int bad;      /* a spawn onto a host that is not mpirun's comes first */
    char token[TOKLEN]; /* unique per run: the published service name */
};

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0' ? v : dflt;
}

static void my_hostname(char *buf)
{
    memset(buf, 0, HOSTLEN);
    if (gethostname(buf, HOSTLEN - 1) != 0)
        snprintf(buf, HOSTLEN, "(gethostname failed)");
}

/* The i-th entry (0-based) of a comma list into out; 0 if there is none. */
static int list_item(const char *list, int i, char *out, size_t len)
{
    const char *p = list, *e;

    for (; i > 0 && p != NULL; i--) {
        p = strchr(p, ',');
        if (p != NULL)
            p++;
    }
    if (p == NULL)
        return 0;
    e = strchr(p, ',');
    if (e == NULL)
        e = p + strlen(p);
    if ((size_t)(e - p) >= len)
        return 0;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
    return 1;
}

static int list_count(const char *list)
{
    int n = 1;

    for (; *list; list++)
        n += *list == ',';
    return n;
}

static MPI_Info host_info(const char *key, const char *hosts)
{
    MPI_Info info = MPI_INFO_NULL;

    if (hosts != NULL && hosts[0] != '\0' && strcmp(hosts, "-") != 0) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, hosts);
    }
    return info;
}

/* MPI_ERRORS_RETURN (on) or MPI_ERRORS_ARE_FATAL on MPI_COMM_SELF and
 * MPI_COMM_WORLD: around the calls whose failure is checked */
static void errors_return(int on)
{
    MPI_Errhandler eh = on ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
}

static void free_info(MPI_Info *info)
{
    if (*info != MPI_INFO_NULL)
        MPI_Info_free(info);
}

/* ---- merge: both sides ------------------------------------------------- */

static void check_merge(MPI_Comm inter, int is_child, int np, int n)
{
    MPI_Comm merged = MPI_COMM_NULL;
    int lrank = -1, msize = -1, mrank = -1, sum = -1, id, i, total = np + n;
    int *ids;

    MPI_Comm_rank(inter, &lrank);
    MPI_Intercomm_merge(inter, is_child, &merged); /* parents low: first */
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    mtest_check_int("merged size", msize, total);
    mtest_check(mrank == (is_child ? np + lrank : lrank), "merge: rank %d, expected %d", mrank,
                is_child ? np + lrank : lrank);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    mtest_check_int("allreduce of merged ranks", sum, (long long)total * (total - 1) / 2);
    id = is_child ? 1000 + lrank : lrank;
    ids = mtest_malloc(sizeof(int) * (size_t)total);
    for (i = 0; i < total; i++)
        ids[i] = -1;
    MPI_Allgather(&id, 1, MPI_INT, ids, 1, MPI_INT, merged);
    for (i = 0; i < total; i++) {
        int want = i < np ? i : 1000 + (i - np);
        mtest_check(ids[i] == want, "merge: merged rank %d has id %d, expected %d", i, ids[i],
                    want);
    }
    free(ids);
#ifdef OPEN_MPI
    MPI_Comm_free(&merged); /* see spawn_basic.c: open-mpi/ompi#12004 */
#else
    MPI_Comm_disconnect(&merged);
#endif
}

/* ---- parent ------------------------------------------------------------ */

static void parent_talk(MPI_Comm inter, int rank, const struct cfg *cf, const char *expect)
{
    int n = cf->n, np = cf->np, c, k, v[2], r[2], got[2];
    char *names = NULL;
    unsigned char *buf;
    struct cfg cc = *cf;

    /* 1. the configuration to the children */
    MPI_Bcast(&cc, (int)sizeof cc, MPI_BYTE, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);

    /* 2. the children's hostnames */
    if (rank == 0) {
        names = mtest_malloc((size_t)n * HOSTLEN);
        memset(names, 0, (size_t)n * HOSTLEN);
    }
    MPI_Gather(NULL, 0, MPI_CHAR, names, HOSTLEN, MPI_CHAR, rank == 0 ? MPI_ROOT : MPI_PROC_NULL,
               inter);
    if (rank == 0 && first_ms > 0) {
        double ms = (MPI_Wtime() - spawn_start) * 1e3;
        fprintf(stderr, "first message from the children after %.1f ms (bound %.0f ms)\n", ms,
                first_ms);
        mtest_check(ms < first_ms,
                    "the children's first message came %.1f ms after the spawn began, not "
                    "within SPAWN_HOSTS_FIRST_MS=%.0f",
                    ms, first_ms);
    }
    if (rank == 0) {
        int bad = 0;
        if (expect != NULL) {
            if (!mtest_check(list_count(expect) == n,
                             "SPAWN_HOSTS_EXPECT '%s' has %d entries for %d children", expect,
                             list_count(expect), n))
                bad = 1;
            for (c = 0; c < n && !bad; c++) {
                char want[HOSTLEN];
                names[(size_t)c * HOSTLEN + HOSTLEN - 1] = '\0';
                if (list_item(expect, c, want, sizeof want) &&
                    strcmp(want, names + (size_t)c * HOSTLEN) != 0)
                    bad = 1;
            }
            mtest_check(!bad, "children run on the wrong hosts (expected %s)", expect);
        }
        if (bad || getenv("SPAWN_HOSTS_VERBOSE") != NULL) {
            char self[HOSTLEN];
            my_hostname(self);
            fprintf(stderr, "[rank 0] parent on %s; children on:", self);
            for (c = 0; c < n; c++)
                fprintf(stderr, " %d=%s", c, names + (size_t)c * HOSTLEN);
            fputc('\n', stderr);
        }
        free(names);
    }

    /* 3. point-to-point: parent rank 0 <-> every child, 8 B, 64 KiB, 1 MiB */
    if (rank == 0) {
        unsigned char *out = mtest_malloc((size_t)sizes[2]);
        unsigned char *in = mtest_malloc((size_t)sizes[2]);
        MPI_Request *req = mtest_malloc(sizeof(MPI_Request) * (size_t)n);

        for (k = 0; k < 3; k++) {
            mtest_fill(out, (size_t)sizes[k], 0, 100 + k);
            for (c = 0; c < n; c++)
                MPI_Isend(out, sizes[k], MPI_BYTE, c, 100 + k, inter, &req[c]);
            for (c = 0; c < n; c++) {
                MPI_Status st;
                int cnt = -1;
                char what[96];
                memset(in, 0, (size_t)sizes[k]);
                MPI_Recv(in, sizes[k], MPI_BYTE, c, 200 + k, inter, &st);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                mtest_check(cnt == sizes[k], "parent: %d bytes from child %d, expected %d", cnt, c,
                            sizes[k]);
                snprintf(what, sizeof what, "parent: %d bytes from child %d", sizes[k], c);
                mtest_verify(what, in, (size_t)sizes[k], 1000 + c, 200 + k);
            }
            MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        }
        free(req);
        free(in);
        free(out);
    }

    /* 4. bcast both ways, allreduce */
    buf = mtest_malloc(MID);
    mtest_fill(buf, MID, 0, 300);
    MPI_Bcast(buf, MID, MPI_BYTE, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    memset(buf, 0, MID);
    MPI_Bcast(buf, MID, MPI_BYTE, 0, inter);
    mtest_verify("parent: 64 KiB bcast from child 0", buf, MID, 1000, 301);
    free(buf);
    v[0] = rank + 1;
    v[1] = 1;
    r[0] = r[1] = -1;
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_SUM, inter);
    mtest_check(r[0] == 100 * n * (n + 1) / 2 && r[1] == n,
                "parent: allreduce {%d,%d}, expected {%d,%d}", r[0], r[1], 100 * n * (n + 1) / 2,
                n);

    /* 5. names: the child publishes a port, parent rank 0 connects to it */
    if (cf->names) {
        char port[MPI_MAX_PORT_NAME], looked[MPI_MAX_PORT_NAME];
        int will = 0;

        memset(port, 0, sizeof port);
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, inter); /* child 0's port name */
        MPI_Barrier(inter);                                     /* published */
        if (rank == 0) {
            MPI_Comm conn = MPI_COMM_NULL;
            int rc;

            port[MPI_MAX_PORT_NAME - 1] = '\0';
            looked[0] = '\0';
            /* name and port calls report on MPI_COMM_SELF (or MPI_COMM_WORLD) */
            errors_return(1);
            rc = MPI_Lookup_name(cf->token, MPI_INFO_NULL, looked);
            will = mtest_check_rc("parent: MPI_Lookup_name of child 0's service", rc) &&
                   mtest_check(strcmp(looked, port) == 0,
                               "parent: lookup gave '%s', expected '%s'", looked, port);
            /* child 0 accepts only when we connect: it must not wait for ever */
            MPI_Send(&will, 1, MPI_INT, 0, 399, inter);
            if (will) {
                rc = MPI_Comm_connect(looked, MPI_INFO_NULL, 0, MPI_COMM_SELF, &conn);
                errors_return(0);
                if (mtest_check_rc("parent: MPI_Comm_connect to child 0's port", rc)) {
                    MPI_Comm_set_errhandler(conn, MPI_ERRORS_ARE_FATAL);
                    got[0] = got[1] = -1;
                    v[0] = 4242;
                    v[1] = np;
                    MPI_Sendrecv(v, 2, MPI_INT, 0, 400, got, 2, MPI_INT, 0, 401, conn,
                                 MPI_STATUS_IGNORE);
                    mtest_check(got[0] == 2424 && got[1] == n,
                                "parent: over the port got {%d,%d}, expected {2424,%d}", got[0],
                                got[1], n);
                    MPI_Comm_disconnect(&conn);
                }
            }
            errors_return(0);
        }
        MPI_Barrier(inter); /* done with the port */
    }

    /* 6. merge */
    check_merge(inter, 0, np, n);
}

static void run_parent(void)
{
    char exe[PATH_MAX];
    const char *info_s = NULL, *key = "host", *expect = NULL, *nested = NULL, *nexpect = NULL;
    const char *bad = NULL;
    char *cargv[4];
    int rank, np, i, rc, zero = 0, cerrs = -1, errcodes[MAXCHILD];
    struct cfg cf;
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Info info;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    errors_return(1); /* until the spawns are checked */
    memset(&cf, 0, sizeof cf);
    cf.np = np;
    if (rank == 0) {
        info_s = env_or("SPAWN_HOSTS_INFO", NULL);
        key = env_or("SPAWN_HOSTS_KEY", "host");
        expect = env_or("SPAWN_HOSTS_EXPECT", NULL);
        nested = env_or("SPAWN_HOSTS_NESTED", NULL);
        nexpect = env_or("SPAWN_HOSTS_NESTED_EXPECT", NULL);
        bad = env_or("SPAWN_HOSTS_BAD", NULL);
        first_ms = atof(env_or("SPAWN_HOSTS_FIRST_MS", "0"));
        cf.n = atoi(env_or("SPAWN_HOSTS_N", "2"));
        if (cf.n < 1 || cf.n > MAXCHILD) {
            mtest_fail("SPAWN_HOSTS_N '%s': expected 1..%d", env_or("SPAWN_HOSTS_N", ""),
                       MAXCHILD);
            cf.n = 2;
        }
#ifdef OPEN_MPI
        cf.names = 0; /* publish/lookup across jobs needs an ompi-server */
#else
        cf.names = strcmp(env_or("SPAWN_HOSTS_NAMES", "1"), "0") != 0;
#endif
        snprintf(cf.token, sizeof cf.token, "dcfa-spawn-hosts-%ld-%ld", (long)getpid(),
                 (long)time(NULL));
        cf.bad = bad != NULL;
    }
    MPI_Bcast(&cf, (int)sizeof cf, MPI_BYTE, 0, MPI_COMM_WORLD);
    cf.np = np;

    mtest_self_exe(exe, sizeof exe);
    cargv[0] = CHILD_ARG;
    cargv[1] = (char *)(nested ? nested : "-");
    cargv[2] = (char *)(nexpect ? nexpect : "-");
    cargv[3] = NULL;

    /* a host that is not one of mpirun's: MPI_ERR_SPAWN, nothing started */
    if (cf.bad) {
        info = host_info("host", rank == 0 ? bad : NULL);
        for (i = 0; i < cf.n; i++)
            errcodes[i] = MPI_SUCCESS;
        rc = MPI_Comm_spawn(exe, cargv, cf.n, info, 0, MPI_COMM_WORLD, &inter, errcodes);
        free_info(&info);
        mtest_check_class("MPI_Comm_spawn onto a host that is not mpirun's", rc, MPI_ERR_SPAWN);
        if (rank == 0 && rc != MPI_SUCCESS) {
            /* the cause is in the error string (the library prints nothing under
             * MPI_ERRORS_RETURN): the launcher tests look for it on stderr */
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "bad host: %s\n", msg);
        }
        for (i = 0; i < cf.n; i++)
            mtest_check(errcodes[i] != MPI_SUCCESS,
                        "bad host: errcodes[%d] is MPI_SUCCESS, expected an error", i);
        if (!mtest_check(inter == MPI_COMM_NULL, "bad host: an inter-communicator came back")) {
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }

    info = host_info(key, rank == 0 ? info_s : NULL);
    for (i = 0; i < cf.n; i++)
        errcodes[i] = -1;
    spawn_start = MPI_Wtime();
    rc = MPI_Comm_spawn(exe, cargv, cf.n, info, 0, MPI_COMM_WORLD, &inter, errcodes);
    free_info(&info);
    mtest_check_rc("MPI_Comm_spawn", rc);
    if (rc != MPI_SUCCESS || inter == MPI_COMM_NULL) {
        mtest_check(inter != MPI_COMM_NULL, "MPI_Comm_spawn returned MPI_COMM_NULL");
        return;
    }
    /* from here on a failure ends the job with a message, not a hang: the
     * inter-communicator inherited MPI_ERRORS_RETURN from MPI_COMM_WORLD */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
    errors_return(0);
    for (i = 0; i < cf.n; i++)
        mtest_check(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d, expected MPI_SUCCESS", i,
                    errcodes[i]);
    MPI_Comm_remote_size(inter, &i);
    mtest_check_int("parent: remote size", i, cf.n);

    parent_talk(inter, rank, &cf, expect);

    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, inter);
    if (rank == 0)
        mtest_check(cerrs == 0, "the children found %d errors", cerrs);
    MPI_Comm_disconnect(&inter);
    mtest_check(inter == MPI_COMM_NULL, "parent: disconnect left the handle set");
}

/* ---- grandchild -------------------------------------------------------- */

static int run_grandchild(MPI_Comm parent)
{
    char host[HOSTLEN];
    unsigned char *buf = mtest_malloc(MID);
    int perrs = -1, wsize = -1;

    mtest_wrank = 200;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_check_int("grandchild: MPI_COMM_WORLD size", wsize, 1);
    my_hostname(host);
    MPI_Gather(host, HOSTLEN, MPI_CHAR, NULL, 0, MPI_CHAR, 0, parent);
    memset(buf, 0, MID);
    MPI_Recv(buf, MID, MPI_BYTE, 0, 500, parent, MPI_STATUS_IGNORE);
    mtest_verify("grandchild: 64 KiB from child 0", buf, MID, 1000, 500);
    mtest_fill(buf, MID, 2000, 501);
    MPI_Send(buf, MID, MPI_BYTE, 0, 501, parent);
    free(buf);
    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}

/* ---- child ------------------------------------------------------------- */

/* The children (collectively, root 0) spawn 1 grandchild on `nested`. */
static void child_nested(int c, const char *nested, const char *nexpect)
{
    char exe[PATH_MAX];
    char *gargv[] = {GRAND_ARG, NULL};
    char names[HOSTLEN];
    int errcode = -1, rc, gerrs = -1, zero = 0, rsize = -1;
    MPI_Comm gc = MPI_COMM_NULL;
    MPI_Info info = host_info("host", c == 0 ? nested : NULL);

    mtest_self_exe(exe, sizeof exe);
    errors_return(1);
    rc = MPI_Comm_spawn(exe, gargv, 1, info, 0, MPI_COMM_WORLD, &gc, &errcode);
    free_info(&info);
    errors_return(0);
    mtest_check_rc("child: MPI_Comm_spawn of the grandchild", rc);
    if (rc != MPI_SUCCESS || gc == MPI_COMM_NULL)
        return;
    MPI_Comm_set_errhandler(gc, MPI_ERRORS_ARE_FATAL);
    mtest_check(errcode == MPI_SUCCESS, "child: grandchild errcode %d", errcode);
    MPI_Comm_remote_size(gc, &rsize);
    mtest_check_int("child: grandchild remote size", rsize, 1);
    memset(names, 0, sizeof names);
    MPI_Gather(NULL, 0, MPI_CHAR, names, HOSTLEN, MPI_CHAR, c == 0 ? MPI_ROOT : MPI_PROC_NULL,
               gc);
    if (c == 0) {
        unsigned char *buf = mtest_malloc(MID);
        names[HOSTLEN - 1] = '\0';
        if (nexpect != NULL)
            mtest_check(strcmp(names, nexpect) == 0, "grandchild runs on '%s', expected '%s'",
                        names, nexpect);
        if (getenv("SPAWN_HOSTS_VERBOSE") != NULL)
            fprintf(stderr, "[rank %d] grandchild on %s\n", mtest_wrank, names);
        mtest_fill(buf, MID, 1000, 500);
        MPI_Send(buf, MID, MPI_BYTE, 0, 500, gc);
        memset(buf, 0, MID);
        MPI_Recv(buf, MID, MPI_BYTE, 0, 501, gc, MPI_STATUS_IGNORE);
        mtest_verify("child 0: 64 KiB from the grandchild", buf, MID, 2000, 501);
        free(buf);
    }
    MPI_Allreduce(&zero, &gerrs, 1, MPI_INT, MPI_SUM, gc);
    mtest_check(gerrs == 0, "child: the grandchild found %d errors", gerrs);
    MPI_Comm_disconnect(&gc);
}

static void child_talk(MPI_Comm parent, int c, const char *nested, const char *nexpect)
{
    struct cfg cf;
    char host[HOSTLEN];
    unsigned char *buf;
    int k, wsize = -1, rsize = -1, v[2], r[2];

    memset(&cf, 0, sizeof cf);
    MPI_Bcast(&cf, (int)sizeof cf, MPI_BYTE, 0, parent);
    cf.token[TOKLEN - 1] = '\0';
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_check_int("child: MPI_COMM_WORLD size", wsize, cf.n);
    MPI_Comm_remote_size(parent, &rsize);
    mtest_check_int("child: remote size (the parent job)", rsize, cf.np);
    if (wsize != cf.n || rsize != cf.np) {
        mtest_fail("child %d: cannot go on", c);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    my_hostname(host);
    MPI_Gather(host, HOSTLEN, MPI_CHAR, NULL, 0, MPI_CHAR, 0, parent);

    buf = mtest_malloc((size_t)sizes[2]);
    for (k = 0; k < 3; k++) {
        MPI_Status st;
        int cnt = -1;
        char what[96];
        memset(buf, 0, (size_t)sizes[k]);
        MPI_Recv(buf, sizes[k], MPI_BYTE, 0, 100 + k, parent, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        mtest_check(cnt == sizes[k], "child %d: %d bytes from parent 0, expected %d", c, cnt,
                    sizes[k]);
        snprintf(what, sizeof what, "child %d: %d bytes from parent 0", c, sizes[k]);
        mtest_verify(what, buf, (size_t)sizes[k], 0, 100 + k);
        mtest_fill(buf, (size_t)sizes[k], 1000 + c, 200 + k);
        MPI_Send(buf, sizes[k], MPI_BYTE, 0, 200 + k, parent);
    }

    memset(buf, 0, MID);
    MPI_Bcast(buf, MID, MPI_BYTE, 0, parent);
    mtest_verify("child: 64 KiB bcast from parent 0", buf, MID, 0, 300);
    mtest_fill(buf, MID, 1000, 301);
    MPI_Bcast(buf, MID, MPI_BYTE, c == 0 ? MPI_ROOT : MPI_PROC_NULL, parent);
    free(buf);
    v[0] = 100 * (c + 1);
    v[1] = 1;
    r[0] = r[1] = -1;
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_SUM, parent);
    mtest_check(r[0] == cf.np * (cf.np + 1) / 2 && r[1] == cf.np,
                "child %d: allreduce {%d,%d}, expected {%d,%d}", c, r[0], r[1],
                cf.np * (cf.np + 1) / 2, cf.np);

    if (cf.names) {
        char port[MPI_MAX_PORT_NAME];
        int rc = MPI_SUCCESS, published = 0;

        memset(port, 0, sizeof port);
        if (c == 0) {
            errors_return(1);
            rc = MPI_Open_port(MPI_INFO_NULL, port);
            if (mtest_check_rc("child 0: MPI_Open_port", rc)) {
                rc = MPI_Publish_name(cf.token, MPI_INFO_NULL, port);
                published = mtest_check_rc("child 0: MPI_Publish_name", rc);
            }
        }
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, c == 0 ? MPI_ROOT : MPI_PROC_NULL, parent);
        MPI_Barrier(parent); /* published */
        if (c == 0) {
            MPI_Comm conn = MPI_COMM_NULL;
            int will = -1, got[2] = {-1, -1}, out[2] = {2424, cf.n};
            MPI_Info ainfo;

            MPI_Recv(&will, 1, MPI_INT, 0, 399, parent, MPI_STATUS_IGNORE);
            if (will && published) {
                /* bounded all the same: a connect that never comes is an error, not a hang */
                MPI_Info_create(&ainfo);
                MPI_Info_set(ainfo, "timeout", "60");
                rc = MPI_Comm_accept(port, ainfo, 0, MPI_COMM_SELF, &conn);
                MPI_Info_free(&ainfo);
                if (mtest_check_rc("child 0: MPI_Comm_accept of parent 0", rc)) {
                    MPI_Comm_set_errhandler(conn, MPI_ERRORS_ARE_FATAL);
                    MPI_Sendrecv(out, 2, MPI_INT, 0, 401, got, 2, MPI_INT, 0, 400, conn,
                                 MPI_STATUS_IGNORE);
                    mtest_check(got[0] == 4242 && got[1] == cf.np,
                                "child 0: over the port got {%d,%d}, expected {4242,%d}",
                                got[0], got[1], cf.np);
                    MPI_Comm_disconnect(&conn);
                }
            }
        }
        MPI_Barrier(parent); /* done with the port */
        if (c == 0) {
            if (published)
                mtest_check_rc("child 0: MPI_Unpublish_name",
                               MPI_Unpublish_name(cf.token, MPI_INFO_NULL, port));
            if (port[0] != '\0')
                MPI_Close_port(port);
            errors_return(0);
        }
    }

    check_merge(parent, 1, cf.np, cf.n);

    if (nested != NULL)
        child_nested(c, nested, nexpect);
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    int c = -1, perrs = -1;
    const char *nested = NULL, *nexpect = NULL;

    MPI_Comm_rank(MPI_COMM_WORLD, &c);
    mtest_wrank = 100 + c;
    if (mtest_check(argc == 4 && strcmp(argv[1], CHILD_ARG) == 0,
                    "child: argc %d, argv[1] '%s', expected 4 and '%s'", argc,
                    argc > 1 ? argv[1] : "(none)", CHILD_ARG)) {
        if (strcmp(argv[2], "-") != 0)
            nested = argv[2];
        if (strcmp(argv[3], "-") != 0)
            nexpect = argv[3];
    }

    child_talk(parent, c, nested, nexpect);

    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        if (argc >= 2 && strcmp(argv[1], GRAND_ARG) == 0)
            return run_grandchild(parent);
        return run_child(parent, argc, argv);
    }
    mtest_check(argc < 2 || (strcmp(argv[1], CHILD_ARG) != 0 && strcmp(argv[1], GRAND_ARG) != 0),
                "started as a child but MPI_Comm_get_parent is MPI_COMM_NULL");
    run_parent();
    return mtest_finalize();
}
