/* Launcher test: the client's dynamic-process API (assist_spawn and the
 * name service, src/assist/assist.h) against our mpirun with PMI-1 or PMI-2
 * (DCFA_PMI_VERSION), Hydra, or as a singleton. Links only src/assist and
 * src/util. Rank 0 prints " No Errors" when every check passed.
 *
 *   assist_dpm spawn      rank 0 spawns 2 + 1 children from two commands
 *                         (preput pair, info wdir, many arguments for the
 *                         second; under our mpirun arguments with a newline
 *                         and ';' for the first); they check what they got
 *   assist_dpm fail       spawns that must fail, with their errcodes
 *   assist_dpm names      publish/lookup/unpublish and their errors
 *   assist_dpm usize      prints the universe size
 *   assist_dpm singleton  as a singleton: with DCFA_MPIRUN naming mpirun,
 *                         spawn starts a daemon on demand (the keys put
 *                         before reach it) and the test of "spawn" and
 *                         "names" runs through it; without, spawn gives
 *                         -ENOENT (no mpirun found) and names work with
 *                         DCFA_NAMESERVER, else give -ENOSYS
 *   assist_dpm pub S P | lookup S | unpub S   one name operation (prints rc)
 */
#include "assist/assist.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errs, rank;

#define CHECK(cond, ...)                                       \
    do {                                                       \
        if (!(cond)) {                                         \
            fprintf(stderr, "[%d] line %d: ", rank, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                      \
            fprintf(stderr, "\n");                             \
            errs++;                                            \
        }                                                      \
    } while (0)

static char self[PATH_MAX];

#define MANY_ARGS 300 /* a PMI-2 spawn message longer than a PMI-1 line */

static int child(int argc, char **argv)
{
    char parent[ASSIST_VALUE_MAX + 1] = "", cwd[PATH_MAX] = "";
    int size, appnum, rc;

    rc = assist_init(&rank, &size, &appnum);
    CHECK(rc == 0, "child init %d", rc);
    CHECK(size == 3, "child size %d", size);
    CHECK(appnum == (rank < 2 ? 0 : 1), "child rank %d appnum %d", rank, appnum);
    rc = assist_kvs_get("dpm-parent", parent, sizeof(parent));
    CHECK(rc == 0 && strncmp(parent, "from-", 5) == 0, "preput: rc %d '%s'", rc, parent);
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL && strcmp(cwd, appnum == 0 ? "/tmp" : "/") == 0,
          "wdir %s", cwd);
    if (appnum == 0 && argc > 2) { /* what no PMI wire carries as it is: a newline, ';' */
        CHECK(argc == 7 && strcmp(argv[2], "new\nline") == 0 &&
                  strcmp(argv[3], "semi;colon") == 0 && strcmp(argv[4], "") == 0 &&
                  strcmp(argv[5], "tab\there") == 0 && strcmp(argv[6], "caf\xc3\xa9 =%s") == 0,
              "special arguments (%d)", argc);
    }
    if (appnum == 1) {
        char want[64];
        snprintf(want, sizeof(want), "arg-%d-with-some-length-to-it", MANY_ARGS - 1);
        CHECK(argc == MANY_ARGS + 2 && strcmp(argv[argc - 1], want) == 0, "%d arguments", argc);
    }
    CHECK(assist_kvs_fence() == 0, "child fence");
    printf("dpm child rank %d appnum %d %s\n", rank, appnum, errs ? "FAILED" : "ok");
    assist_finalize();
    return errs != 0;
}

