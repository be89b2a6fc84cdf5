/* mpirun / mpiexec: command line parsing; the work is done by the assist
 * daemon (ad_run), which on this node runs inside this process. The same
 * binary started as "mpirun --dcfa-daemon" is the assist daemon of another
 * host (ad_remote_main, reading its job from stdin), and as "mpirun
 * --dcfa-singleton FD JOBID" the daemon a singleton starts on demand
 * (ad_singleton_main). */
#include "ad.h"
#include "ad_ep.h"
#include "ad_gateway.h"
#include "ad_singleton.h"
#include "ad_nameserver.h"
#include "ad_tree_main.h"
#include "mpirun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <unistd.h>

#ifndef DCFA_VERSION
#define DCFA_VERSION "0.1.0"
#endif

#define MPIRUN_MAX_PROCS   4096
#define MPIRUN_MAX_USIZE   1000000
#define MPIRUN_USAGE_ERROR 2

static void mpirun_usage(FILE *f)
{
    fputs(
        "Usage: mpirun [options] program [args...] [: [options] program [args...]]...\n"
        "\n"
        "Options (before each program; ':' starts another program of the same job):\n"
        "  -n, -np N               number of ranks for this program (default 1)\n"
        "  -env NAME VALUE         set NAME=VALUE for this program's ranks\n"
        "  -genv NAME VALUE        set NAME=VALUE for all ranks\n"
        "  -x NAME[=VALUE]         export NAME (from mpirun's environment, or VALUE) to all ranks\n"
        "  --timeout SECONDS       end the job after SECONDS (exit status 124); also\n"
        "                          MPIEXEC_TIMEOUT. Ranks get SIGUSR1 first to report what\n"
        "                          they are waiting for\n"
        "  -l, --prefix-output     prefix every output line with \"[rank] \"\n"
        "  -hosts, -host H[:N],... run on these hosts (N ranks per pass on each, default 1);\n"
        "                          an assist daemon per host is started with $DCFA_RSH\n"
        "                          (default ssh)\n"
        "  -hostfile, -f FILE      hosts from FILE: one per line, name[:N] or name slots=N,\n"
        "                          '#' comments\n"
        "                          Before the first program: the global list. After a ':':\n"
        "                          that program's own hosts (its ranks go there; without -n\n"
        "                          it gets their slots; with an explicit :N or slots=N its -n\n"
        "                          must fit); programs without their own use the global list\n"
        "  -ppn N                  N ranks per host and pass (overrides the slots; global)\n"
        "  --gateways G1,...       hosts on two networks that run the job's gateway daemons\n"
        "                          (no ranks): ranks without a common network talk through\n"
        "                          them (docs/gateway.md). Global; also taken as the last\n"
        "                          words of the line, after the last program's arguments\n"
        "  --gateway-routes FILE   lines 'SIDE SIDE GATEWAY' (a side: a host or a network\n"
        "                          a.b.c.d/n) choosing a pair's gateway (docs/gateway.md);\n"
        "                          also at the end of the line, as --gateways\n"
        "  -usize, --universe-size N   the universe size the ranks are told (MPI_UNIVERSE_SIZE);\n"
        "                          also DCFA_UNIVERSE_SIZE. Default: the hosts' slots, else\n"
        "                          the job size or the number of CPUs, the larger\n"
        "  --no-oversubscribe      refuse a spawn that would run more processes than the\n"
        "                          universe size (also DCFA_OVERSUBSCRIBE=0)\n"
        "  --oversubscribe         allow it (the default)\n"
        "  --isolate MODE[,MODE]   confine each rank (also DCFA_ISOLATE): net = a network\n"
        "                          namespace with only loopback (root, or unprivileged user\n"
        "                          namespaces); seccomp = a filter that denies socket() but\n"
        "                          AF_UNIX (no root); shm = an empty read-only /dev/shm\n"
        "                          (as net), its shared segments memfds from the daemon;\n"
        "                          its connections to other ranks are sockets the assist\n"
        "                          daemon hands over\n"
        "  --relay                 the assist daemon forwards the bytes of the sockets it\n"
        "                          hands over instead of passing both ends of one pair (the\n"
        "                          host-offload baseline; also DCFA_RELAY=1)\n"
        "  --allow-run-as-root     accepted and ignored\n"
        "  --map-by, -map-by M     where each host's ranks go: core (the default), hwthread,\n"
        "                          socket, numa (round robin over them), node (round robin\n"
        "                          over the hosts, then by core), ppr:N:resource (N ranks\n"
        "                          per core, hwthread, socket, numa or node)\n"
        "  --bind-to, -bind-to B   bind each rank to its core, hwthread, socket, numa or none.\n"
        "                          Default: to what it is mapped by (a core when by node or\n"
        "                          by default) if the host's ranks fit on its cores, else\n"
        "                          none. More ranks than cores with --bind-to core is an\n"
        "                          error unless --oversubscribe\n"
        "  --report-bindings       one line per rank on stderr: host, pid, rank, its cpus\n"
        "  -wdir, --wdir, -wd DIR  the ranks start in DIR (default: mpirun's directory)\n"
        "  -h, --help              this help\n"
        "  --version               print the version\n"
        "\n"
        "Name server: mpirun --nameserver [--port N] [--bind ADDR] serves\n"
        "MPI_Publish_name/MPI_Lookup_name to every mpirun (and singleton) started with\n"
        "DCFA_NAMESERVER=host:port; it prints host:port first and runs until SIGTERM.\n"
        "It listens on 127.0.0.1 and answers its own user's processes, and clients that\n"
        "share DCFA_NAMESERVER_SECRET (needed with --bind to another address).\n"
        "\n"
        "Gateway without a daemon tree (a job started by srun): mpirun --gateway-daemon on\n"
        "a gateway host, with DCFA_GATEWAY_KEY set, prints its DCFA_GATEWAYS entry and runs\n"
        "until SIGTERM; the ranks get the same key and DCFA_GATEWAYS (docs/gateway.md).\n"
        "\n"
        "Exit status: 0 if every rank exited 0; else the first failing rank's status\n"
        "(128+N for signal N, the code given to MPI_Abort), 124 on timeout,\n"
        "126/127 if the program cannot be executed, 1 when a rank exits without\n"
        "calling MPI_Init while others are in MPI (after DCFA_NOINIT_GRACE seconds,\n"
        "default 1). See docs/launcher.md.\n",
        f);
}

