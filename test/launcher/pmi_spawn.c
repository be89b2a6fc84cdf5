/* Launcher test: spawn and the name service through raw PMI-1 lines on
 * PMI_FD, so that the daemon is tested on its own: this program links
 * nothing of the library (only the header-only parser src/assist/pmi_wire.h).
 *
 *   pmi_spawn child [exit=N|abort|quiet|lookup=S|hang|shm|stdin]... [args]
 *                          a spawned process: init, get of the preput key,
 *                          prints what it got, a fence of its job, finalize
 *   pmi_spawn spawn N [child words...]   rank 0 spawns N children
 *   pmi_spawn multi        rank 0 spawns 1 + 2 children from two commands
 *   pmi_spawn fail         spawns that must fail, each at once
 *   pmi_spawn oversub N    rank 0 spawns N children, prints the outcome
 *   pmi_spawn wdir DIR     a child started in DIR (info wdir)
 *   pmi_spawn path         a child found through info path
 *   pmi_spawn repeat N     N spawns in a row, each child ends before the next;
 *                          prints mpirun's fd count and RSS after 10 and N
 *   pmi_spawn usize        prints the universe size
 *   pmi_spawn shmcheck     a child's /dev/shm file is gone once its job ended
 *   pmi_spawn names        publish/lookup/unpublish, from two ranks and a child
 *   pmi_spawn pub S P | lookup S | unpub S   one name operation
 *
 * Every printed line starts with the mode; the shell script checks them
 * (test/launcher/dpm_test.sh). */
#include "assist/pmi_wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE ASSIST_WIRE_LINE_MAX

static int pmi_fd = -1, rank, size, appnum;
static char kvsname[256], self[PATH_MAX];
static char inbuf[LINE];
static size_t inlen;

static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "pmi_spawn[%d]: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void pmi_write(const char *s)
{
    size_t len = strlen(s);

    while (len > 0) {
        ssize_t n = write(pmi_fd, s, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("write to PMI_FD: %s", strerror(errno));
        s += n;
        len -= (size_t)n;
    }
}

static void pmi_read(char *line)
{
    for (;;) {
        char *nl = memchr(inbuf, '\n', inlen);
        if (nl != NULL) {
            size_t n = (size_t)(nl - inbuf);
            memcpy(line, inbuf, n);
            line[n] = '\0';
            inlen -= n + 1;
            memmove(inbuf, nl + 1, inlen);
            return;
        }
        if (inlen == sizeof(inbuf))
            die("reply line too long");
        ssize_t n = read(pmi_fd, inbuf + inlen, sizeof(inbuf) - inlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("the process manager closed the PMI connection");
        inlen += (size_t)n;
    }
}

/* Sends req, reads the reply, which must be cmd=expect. */
static void pmi_call(const char *req, const char *expect, char *reply)
{
    pmi_write(req);
    pmi_read(reply);
    if (!assist_wire_is(reply, expect))
        die("sent '%.*s', expected cmd=%s, got '%s'", (int)strcspn(req, "\n"), req, expect, reply);
}

static long reply_int(const char *reply, const char *key)
{
    long v;

    if (assist_wire_get_int(reply, key, &v) != 0)
        die("no %s in '%s'", key, reply);
    return v;
}

static void pmi_init(void)
{
    char line[LINE];
    const char *s;

    if ((s = getenv("PMI_FD")) == NULL)
        die("no PMI_FD: run under mpirun");
    pmi_fd = atoi(s);
    rank = atoi(getenv("PMI_RANK") ? getenv("PMI_RANK") : "0");
    size = atoi(getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "1");
    pmi_call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line);
    if (reply_int(line, "rc") != 0)
        die("init refused: %s", line);
    pmi_call("cmd=get_appnum\n", "appnum", line);
    appnum = (int)reply_int(line, "appnum");
    pmi_call("cmd=get_my_kvsname\n", "my_kvsname", line);
    if (assist_wire_get(line, "kvsname", kvsname, sizeof(kvsname)) != 0)
        die("no kvsname in '%s'", line);
}

static void pmi_barrier(void)
{
    char line[LINE];

    pmi_call("cmd=barrier_in\n", "barrier_out", line);
}

static void pmi_finalize(void)
{
    char line[LINE];

    pmi_call("cmd=finalize\n", "finalize_ack", line);
    close(pmi_fd);
}

/* 0 and the value, or the rc of get_result. */
static long pmi_get(const char *key, char *value, size_t cap)
{
    char req[LINE], line[LINE];
    long rc;

    snprintf(req, sizeof(req), "cmd=get kvsname=%s key=%s\n", kvsname, key);
    pmi_call(req, "get_result", line);
    rc = reply_int(line, "rc");
    if (rc == 0 && assist_wire_get(line, "value", value, cap) != 0)
        value[0] = '\0';
    return rc;
}

struct cmd {
    const char *exe;
    int nprocs;
    const char *args[8]; /* NULL-terminated */
    const char *info[8]; /* key, value, ..., NULL */
};

/* One spawn of ncmds commands with the preput pair PARENT_TEST=<value>; the
 * reply line in reply. Returns its rc. */
static long pmi_spawn(int ncmds, const struct cmd *cmds, const char *preput, char *reply)
{
    char buf[16 * LINE];

    for (int i = 0; i < ncmds; i++) {
        size_t n = 0;
        int argc = 0, ninfo = 0;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\n",
                              cmds[i].nprocs, cmds[i].exe, ncmds, i + 1);
        while (cmds[i].args[argc] != NULL)
            argc++;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "argcnt=%d\n", argc);
        for (int a = 0; a < argc; a++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "arg%d=%s\n", a + 1, cmds[i].args[a]);
        if (i == 0 && preput != NULL)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                                  "preput_num=1\npreput_key_0=PARENT_TEST\npreput_val_0=%s\n",
                                  preput);
        while (cmds[i].info[2 * ninfo] != NULL)
            ninfo++;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "info_num=%d\n", ninfo);
        for (int k = 0; k < ninfo; k++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "info_key_%d=%s\ninfo_val_%d=%s\n", k,
                                  cmds[i].info[2 * k], k, cmds[i].info[2 * k + 1]);
        snprintf(buf + n, sizeof(buf) - n, "endcmd\n");
        pmi_write(buf);
    }
    pmi_read(reply);
    if (!assist_wire_is(reply, "spawn_result"))
        die("expected cmd=spawn_result, got '%s'", reply);
    return reply_int(reply, "rc");
}

