/* Spawn and disconnect in a loop: 1 rank spawns 1 child, exchanges a message
 * each way with it and disconnects, ITER times (argv[1], default 100). The
 * child: MPI_Init, receive, reply, MPI_Comm_disconnect(parent), MPI_Finalize.
 * After a warm-up of WARMUP iterations the parent records
 *   - its open file descriptors (entries of /proc/self/fd),
 *   - the /dev/shm entries named dcfa-* that no other live process maps or
 *     holds open (so segments of other jobs running meanwhile do not count,
 *     while a leaked one, or one we still map, does),
 *   - the children alive: processes whose command line is this program's
 *     name followed by the child marker and our pid (children are started by
 *     the launcher's daemon, not by us, so the parent pid cannot tell);
 * and at the end, after waiting (at most SETTLE_MS) for the last child to go,
 * checks that nothing grew: the same number of fds, no more dcfa-* entries
 * than after the warm-up, at most 1 child alive.
 * Open MPI 4.1.4 (Debian 12, external PMIx 4.2.2) cannot be held to 100 runs: a
 * child now and then hangs in PMIx_Init and the parent in MPI_Comm_spawn
 * (openpmix/openpmix#2735), at a random iteration (33 to 96 here); reference
 * runs with it use a shorter count (spawn_loop 20). */
#include "mtest.h"
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#define CHILD_ARG "--spawn-loop-child"
#define WARMUP    5
#define SETTLE_MS 10000

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');

    return s ? s + 1 : path;
}

/* Open fds of this process (the directory stream's own fd not counted). */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

/* Reads a whole small /proc file into buf (NUL-terminated); returns its length or -1. */
static long read_proc(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return -1;
    n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (long)n;
}

static int is_pid(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* Is /dev/shm/name mapped or open in a live process other than us? */
static int shm_used_by_other(const char *name)
{
    char path[PATH_MAX], link[PATH_MAX], line[1024], want[300];
    DIR *proc, *fds;
    struct dirent *p, *f;
    pid_t self = getpid();
    int used = 0;

    snprintf(want, sizeof want, "/dev/shm/%s", name);
    proc = opendir("/proc");
    if (proc == NULL)
        return 0;
    while (!used && (p = readdir(proc)) != NULL) {
        FILE *maps;

        if (!is_pid(p->d_name) || atoi(p->d_name) == (int)self)
            continue;
        snprintf(path, sizeof path, "/proc/%s/maps", p->d_name);
        maps = fopen(path, "r");
        if (maps != NULL) {
            while (!used && fgets(line, sizeof line, maps) != NULL) {
                char *q = strstr(line, want);

                if (q != NULL &&
                    (q[strlen(want)] == '\n' || q[strlen(want)] == ' ' || q[strlen(want)] == '\0'))
                    used = 1;
            }
            fclose(maps);
        }
        snprintf(path, sizeof path, "/proc/%s/fd", p->d_name);
        fds = used ? NULL : opendir(path);
        if (fds != NULL) {
            while (!used && (f = readdir(fds)) != NULL) {
                ssize_t n;

                if (f->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof path, "/proc/%s/fd/%s", p->d_name, f->d_name);
                n = readlink(path, link, sizeof link - 1);
                if (n > 0) {
                    link[n] = '\0';
                    used = strcmp(link, want) == 0;
                }
            }
            closedir(fds);
        }
    }
    closedir(proc);
    return used;
}

/* dcfa-* entries of /dev/shm not in use by another live process. */
static int count_shm(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "dcfa-", 5) == 0 && !shm_used_by_other(e->d_name))
            n++;
    closedir(d);
    return n;
}

/* Live processes running this program as our child: cmdline is
 * "<path ending in our name>\0CHILD_ARG\0<our pid>\0". Zombies have an empty
 * cmdline and do not count. */