static int mpirun_bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpirun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nmpirun: see 'mpirun --help'\n");
    return -EINVAL;
}

static int mpirun_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return -EINVAL;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

/* Appends "NAME=VALUE" (a new string) to a list. */
static int mpirun_env_add(char ***list, int *n, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    char **l;

    if (s == NULL)
        return -ENOMEM;
    snprintf(s, len, "%s=%s", name, value);
    l = realloc(*list, (size_t)(*n + 1) * sizeof(*l));
    if (l == NULL) {
        free(s);
        return -ENOMEM;
    }
    l[(*n)++] = s;
    *list = l;
    return 0;
}

static int mpirun_name_ok(const char *name) { return *name != '\0' && strchr(name, '=') == NULL; }

static void mpirun_opts_free(struct mpirun_opts *o)
{
    for (int a = 0; a < o->napps; a++) {
        for (int i = 0; i < o->apps[a].nenv; i++)
            free(o->apps[a].env[i]);
        free(o->apps[a].env);
        free(o->apps[a].argv);
        for (int k = 0; k < o->apps[a].nhosts; k++)
            free(o->apps[a].hosts[k].name);
        free(o->apps[a].hosts);
        free(o->apps[a].host_idx);
    }
    free(o->apps);
    for (int i = 0; i < o->ngenv; i++)
        free(o->genv[i]);
    free(o->genv);
    free(o->wdir);
    mpirun_hosts_free(o);
}