/* The text after " msg=" (it runs to the end of the line). */
static const char *reply_msg(const char *reply)
{
    const char *m = strstr(reply, " msg=");

    return m != NULL ? m + 5 : "";
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- child ---------------------------------------------------------------------- */

static void child_usr1(int sig)
{
    static const char msg[] = "child got SIGUSR1\n";

    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0)
        _exit(1);
}

static int child_main(int argc, char **argv)
{
    char pre[LINE] = "", cwd[PATH_MAX] = "", out[4 * LINE];
    const char *spawned = getenv("PMI_SPAWNED");
    int code = 0, quiet = 0, hang = 0, n;

    signal(SIGUSR1, child_usr1); /* the hang report reaches spawned jobs too */
    pmi_init();
    if (pmi_get("PARENT_TEST", pre, sizeof(pre)) != 0)
        snprintf(pre, sizeof(pre), "(none)");
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        snprintf(cwd, sizeof(cwd), "?");
    /* node: the processes of all jobs the daemon runs here (DCFA_NODE_NPROCS) */
    n = snprintf(out, sizeof(out), "child rank %d size %d appnum %d preput %s spawned %s node %s args",
                 rank, size, appnum, pre, spawned ? spawned : "-",
                 getenv("DCFA_NODE_NPROCS") ? getenv("DCFA_NODE_NPROCS") : "-");
    for (int i = 2; i < argc; i++) {
        char reply[LINE], req[LINE];
        if (strncmp(argv[i], "exit=", 5) == 0) {
            code = atoi(argv[i] + 5);
        } else if (strcmp(argv[i], "quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "hang") == 0) {
            hang = 1;
        } else if (strcmp(argv[i], "shm") == 0) { /* a file the daemon must remove */
            char path[PATH_MAX];
            snprintf(path, sizeof(path), "/dev/shm/dcfa-%s-spawntest",
                     getenv("DCFA_JOBID") ? getenv("DCFA_JOBID") : "none");
            int fd = open(path, O_CREAT | O_WRONLY, 0600);
            if (fd >= 0)
                close(fd);
            n += snprintf(out + n, sizeof(out) - (size_t)n, " shm %s", path);
        } else if (strcmp(argv[i], "stdin") == 0) { /* /dev/null: only job 0 rank 0 reads ours */
            char buf[256];
            long total = 0;
            ssize_t got;
            while ((got = read(0, buf, sizeof(buf))) > 0)
                total += got;
            n += snprintf(out + n, sizeof(out) - (size_t)n, " stdin %ld bytes", total);
        } else if (strcmp(argv[i], "abort") == 0) {
            pmi_write("cmd=abort exitcode=5 error_msg=child abort\n");
            sleep(30);
            return 1;
        } else if (strncmp(argv[i], "lookup=", 7) == 0) {
            snprintf(req, sizeof(req), "cmd=lookup_name service=%s\n", argv[i] + 7);
            pmi_call(req, "lookup_result", reply);
            n += snprintf(out + n, sizeof(out) - (size_t)n, " lookup:%s", reply);
        } else {
            n += snprintf(out + n, sizeof(out) - (size_t)n, " %s", argv[i]);
        }
    }
    if (!quiet)
        printf("%s cwd %s\n", out, cwd);
    fflush(stdout);
    pmi_barrier(); /* the fence of its own job */
    if (hang)
        sleep(30);
    pmi_finalize();
    return code;
}

/* ---- parents --------------------------------------------------------------------- */

static int spawn_main(int argc, char **argv)
{
    char reply[LINE], pre[300];
    struct cmd c = {.exe = self, .nprocs = argc > 2 ? atoi(argv[2]) : 1};
    int hang = 0;

    c.args[0] = "child";
    for (int i = 3, k = 1; i < argc && k < 7; i++) {
        if (strcmp(argv[i], "parent-hang") == 0)
            hang = 1;
        else
            c.args[k++] = argv[i];
    }
    pmi_init();
    if (rank == 0) {
        snprintf(pre, sizeof(pre), "hello-from-%s", kvsname);
        long rc = pmi_spawn(1, &c, pre, reply);
        printf("spawn rc=%ld%s%s\n", rc, rc != 0 ? " msg=" : "", rc != 0 ? reply_msg(reply) : "");
        fflush(stdout);
        if (hang)
            sleep(30);
    }
    pmi_barrier();
    pmi_finalize();
    return 0;
}

static int multi_main(void)
{
    char reply[LINE];
    struct cmd c[2] = {{.exe = self, .nprocs = 1, .args = {"child", "first"}},
                       {.exe = self, .nprocs = 2, .args = {"child", "second"}}};

    pmi_init();
    if (rank == 0)
        printf("multi rc=%ld\n", pmi_spawn(2, c, "multi", reply));
    pmi_finalize();
    return 0;
}

/* Each spawn must fail, quickly; prints "fail <case> rc=R msg=..." */
static int fail_main(void)
{
    static const char *const cases[] = {"missing", "notexec", "pathsearch", "wdir",
                                        "host",    "file",    "second",     "badpreput"};
    char reply[LINE], notexec[PATH_MAX];
    int fd;

    pmi_init();
    snprintf(notexec, sizeof(notexec), "/tmp/pmi_spawn_notexec_%d", (int)getpid());
    fd = open(notexec, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cmd c[2] = {{.exe = self, .nprocs = 1, .args = {"child"}},
                           {.exe = self, .nprocs = 1, .args = {"child"}}};
        const char *pre = "x";
        int ncmds = 1;
        double t0 = now();
        switch (i) {
        case 0:
            c[0].exe = "/nonexistent/dir/prog";
            break;
        case 1:
            c[0].exe = notexec;
            break;
        case 2:
            c[0].exe = "no-such-program-xyz";
            break;
        case 3:
            c[0].info[0] = "wdir";
            c[0].info[1] = "/nonexistent/dir";
            break;
        case 4:
            c[0].info[0] = "host";
            c[0].info[1] = "some-other-host";
            break;
        case 5:
            c[0].info[0] = "file";
            c[0].info[1] = "/etc/hosts";
            break;
        case 6: /* the second command is at fault: nothing starts */
            c[1].exe = "/nonexistent/second";
            ncmds = 2;
            break;
        case 7:
            pre = "two words";
            break;
        }
        long rc = pmi_spawn(ncmds, c, pre, reply), err = 0, errcmd = -9;
        assist_wire_get_int(reply, "errno", &err);
        assist_wire_get_int(reply, "errcmd", &errcmd);
        printf("fail %s rc=%ld errno=%ld errcmd=%ld msg=%s\n", cases[i], rc, err, errcmd,
               reply_msg(reply));
        if (now() - t0 > 15) /* a hang until some deadline, not a loaded machine */
            printf("fail %s took %.1f s\n", cases[i], now() - t0);
    }
    unlink(notexec);
    fflush(stdout);
    pmi_finalize();
    return 0;
}

static int oversub_main(int argc, char **argv)
{
    char reply[LINE];
    struct cmd c = {.exe = self, .nprocs = argc > 2 ? atoi(argv[2]) : 1, .args = {"child"}};

    pmi_init();
    if (rank == 0) {
        long rc = pmi_spawn(1, &c, "over", reply);
        printf("oversub rc=%ld msg=%s\n", rc, reply_msg(reply));
    }
    /* every rank runs until the spawn was decided: one that ended before would not count */
    pmi_barrier();
    pmi_finalize();
    return 0;
}

static int wdir_main(int argc, char **argv)
{
    char reply[LINE];
    struct cmd c = {.exe = self, .nprocs = 1, .args = {"child"}, .info = {"wdir", argv[2]}};

    if (argc < 3)
        die("wdir needs a directory");
    pmi_init();
    printf("wdir rc=%ld\n", pmi_spawn(1, &c, "w", reply));
    pmi_finalize();
    return 0;
}

static int path_main(void)
{
    char reply[LINE], dir[PATH_MAX];
    const char *base = strrchr(self, '/') + 1;
    struct cmd c = {.exe = base, .nprocs = 1, .args = {"child", "via-path"}, .info = {"path", dir}};

    snprintf(dir, sizeof(dir), "/nonexistent:%.*s", (int)(base - 1 - self), self);
    pmi_init();
    printf("path rc=%ld%s\n", pmi_spawn(1, &c, "p", reply), reply_msg(reply));
    pmi_finalize();
    return 0;
}

/* The number of processes mpirun (our parent) has as children. */
static int mpirun_children(void)
{
    char path[64], buf[4096];
    int fd, n = 0;
    ssize_t len;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getppid(), (int)getppid());
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    len = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    for (ssize_t i = 0; i < len; i++)
        n += buf[i] == ' ';
    return n;
}