static int count_children(const char *name, int mypid)
{
    char path[PATH_MAX], buf[4096], pidstr[32];
    DIR *proc = opendir("/proc");
    struct dirent *p;
    int n = 0;

    if (proc == NULL)
        return -1;
    snprintf(pidstr, sizeof pidstr, "%d", mypid);
    while ((p = readdir(proc)) != NULL) {
        long len;
        const char *a0, *a1, *a2;

        if (!is_pid(p->d_name) || atoi(p->d_name) == mypid)
            continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", p->d_name);
        len = read_proc(path, buf, sizeof buf);
        if (len <= 0)
            continue;
        a0 = buf;
        a1 = a0 + strlen(a0) + 1;
        if (a1 >= buf + len)
            continue;
        a2 = a1 + strlen(a1) + 1;
        if (a2 >= buf + len || a2 + strlen(a2) + 1 != buf + len)
            continue;
        if (strcmp(base_name(a0), name) == 0 && strcmp(a1, CHILD_ARG) == 0 &&
            strcmp(a2, pidstr) == 0)
            n++;
    }
    closedir(proc);
    return n;
}

/* One iteration: spawn, exchange, disconnect. */
static void one_spawn(const char *exe, char *pidstr, int it)
{
    char *argv[] = {CHILD_ARG, pidstr, NULL};
    MPI_Comm inter = MPI_COMM_NULL;
    int errcode = -1, rc, out = 1000 + it, in = -1;

    rc = MPI_Comm_spawn(exe, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, &errcode);
    if (!mtest_check_rc("MPI_Comm_spawn", rc) || inter == MPI_COMM_NULL) {
        mtest_fail("iteration %d: spawn failed", it);
        return;
    }
    mtest_check(errcode == MPI_SUCCESS, "iteration %d: errcode %d", it, errcode);
    MPI_Send(&out, 1, MPI_INT, 0, 5, inter);
    MPI_Recv(&in, 1, MPI_INT, 0, 6, inter, MPI_STATUS_IGNORE);
    mtest_check(in == 2 * out + 1, "iteration %d: child replied %d, expected %d", it, in,
                2 * out + 1);
    MPI_Comm_disconnect(&inter);
}

static void run_parent(int argc, char **argv)
{
    char exe[PATH_MAX], pidstr[32];
    const char *name;
    int iters = 100, warm, it, mypid = (int)getpid();
    int fd0 = -1, shm0 = -1, kids0 = -1, fd1, shm1, kids1, waited;

    if (argc >= 2) {
        iters = atoi(argv[1]);
        if (iters < 1) {
            mtest_fail("bad iteration count '%s'", argv[1]);
            return;
        }
    }
    warm = iters > WARMUP ? WARMUP : iters;
    mtest_self_exe(exe, sizeof exe);
    name = base_name(exe);
    snprintf(pidstr, sizeof pidstr, "%d", mypid);

    for (it = 0; it < iters; it++) {
        if (it == warm) {
            fd0 = count_fds();
            shm0 = count_shm();
            kids0 = count_children(name, mypid);
        }
        one_spawn(exe, pidstr, it);
    }
    if (fd0 < 0) /* fewer iterations than the warm-up: nothing to compare */
        return;

    /* Let the last child (and anything else) finish; bounded. */
    for (waited = 0;; waited += 100) {
        fd1 = count_fds();
        shm1 = count_shm();
        kids1 = count_children(name, mypid);
        if ((fd1 == fd0 && shm1 <= shm0 && kids1 == 0) || waited >= SETTLE_MS)
            break;
        mtest_sleep_ms(100);
    }
    mtest_check(fd1 == fd0, "open fds: %d after %d iterations, %d after the warm-up of %d", fd1,
                iters, fd0, warm);
    mtest_check(shm1 <= shm0, "/dev/shm dcfa-* entries: %d after %d iterations, %d after %d", shm1,
                iters, shm0, warm);
    mtest_check(kids1 <= 1,
                "%d children still alive %d ms after the last disconnect (%d after the warm-up)",
                kids1, waited, kids0);
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    int v = -1, out, ok = 1;

    mtest_wrank = 100;
    if (argc != 3 || strcmp(argv[1], CHILD_ARG) != 0) {
        fprintf(stderr, "[child] unexpected arguments (argc %d)\n", argc);
        ok = 0;
    }
    MPI_Recv(&v, 1, MPI_INT, 0, 5, parent, MPI_STATUS_IGNORE);
    out = 2 * v + 1;
    if (!ok)
        out = -1; /* the parent reports it */
    MPI_Send(&out, 1, MPI_INT, 0, 6, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;
    int size;

    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return run_child(parent, argc, argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1)
        mtest_fail("spawn_loop runs on 1 rank, not %d", size);
    else
        run_parent(argc, argv);
    return mtest_finalize();
}