/* "--name=value" -> value of a long option, else NULL. */
static const char *mpirun_inline_value(const char *arg, const char *name)
{
    size_t n = strlen(name);

    if (strncmp(arg, name, n) == 0 && arg[n] == '=')
        return arg + n + 1;
    return NULL;
}

/* --bind-to, --map-by, --report-bindings, -wdir (and their spellings) at
 * argv[*i]: 0 when taken (*i on its last word), 1 when not one of them, or
 * -EBADMSG after a message. */
static int mpirun_place_option(struct mpirun_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *val = NULL, *opt;
    int bind = 0;

    if ((val = mpirun_inline_value(a, "--bind-to")) != NULL || strcmp(a, "--bind-to") == 0 ||
        strcmp(a, "-bind-to") == 0) {
        opt = "--bind-to";
        bind = 1;
    } else if ((val = mpirun_inline_value(a, "--map-by")) != NULL || strcmp(a, "--map-by") == 0 ||
               strcmp(a, "-map-by") == 0) {
        opt = "--map-by";
    } else if ((val = mpirun_inline_value(a, "--wdir")) != NULL || strcmp(a, "--wdir") == 0 ||
               strcmp(a, "-wdir") == 0 || strcmp(a, "-wd") == 0 || strcmp(a, "--wd") == 0) {
        opt = "-wdir";
    } else if (strcmp(a, "--report-bindings") == 0 || strcmp(a, "-report-bindings") == 0) {
        o->bind.report = 1;
        return 0;
    } else {
        return 1;
    }
    if (val == NULL)
        val = *i + 1 < argc ? argv[++*i] : NULL;
    if (strcmp(opt, "-wdir") == 0) {
        if (val == NULL || *val == '\0') {
            mpirun_bad("%s needs a directory", opt);
            return -EBADMSG;
        }
        free(o->wdir);
        return (o->wdir = strdup(val)) != NULL ? 0 : -ENOMEM;
    }
    if (bind ? mpirun_bind_parse_bind(&o->bind, opt, val)
             : mpirun_bind_parse_map(&o->bind, opt, val))
        return -EBADMSG;
    return 0;
}

/* After the command line: -wdir made absolute (and, on this host only,
 * checked: across hosts each daemon says when it cannot enter it) and given
 * to every program; --map-by node across hosts places one rank per host and
 * pass. 0 or -EBADMSG after a message. */
static int mpirun_place_finish(struct mpirun_opts *o)
{
    /* DCFA_BIND_TO: the --bind-to of every run that gives none (as a job script's or a
     * test harness's environment: test hosts that share one machine's cores say none) */
    const char *bind_env = getenv("DCFA_BIND_TO");
    if (!o->bind.bind_given && bind_env != NULL && *bind_env != '\0' &&
        mpirun_bind_parse_bind(&o->bind, "DCFA_BIND_TO", bind_env))
        return -EBADMSG;
    if (o->bind.map == MPIRUN_RES_NODE && o->bind.ppr == 0 && o->ppn == 0 && o->nhosts > 0)
        o->ppn = 1;
    if (o->wdir == NULL)
        return 0;
    if (o->wdir[0] != '/') {
        char cwd[PATH_MAX], *abs;
        size_t len;
        if (getcwd(cwd, sizeof(cwd)) == NULL) {
            fprintf(stderr, "mpirun: -wdir %s: cannot find the current directory: %s\n", o->wdir,
                    strerror(errno));
            return -EBADMSG;
        }
        len = strlen(cwd) + strlen(o->wdir) + 2;
        if ((abs = malloc(len)) == NULL)
            return -ENOMEM;
        snprintf(abs, len, "%s/%s", cwd, o->wdir);
        free(o->wdir);
        o->wdir = abs;
    }
    if (o->nhosts == 0) {
        struct stat st;
        int err = 0;
        if (stat(o->wdir, &st) != 0)
            err = errno;
        else if (!S_ISDIR(st.st_mode))
            err = ENOTDIR;
        else if (access(o->wdir, X_OK) != 0)
            err = errno;
        if (err != 0) {
            fprintf(stderr, "mpirun: -wdir %s: cannot start the ranks there: %s\n", o->wdir,
                    strerror(err));
            return -EBADMSG;
        }
    }
    for (int a = 0; a < o->napps; a++)
        o->apps[a].wdir = o->wdir;
    return 0;
}