static void mpirun_usage(long *fds, long *rss)
{
    char path[64], line[256];
    struct dirent *de;
    DIR *dir;
    FILE *f;

    *fds = *rss = 0;
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)getppid());
    dir = opendir(path);
    while (dir != NULL && (de = readdir(dir)) != NULL)
        *fds += de->d_name[0] != '.';
    if (dir != NULL)
        closedir(dir);
    snprintf(path, sizeof(path), "/proc/%d/status", (int)getppid());
    f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            *rss = atol(line + 6);
    if (f != NULL)
        fclose(f);
}

static int repeat_main(int argc, char **argv)
{
    char reply[LINE];
    int n = argc > 2 ? atoi(argv[2]) : 100;
    struct cmd c = {.exe = self, .nprocs = 1, .args = {"child", "quiet"}};
    long fds10 = 0, rss10 = 0, fds = 0, rss = 0;

    pmi_init();
    for (int i = 1; i <= n; i++) {
        long rc = pmi_spawn(1, &c, "r", reply);
        if (rc != 0)
            die("spawn %d failed: %s", i, reply);
        double end = now() + 10;
        while (mpirun_children() > 1 && now() < end) /* just this rank left */
            usleep(2000);
        usleep(20000); /* the daemon frees the job after the child's pipes close */
        if (i == 10)
            mpirun_usage(&fds10, &rss10);
    }
    mpirun_usage(&fds, &rss);
    printf("repeat %d fds %ld %ld rss %ld %ld\n", n, fds10, fds, rss10, rss);
    pmi_finalize();
    return 0;
}