static int spawn_test(void)
{
    static char *many[MANY_ARGS + 2];
    char *args1[] = {"child", NULL};
    char *special[] = {"child",     "new\nline",       "semi;colon", "",
                       "tab\there", "caf\xc3\xa9 =%s", NULL};
    const char *ik0[] = {"wdir"}, *iv0[] = {"/tmp"}, *ik1[] = {"wdir", "unknown-key"},
               *iv1[] = {"/", "ignored"};
    assist_spawn_cmd cmds[2] = {{.command = self,
                                 .argv = args1,
                                 .maxprocs = 2,
                                 .ninfo = 1,
                                 .info_keys = ik0,
                                 .info_vals = iv0},
                                {.command = self,
                                 .argv = args1,
                                 .maxprocs = 1,
                                 .ninfo = 2,
                                 .info_keys = ik1,
                                 .info_vals = iv1}};
    const char *keys[] = {"dpm-parent"};
    char val[64], msg[256];
    const char *vals[] = {val};
    int codes[3] = {-1, -1, -1}, rc;

    many[0] = "child";
    for (int i = 0; i < MANY_ARGS; i++) {
        char a[64];
        snprintf(a, sizeof(a), "arg-%d-with-some-length-to-it", i);
        many[i + 1] = strdup(a);
    }
    cmds[1].argv = many;
    if (getenv("DCFA_JOBID") != NULL) /* our mpirun: its extension carries them */
        cmds[0].argv = special;
    snprintf(val, sizeof(val), "from-%s", assist_job_id());
    if (rank != 0)
        return 0;
    rc = assist_spawn(2, cmds, 1, keys, vals, codes, msg, sizeof(msg));
    CHECK(rc == 0 && msg[0] == '\0', "spawn: %d '%s'", rc, msg);
    CHECK(codes[0] == 0 && codes[1] == 0 && codes[2] == 0, "errcodes %d %d %d", codes[0], codes[1],
          codes[2]);
    return 0;
}

static int fail_test(void)
{
    char *args[] = {"child", NULL};
    assist_spawn_cmd cmds[2] = {{.command = self, .argv = args, .maxprocs = 1},
                                {.command = "/nonexistent/prog", .argv = args, .maxprocs = 2}};
    const char *badkey[] = {"bad key"}, *val[] = {"v"};
    char msg[256];
    int codes[3] = {1, 1, 1}, rc;

    if (rank != 0)
        return 0;
    rc = assist_spawn(2, cmds, 0, NULL, NULL, codes, msg, sizeof(msg));
    CHECK(rc == -ENOENT, "missing program: %d '%s'", rc, msg);
    CHECK(strstr(msg, "/nonexistent/prog") != NULL, "message '%s'", msg);
    CHECK(codes[0] == -ECANCELED && codes[1] == -ENOENT && codes[2] == -ENOENT, "errcodes %d %d %d",
          codes[0], codes[1], codes[2]);
    rc = assist_spawn(1, cmds, 1, badkey, val, NULL, msg, sizeof(msg));
    CHECK(rc == -EINVAL, "bad preput key: %d '%s'", rc, msg);
    cmds[0].maxprocs = 0;
    rc = assist_spawn(1, cmds, 0, NULL, NULL, NULL, NULL, 0);
    CHECK(rc == -EINVAL, "maxprocs 0: %d", rc);
    return 0;
}