/* -hosts LIST or -hostfile FILE (file) in the options of program index prog: before
 * the first program the global list (o->hosts), after a ':' that program's own list
 * (app->hosts; mpirun_hosts_programs adds its hosts to o->hosts after the command line).
 * Open MPI's app contexts take -host and -hostfile per program in the same way (Hydra
 * takes one global list only); -ppn stays global in both, and here. */
static int mpirun_host_option(struct mpirun_opts *o, struct mpirun_app *app, int prog,
                              const char *opt, const char *arg, int file)
{
    struct mpirun_opts own = {.hosts = app->hosts, .nhosts = app->nhosts};
    char ctx[64];
    int rc;

    if (prog == 0)
        return file ? mpirun_hosts_read_file(o, arg) : mpirun_hosts_add_list(o, arg);
    snprintf(ctx, sizeof(ctx), "%s of program %d: ", opt, prog + 1);
    own.host_ctx = ctx;
    rc = file ? mpirun_hosts_read_file(&own, arg) : mpirun_hosts_add_list(&own, arg);
    app->hosts = own.hosts;
    app->nhosts = own.nhosts;
    app->slots_given |= own.slots_given;
    if (app->host_opt == NULL) {
        app->host_opt = opt;
        app->host_arg = arg;
    }
    return rc;
}