/* A child leaves a file in /dev/shm and ends: once it is gone, the daemon
 * must have removed the file (its job is freed) while this job still runs. */
static int shmcheck_main(void)
{
    char reply[LINE], path[PATH_MAX];
    struct cmd c = {.exe = self, .nprocs = 1, .args = {"child", "shm"}};
    double end = now() + 10;

    pmi_init();
    if (pmi_spawn(1, &c, "s", reply) != 0)
        die("spawn failed: %s", reply);
    /* the first spawned job is <our job id>_1 */
    snprintf(path, sizeof(path), "/dev/shm/dcfa-%s_1-spawntest", getenv("DCFA_JOBID"));
    while (mpirun_children() > 1 && now() < end)
        usleep(2000);
    while (access(path, F_OK) == 0 && now() < end)
        usleep(2000);
    printf("shmcheck %s\n", access(path, F_OK) == 0 ? "left behind" : "removed");
    pmi_finalize();
    return 0;
}

static int usize_main(void)
{
    char line[LINE];

    pmi_init();
    pmi_call("cmd=get_universe_size\n", "universe_size", line);
    if (rank == 0)
        printf("usize %ld\n", reply_int(line, "size"));
    pmi_finalize();
    return 0;
}

/* One name operation; prints "<op> rc=R [port=P] msg=M". */
static long name_op(const char *op, const char *service, const char *port, int show)
{
    char req[LINE], reply[LINE], got[LINE] = "", msg[LINE] = "";
    const char *expect = strcmp(op, "publish") == 0     ? "publish_result"
                         : strcmp(op, "unpublish") == 0 ? "unpublish_result"
                                                        : "lookup_result";
    long rc;

    if (port != NULL)
        snprintf(req, sizeof(req), "cmd=%s_name service=%s port=%s\n", op, service, port);
    else
        snprintf(req, sizeof(req), "cmd=%s_name service=%s\n", op, service);
    pmi_call(req, expect, reply);
    rc = reply_int(reply, "rc");
    assist_wire_get(reply, "port", got, sizeof(got));
    assist_wire_get(reply, "msg", msg, sizeof(msg));
    if (show)
        printf("%s %s rc=%ld%s%s msg=%s\n", op, service, rc, got[0] ? " port=" : "", got, msg);
    return rc;
}