static void names_test(int expect_nosys)
{
    char port[ASSIST_PORT_MAX + 1], svc[64], small[4];
    int rc;

    snprintf(svc, sizeof(svc), "dpm-svc-%d-%d", (int)getpid(), rank);
    rc = assist_name_publish(svc, "tcp://port-1");
    if (expect_nosys) {
        CHECK(rc == -ENOSYS, "publish without a name server: %d", rc);
        CHECK(assist_name_lookup(svc, port, sizeof(port)) == -ENOSYS, "lookup: ENOSYS");
        return;
    }
    CHECK(rc == 0, "publish %d", rc);
    CHECK(assist_name_publish(svc, "tcp://port-2") == -EEXIST, "second publish");
    rc = assist_name_lookup(svc, port, sizeof(port));
    CHECK(rc == 0 && strcmp(port, "tcp://port-1") == 0, "lookup %d '%s'", rc, port);
    CHECK(assist_name_lookup(svc, small, sizeof(small)) == -ENOSPC, "lookup, short buffer");
    CHECK(assist_name_lookup("dpm-no-such-service", port, sizeof(port)) == -ENOENT,
          "lookup of a missing name");
    CHECK(assist_name_unpublish(svc) == 0, "unpublish");
    CHECK(assist_name_unpublish(svc) == -ENOENT, "second unpublish");
    CHECK(assist_name_lookup(svc, port, sizeof(port)) == -ENOENT, "lookup after unpublish");
    CHECK(assist_name_publish("two words", "p") == -EINVAL, "service with a space");
    CHECK(assist_name_publish("semi;colon", "p") == -EINVAL, "service with ';'");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int size, appnum, rc;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return 1;
    self[n] = '\0';
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "child") == 0)
        return child(argc, argv);
    rc = assist_init(&rank, &size, &appnum);
    if (rc != 0) {
        fprintf(stderr, "assist_init: %d\n", rc);
        return 1;
    }
    if (strcmp(mode, "spawn") == 0) {
        spawn_test();
    } else if (strcmp(mode, "fail") == 0) {
        fail_test();
    } else if (strcmp(mode, "names") == 0) {
        names_test(0);
    } else if (strcmp(mode, "usize") == 0) {
        if (rank == 0)
            printf("usize %d\n", assist_universe_size());
    } else if (strcmp(mode, "singleton") == 0) {
        const char *mpirun = getenv("DCFA_MPIRUN");
        CHECK(assist_is_singleton(), "not a singleton");
        CHECK(assist_universe_size() >= 1, "universe size %d", assist_universe_size());
        if (mpirun != NULL && access(mpirun, X_OK) == 0) {
            char v[64] = "";
            CHECK(assist_kvs_put("dpm-before", "put-alone") == 0, "put before the daemon");
            spawn_test();
            rc = assist_kvs_get("dpm-before", v, sizeof(v));
            CHECK(rc == 0 && strcmp(v, "put-alone") == 0, "get after the daemon: %d '%s'", rc, v);
            CHECK(assist_kvs_put("dpm-after", "x") == 0, "put to the daemon");
            CHECK(assist_kvs_fence() == 0, "fence with the daemon");
            CHECK(assist_is_singleton(), "no longer a singleton with its daemon");
            names_test(0);
        } else {
            char *args[] = {"child", NULL};
            assist_spawn_cmd cmd = {.command = self, .argv = args, .maxprocs = 1};
            char msg[1024];
            int code = 1;
            rc = assist_spawn(1, &cmd, 0, NULL, NULL, &code, msg, sizeof(msg));
            CHECK(rc == -ENOENT && code == -ENOENT && strcasestr(msg, "mpirun") != NULL,
                  "singleton spawn without mpirun: %d '%s'", rc, msg);
            names_test(getenv("DCFA_NAMESERVER") == NULL);
        }
    } else if (argc > 2 && (strcmp(mode, "pub") == 0 || strcmp(mode, "lookup") == 0 ||
                            strcmp(mode, "unpub") == 0)) {
        char port[ASSIST_PORT_MAX + 1] = "";
        rc = mode[0] == 'p'   ? assist_name_publish(argv[2], argc > 3 ? argv[3] : "port")
             : mode[0] == 'l' ? assist_name_lookup(argv[2], port, sizeof(port))
                              : assist_name_unpublish(argv[2]);
        printf("%s %s rc=%d%s%s\n", mode, argv[2], rc, port[0] ? " port=" : "", port);
        assist_finalize();
        return 0;
    } else {
        fprintf(stderr,
                "usage: assist_dpm spawn|fail|names|usize|singleton|pub S P|lookup S|unpub S\n");
        return 2;
    }
    CHECK(assist_kvs_fence() == 0, "fence");
    assist_finalize();
    if (errs == 0 && rank == 0)
        printf(" No Errors\n");
    return errs != 0;
}