/* Parses argv[1..]. Returns 0, 1 when done already (help/version), or < 0. */
static int mpirun_parse(int argc, char **argv, struct mpirun_opts *o)
{
    const char *tmo = getenv("MPIEXEC_TIMEOUT");
    const char *gateways = NULL, *routes = NULL, *tail_gateways = NULL, *tail_routes = NULL;
    int i = 1, rc;
    long v;

    if (tmo != NULL && *tmo != '\0') {
        if (mpirun_parse_int(tmo, 0, 1000000000L, &v) != 0)
            return mpirun_bad("bad MPIEXEC_TIMEOUT '%s'", tmo);
        o->timeout = (int)v;
    }
    /* the environment first: the options win */
    if ((rc = mpirun_env_read(o)) != 0)
        return rc;
    const char *iso = getenv("DCFA_ISOLATE");
    if (iso != NULL) {
        char why[200];
        if (ad_isolate_parse(iso, why, sizeof(why)) < 0)
            return mpirun_bad("DCFA_ISOLATE: %s", why);
    }
    /* --gateways G and --gateway-routes F are mpirun's also as the last words of the line,
     * after the last program's arguments (issue 34's "... : -hosts b1,b2 -n 8 ./booster_part
     * --gateways g1"): the last program never gets them as its last arguments */
    while (argc >= 4) {
        const char *o2 = argv[argc - 2];
        if (strcmp(o2, "--gateways") == 0 || strcmp(o2, "-gateways") == 0)
            tail_gateways = argv[argc - 1];
        else if (strcmp(o2, "--gateway-routes") == 0 || strcmp(o2, "-gateway-routes") == 0)
            tail_routes = argv[argc - 1];
        else
            break;
        if (argv[argc - 1][0] == '\0')
            return mpirun_bad(
                strstr(o2, "routes") != NULL ? "%s needs a file" : "%s needs a list of hosts", o2);
        argc -= 2;
    }
    while (i < argc) {
        struct mpirun_app *app, *apps = realloc(o->apps, (size_t)(o->napps + 1) * sizeof(*apps));
        if (apps == NULL)
            return -ENOMEM;
        o->apps = apps;
        app = &o->apps[o->napps++];
        *app = (struct mpirun_app){.nprocs = 1};

        /* options of this context */
        for (; i < argc && argv[i][0] == '-'; i++) {
            const char *a = argv[i], *val;
            if (strcmp(a, "--") == 0) {
                i++;
                break;
            } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 ||
                       strcmp(a, "-help") == 0) {
                mpirun_usage(stdout);
                return 1;
            } else if (strcmp(a, "--version") == 0 || strcmp(a, "-version") == 0 ||
                       strcmp(a, "-V") == 0) {
                printf("mpirun (DCFA-MPI) %s\n", DCFA_VERSION);
                return 1;
            } else if (strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0 || strcmp(a, "--n") == 0 ||
                       strcmp(a, "--np") == 0 || strcmp(a, "-c") == 0) {
                if (mpirun_parse_int(i + 1 < argc ? argv[i + 1] : NULL, 1, MPIRUN_MAX_PROCS, &v) !=
                    0)
                    return mpirun_bad("%s needs a number of ranks between 1 and 4096", a);
                app->nprocs = (int)v;
                app->nprocs_given = 1;
                i++;
            } else if ((val = mpirun_inline_value(a, "--timeout")) != NULL ||
                       strcmp(a, "--timeout") == 0 || strcmp(a, "-timeout") == 0) {
                if (val == NULL)
                    val = i + 1 < argc ? argv[++i] : NULL;
                if (mpirun_parse_int(val, 0, 1000000000L, &v) != 0)
                    return mpirun_bad("%s needs a number of seconds", "--timeout");
                o->timeout = (int)v;
            } else if (strcmp(a, "-env") == 0 || strcmp(a, "-genv") == 0 ||
                       strcmp(a, "--env") == 0 || strcmp(a, "--genv") == 0) {
                int global = strstr(a, "genv") != NULL;
                if (i + 2 >= argc || !mpirun_name_ok(argv[i + 1]))
                    return mpirun_bad("%s needs NAME VALUE", a);
                if (global ? mpirun_env_add(&o->genv, &o->ngenv, argv[i + 1], argv[i + 2])
                           : mpirun_env_add(&app->env, &app->nenv, argv[i + 1], argv[i + 2]))
                    return -ENOMEM;
                i += 2;
            } else if (strcmp(a, "-x") == 0) {
                char *eq;
                if (i + 1 >= argc || argv[i + 1][0] == '\0' || argv[i + 1][0] == '=')
                    return mpirun_bad("%s needs NAME or NAME=VALUE", a);
                eq = strchr(argv[++i], '=');
                if (eq != NULL) {
                    *eq = '\0';
                    int rc = mpirun_env_add(&o->genv, &o->ngenv, argv[i], eq + 1);
                    *eq = '=';
                    if (rc != 0)
                        return rc;
                } else if (getenv(argv[i]) != NULL) {
                    if (mpirun_env_add(&o->genv, &o->ngenv, argv[i], getenv(argv[i])) != 0)
                        return -ENOMEM;
                }
            } else if (strcmp(a, "-hosts") == 0 || strcmp(a, "-host") == 0 ||
                       strcmp(a, "--host") == 0 || strcmp(a, "--hosts") == 0 ||
                       strcmp(a, "-H") == 0 || strcmp(a, "-hostfile") == 0 ||
                       strcmp(a, "--hostfile") == 0 || strcmp(a, "-f") == 0 ||
                       strcmp(a, "-machinefile") == 0 || strcmp(a, "--machinefile") == 0) {
                int file = strstr(a, "file") != NULL || strcmp(a, "-f") == 0;
                if (i + 1 >= argc)
                    return mpirun_bad(file ? "%s needs a file name" : "%s needs a list of hosts",
                                      a);
                int rc = mpirun_host_option(o, app, o->napps - 1, a, argv[++i], file);
                if (rc != 0)
                    return rc == -EINVAL ? -EBADMSG : rc;
            } else if (strcmp(a, "-ppn") == 0 || strcmp(a, "--ppn") == 0 ||
                       strcmp(a, "-perhost") == 0 || strcmp(a, "-npernode") == 0 ||
                       strcmp(a, "--npernode") == 0) {
                if (mpirun_parse_int(i + 1 < argc ? argv[i + 1] : NULL, 1, MPIRUN_MAX_PROCS, &v) !=
                    0)
                    return mpirun_bad("%s needs a number of ranks per host between 1 and 4096", a);
                o->ppn = (int)v;
                i++;
            } else if (strcmp(a, "--gateways") == 0 || strcmp(a, "-gateways") == 0) {
                if (i + 1 >= argc || argv[i + 1][0] == '\0')
                    return mpirun_bad("%s needs a list of hosts", a);
                gateways = argv[++i];
            } else if (strcmp(a, "--gateway-routes") == 0 || strcmp(a, "-gateway-routes") == 0) {
                if (i + 1 >= argc || argv[i + 1][0] == '\0')
                    return mpirun_bad("%s needs a file", a);
                routes = argv[++i];
            } else if (strcmp(a, "-l") == 0 || strcmp(a, "--prefix-output") == 0 ||
                       strcmp(a, "-prefix-output") == 0 || strcmp(a, "--tag-output") == 0) {
                o->prefix_output = 1;
            } else if ((val = mpirun_inline_value(a, "--universe-size")) != NULL ||
                       strcmp(a, "--universe-size") == 0 || strcmp(a, "-usize") == 0 ||
                       strcmp(a, "--usize") == 0) {
                if (val == NULL)
                    val = i + 1 < argc ? argv[++i] : NULL;
                if (mpirun_parse_int(val, 1, MPIRUN_MAX_USIZE, &v) != 0)
                    return mpirun_bad("%s needs a number between 1 and 1000000", a);
                o->universe = (int)v;
            } else if (strcmp(a, "--oversubscribe") == 0 || strcmp(a, "-oversubscribe") == 0) {
                o->no_oversubscribe = 0;
                o->bind.oversubscribe = 1;
            } else if ((rc = mpirun_place_option(o, argc, argv, &i)) <= 0) {
                if (rc < 0)
                    return rc;
            } else if (strcmp(a, "--no-oversubscribe") == 0 ||
                       strcmp(a, "-no-oversubscribe") == 0 || strcmp(a, "--nooversubscribe") == 0) {
                o->no_oversubscribe = 1;
            } else if (strcmp(a, "--isolate") == 0 || strcmp(a, "-isolate") == 0) {
                char why[200];
                if (i + 1 >= argc)
                    return mpirun_bad("%s", "--isolate needs a mode (net, shm, seccomp)");
                if (ad_isolate_parse(argv[i + 1], why, sizeof(why)) < 0)
                    return mpirun_bad("%s", why);
                /* the daemons (here and on other hosts) and the ranks read it */
                setenv("DCFA_ISOLATE", argv[++i], 1);
            } else if (strcmp(a, "--relay") == 0 || strcmp(a, "-relay") == 0) {
                setenv("DCFA_RELAY", "1", 1); /* the daemons read it */
            } else if (strcmp(a, "--allow-run-as-root") == 0 ||
                       strcmp(a, "-allow-run-as-root") == 0) {
                /* compatibility: nothing to do */
            } else {
                return mpirun_bad("unknown option '%s'", a);
            }
        }
        if (i >= argc || strcmp(argv[i], ":") == 0)
            return mpirun_bad("%s", "no program given");
        /* program and its arguments, up to ':' */
        int start = i;
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        app->argv = calloc((size_t)(i - start + 1), sizeof(char *));
        if (app->argv == NULL)
            return -ENOMEM;
        memcpy(app->argv, &argv[start], (size_t)(i - start) * sizeof(char *));
        if (i < argc) /* skip ':' */
            i++;
    }
    if (o->napps == 0)
        return mpirun_bad("%s", "no program given");
    if (o->bind.ppr > 0 && o->bind.map == MPIRUN_RES_NODE && o->ppn == 0)
        o->ppn = o->bind.ppr; /* ppr:N:node: N per host */
    /* the last words of the line: given last */
    if (tail_gateways != NULL)
        gateways = tail_gateways;
    if (tail_routes != NULL)
        routes = tail_routes;
    /* the programs' own host lists: their hosts after the global list's */
    if ((rc = mpirun_hosts_programs(o)) != 0)
        return rc == -EINVAL ? -EBADMSG : rc;
    /* gateway hosts after the ranks' hosts: daemons start there, ranks do not (placement,
     * slots and the universe count only the hosts before them) */
    if (gateways != NULL) {
        int rc = mpirun_gateways_add(o, gateways);
        if (rc != 0)
            return rc == -EINVAL ? -EBADMSG : rc;
        if (setenv("DCFA_GATEWAY_HOSTS", gateways, 1) != 0)
            return -ENOMEM;
        /* the job's gateway key: to the daemons with SETUP, to the ranks in their
         * environment; a HELLO to a gateway daemon proves it (gw_wire.h) */
        uint64_t key[2];
        char hex[33];
        if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
            return mpirun_bad("%s", "--gateways: no random bytes for the job's gateway key");
        snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)key[0],
                 (unsigned long long)key[1]);
        if (setenv("DCFA_GATEWAY_KEY", hex, 1) != 0)
            return -ENOMEM;
    }
    if (routes != NULL) {
        int rc = mpirun_gateway_routes(o, routes);
        if (rc != 0)
            return rc == -EINVAL ? -EBADMSG : rc;
    }
    /* With hosts and no -n: as many ranks as the hosts offer. */
    if (o->nhosts > 0 && o->napps == 1 && !o->apps[0].nprocs_given) {
        int n = mpirun_hosts_default_size(o);
        if (n > MPIRUN_MAX_PROCS)
            return mpirun_bad("%s", "the hosts offer more than 4096 ranks: give -n");
        o->apps[0].nprocs = n;
    } else if (o->nhosts == 0 && o->napps == 1 && !o->apps[0].nprocs_given && o->bind.ppr > 0) {
        /* one host, ppr and no -n: N on each of its resources */
        int n = mpirun_bind_ppr_size(&o->bind);
        if (n > MPIRUN_MAX_PROCS)
            return mpirun_bad("%s", "ppr places more than 4096 ranks here: give -n");
        o->apps[0].nprocs = n;
    }
    mpirun_default_universe(o); /* the hosts' slots, else the job or the CPUs */
    return mpirun_place_finish(o);
}