static int names_main(void)
{
    char reply[LINE], svc[64];
    struct cmd c = {.exe = self, .nprocs = 1, .args = {"child", "lookup=dpm-shared"}};

    pmi_init();
    snprintf(svc, sizeof(svc), "dpm-%d", getpid());
    if (rank == 0) {
        name_op("publish", "dpm-shared", "port-of-rank-0", 1);
        name_op("publish", "dpm-shared", "another-port", 1); /* taken */
        name_op("lookup", "dpm-shared", NULL, 1);
        name_op("lookup", "dpm-missing", NULL, 1);
        name_op("publish", svc, "p", 0);
        name_op("unpublish", svc, NULL, 1);
        name_op("unpublish", svc, NULL, 1); /* absent now */
        name_op("lookup", svc, NULL, 1);
        name_op("publish", "bad;name", "p", 1);
        fflush(stdout);
    }
    pmi_barrier();
    if (rank == 1) {
        name_op("lookup", "dpm-shared", NULL, 1);                     /* another rank of the job */
        printf("names spawn rc=%ld\n", pmi_spawn(1, &c, "n", reply)); /* and another job */
        fflush(stdout);
    }
    pmi_barrier();
    pmi_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    const char *mode = argc > 1 ? argv[1] : "";

    if (n <= 0)
        return 1;
    self[n] = '\0';
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "child") == 0)
        return child_main(argc, argv);
    if (strcmp(mode, "spawn") == 0)
        return spawn_main(argc, argv);
    if (strcmp(mode, "multi") == 0)
        return multi_main();
    if (strcmp(mode, "fail") == 0)
        return fail_main();
    if (strcmp(mode, "oversub") == 0)
        return oversub_main(argc, argv);
    if (strcmp(mode, "wdir") == 0)
        return wdir_main(argc, argv);
    if (strcmp(mode, "path") == 0)
        return path_main();
    if (strcmp(mode, "repeat") == 0)
        return repeat_main(argc, argv);
    if (strcmp(mode, "usize") == 0)
        return usize_main();
    if (strcmp(mode, "shmcheck") == 0)
        return shmcheck_main();
    if (strcmp(mode, "names") == 0)
        return names_main();
    if (argc > 2 &&
        (strcmp(mode, "pub") == 0 || strcmp(mode, "lookup") == 0 || strcmp(mode, "unpub") == 0)) {
        pmi_init();
        name_op(mode[0] == 'p'   ? "publish"
                : mode[0] == 'l' ? "lookup"
                                 : "unpublish",
                argv[2], mode[0] == 'p' ? (argc > 3 ? argv[3] : "port") : NULL, 1);
        pmi_finalize();
        return 0;
    }
    fprintf(stderr, "usage: pmi_spawn child|spawn N|multi|fail|oversub N|wdir DIR|path|repeat "
                    "N|usize|names|pub S P|lookup S|unpub S\n");
    return 2;
}