int main(int argc, char **argv)
{
    struct mpirun_opts opts = {0};
    int rc;

    /* Make sure 0, 1 and 2 are open so no pipe or socket lands on them. */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
            open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

    if (argc == 2 && strcmp(argv[1], AD_DAEMON_OPTION) == 0)
        return ad_remote_main();
    if (argc == 3 && strcmp(argv[1], AD_CLEANUP_OPTION) == 0)
        return ad_cleanup_main(argv[2]);
    if (argc >= 2 && strcmp(argv[1], AD_SINGLETON_OPTION) == 0)
        return ad_singleton_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "--nameserver") == 0)
        return ad_nameserver_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "--gateway-daemon") == 0)
        return ad_gateway_main(argc, argv);
    rc = mpirun_parse(argc, argv, &opts);
    if (rc == 1) {
        rc = 0;
        goto out;
    }
    if (rc == -EBADMSG) { /* the message is printed already */
        rc = MPIRUN_USAGE_ERROR;
        goto out;
    }
    if (rc < 0) {
        if (rc == -ENOMEM)
            fprintf(stderr, "mpirun: out of memory\n");
        rc = MPIRUN_USAGE_ERROR;
        goto out;
    }
    fflush(stdout);
    rc = ad_run(&opts);
    mpirun_bind_plan_free();
out:
    mpirun_opts_free(&opts);
    return rc;
}
