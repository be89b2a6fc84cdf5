/* Start-up and shut-down of the library, and the process-wide queries. */
#include "mpi/mpii.h"
#include "mpi/attr/attr.h"
#include "core/core.h"
#include "mpi/coll/module.h"
#include "mpi/coll/sched.h"
#include "assist/assist.h"
#include "mpi/io/io.h"
#include "mpi/osc/osc.h"
#include "mpi/comm/dpm.h"
#include "mpi/mem/mem.h"
#include "binding/impl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

mpii_state mpii_st;

void mpii_pt2pt_finalize(void);     /* pt2pt.c */
int mpii_pt2pt_init(void);

static void mpii_hang_report(int sig)
{
    (void)sig;
    core_dump_pending();
    mpii_dpm_dump();
    coll_sched_dump_pending();
    osc_dump_pending();
}

/* ---- the launcher's death ---------------------------------------------------------
 * The ranks of a job must not outlive their assist daemon / launcher: a rank
 * notices that the daemon's end of the command channel closed (mpirun or the
 * daemon died) and ends itself, removing the job's /dev/shm entries first
 * (the job is over, and nobody else is left to remove them). Two ways in:
 *  - a waiting rank checks the channel from the backoff's slow phase
 *    (util_wait_idle, every 100 ms while it naps; never on the message path);
 *  - a rank computing outside MPI gets its parent-death signal, SIGTERM (set
 *    by our daemon for every rank it starts): if SIGTERM was at its default
 *    when MPI started, the handler below looks at the channel; if the daemon
 *    is alive it is an ordinary SIGTERM and the default action runs. */
static char mpii_gone_msg[256];
static size_t mpii_gone_len;
static int mpii_term_installed;

static _Noreturn void mpii_launcher_gone(void)
{
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    /* stderr is most likely a pipe to the dead launcher: no SIGPIPE for the message */
    pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
    util_shm_unlink_job(assist_job_id());
    mpii_dpm_ports_unlink();
    ssize_t w = write(STDERR_FILENO, mpii_gone_msg, mpii_gone_len);
    (void)w;
    _exit(1);
}

static void mpii_on_sigterm(int sig)
{
    int saved = errno;
    if (assist_channel_lost())
        mpii_launcher_gone();
    /* an ordinary SIGTERM: end the way the default action does. Hydra and Slurm end a job
     * with it (every rank gets one) and remove nothing from /dev/shm: the job's entries of
     * this node go first (faults.term_hydra) */
    if (assist_cleanup_is_mine())
        util_shm_unlink_job(assist_job_id());
    mpii_dpm_ports_unlink(); /* the socket files of Unix-domain ports (--isolate) */
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

static void mpii_idle_check(void)
{
    if (assist_channel_lost())
        mpii_launcher_gone();
    core_idle_check();
}

static void mpii_watch_launcher(int rank)
{
    int n = snprintf(mpii_gone_msg, sizeof mpii_gone_msg,
                     "[dcfa-mpi] rank %d: the assist daemon closed the command channel (mpirun or "
                     "its daemon died): ending this process\n",
                     rank);
    mpii_gone_len = n > 0 && (size_t)n < sizeof mpii_gone_msg ? (size_t)n : 0;
    util_wait_idle = mpii_idle_check;
    if (assist_is_singleton())
        return;
    struct sigaction old, sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = mpii_on_sigterm;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
        !(old.sa_flags & SA_SIGINFO) && sigaction(SIGTERM, &sa, NULL) == 0)
        mpii_term_installed = 1;
}

static void mpii_unwatch_launcher(void)
{
    util_wait_idle = NULL;
    struct sigaction cur;
    if (mpii_term_installed && sigaction(SIGTERM, NULL, &cur) == 0 &&
        cur.sa_handler == mpii_on_sigterm)
        signal(SIGTERM, SIG_DFL);
    mpii_term_installed = 0;
}

/* ---- the start-up exchange ---------------------------------------------------------
 * One round through the key/value store, the only one at start-up: each rank
 * puts its values, one fence, each reads what it needs. It carries the
 * settings every rank must share (tunables flagged UTIL_TF_AGREE: ring
 * geometry, collective algorithms), compared with rank 0's; more start-up data
 * (fabric addresses) joins the same put and fence. A rank whose settings
 * differ ends the job through the daemon with one message naming the
 * tunables, both ranks and both values, before any connection exists. */
static void mpii_startup_put(int rank, int size, char *mine, size_t len)
{
    char key[ASSIST_KEY_MAX + 1];
    int rc;
    if (size < 2)
        return;
    if (util_tunables_agree_format(DCFA_VERSION, mine, len) != UTIL_OK)
        util_die("MPI_Init: the settings to agree on do not fit one key/value entry");
    snprintf(key, sizeof key, "dcfa-cfg-%d", rank);
    if ((rc = assist_kvs_put(key, mine)) < 0)
        util_die("MPI_Init: start-up exchange with the assist daemon failed (%s)", strerror(-rc));
}

/* after the start-up fence (core_init's, which publishes the fabric addresses too) */
static void mpii_startup_check(int rank, int size, const char *mine)
{
    char root[ASSIST_VALUE_MAX + 1], msg[1024];
    int rc;
    if (size < 2 || rank == 0)
        return;
    if ((rc = assist_kvs_get("dcfa-cfg-0", root, sizeof root)) < 0)
        util_die("MPI_Init: cannot read rank 0's settings from the key/value store (%s)",
                 strerror(-rc));
    if (util_tunables_agree_compare(mine, rank, root, 0, msg, sizeof msg) == 0)
        return;
    char text[1200];
    snprintf(text, sizeof text,
             "MPI_Init: settings that must be the same on every rank differ: %s (set them alike "
             "for every rank, e.g. with mpirun -genv)",
             msg);
    fflush(stdout);
    assist_abort(1, text);
    _exit(1);
}

/* The runtime (daemon channel, fabric, predefined objects) is shared by the
 * world model (MPI_Init) and every session; it starts with the first of them
 * and ends with the last. Without the world model, the last MPI_Session_finalize
 * only pauses it (mpii_runtime_pause): a session may start again (MPI 4.1 11.3,
 * handles such as datatypes stay valid across), and what closes the fabrics and the
 * daemon channel runs when the process exits (mpii_runtime_exit). */
static int mpii_runtime_users;
static int mpii_runtime_done;
static int mpii_runtime_paused;

/* 1 while the runtime runs (MPI_Init'ed or a session open): the generated
 * MPI_X entry points (stubs.c) test it and refuse calls outside (mpii_not_live) */
int mpii_live;

int mpii_not_live(const char *fn)
{
    if (mpii_runtime_done || mpii_runtime_paused)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, fn,
                        "MPI is finalized (MPI_Finalize, or the last MPI_Session_finalize, was "
                        "called): only MPI_Initialized, MPI_Finalized, MPI_Get_version and a few "
                        "others may follow");
    return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, fn,
                    "MPI is not initialized: call MPI_Init, MPI_Init_thread or MPI_Session_init "
                    "first");
}
/* 1 while MPI_Init or a session holds the runtime, 2 once it was shut down (or paused by
 * the last session), else 0 */
int mpii_runtime_state(void)
{
    return mpii_runtime_users > 0 ? 1 : mpii_runtime_done || mpii_runtime_paused ? 2 : 0;
}

static int mpii_thread_grant(int required)
{
    /* MULTIPLE: every entry point then holds the entry lock (async.c) */
    int level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    return level < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : level;
}

static int mpii_runtime_resume(int required);

int mpii_runtime_start(int required)
{
    if (mpii_runtime_users++ > 0) {
        if (required == MPI_THREAD_MULTIPLE)
            mpii_async_multiple();
        return MPI_SUCCESS;
    }
    if (mpii_runtime_paused)
        return mpii_runtime_resume(required);
    if (mpii_runtime_done) {
        mpii_runtime_users--;
        return MPI_ERR_OTHER;   /* the daemon channel cannot be reopened */
    }
    util_tunables_load();
    /* idle waits nap in 20 us steps: keep the kernel from stretching them to 50 us */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    int rank = 0, size = 1, appnum = 0;
    int rc = assist_init(&rank, &size, &appnum);
    if (rc == -EPROTONOSUPPORT) /* another MPI's launcher: assist_init said so in one line */
        _exit(1);
    if (rc < 0)
        util_die("MPI_Init: cannot reach the assist daemon (%s)", strerror(-rc));
    util_log_rank = rank;
    /* a spawned process's lines say its job: its rank 0 is not its parents' rank 0 */
    const char *spawned = getenv("PMI_SPAWNED");
    if (spawned && strcmp(spawned, "1") == 0)
        snprintf(util_log_job, sizeof util_log_job, "%s", assist_job_id());
    mpii_watch_launcher(rank);
    mpii_st.world_rank = rank;
    mpii_st.world_size = size;
    mpii_node_init();
    /* our mpirun and Hydra set MPI_LOCALNRANKS; Slurm does not: the mapping. Our daemon
     * also counts the other jobs' processes it runs here (DCFA_NODE_NPROCS: a spawned
     * child shares the node with its parents) */
    const char *local = getenv("MPI_LOCALNRANKS"), *node = getenv("DCFA_NODE_NPROCS");
    int nlocal = local                         ? atoi(local)
                 : mpii_node_local_size() > 0 ? mpii_node_local_size()
                                              : size;
    if (node && atoi(node) > nlocal)
        nlocal = atoi(node);
    util_backoff_configure(nlocal);
    mpii_st.appnum = appnum;
    int usize = assist_universe_size();
    mpii_st.universe_size = usize > 0 ? usize : size;
    gethostname(mpii_st.hostname, sizeof mpii_st.hostname - 1);
    mpii_st.thread_level = mpii_thread_grant(required);
    /* one fence for the whole start-up exchange: the settings that must agree and the
     * fabric addresses are put first, core_init fences, then the settings are compared */
    char agree[ASSIST_VALUE_MAX + 1] = "";
    mpii_startup_put(rank, size, agree, sizeof agree);
    /* our mpirun across hosts: processes it spawns may run on another node, so a job all on
     * this node still opens the fabrics for other nodes (as when the count is unknown) */
    const char *uhosts = getenv("DCFA_UNIVERSE_HOSTS");
    int spans = uhosts && atoi(uhosts) > 1;
    core_params cp = {.self = rank,
                      .nprocs = size,
                      .local_nprocs = spans                        ? -1
                                      : local                      ? atoi(local)
                                      : mpii_node_local_size() > 0 ? mpii_node_local_size()
                                                                   : -1,
                      .node_nprocs = nlocal,
                      .job_id = assist_job_id(),
                      .kvs = {.put = assist_kvs_put,
                              .fence = assist_kvs_fence,
                              .get = assist_kvs_get,
                              .publish = assist_name_publish,
                              .lookup = assist_name_lookup,
                              .unpublish = assist_name_unpublish},
                      /* mpirun's name service carries the late address (core/late.c) */
                      .net_late = spans,
                      .lost_unseen = mpii_err_lost_unseen};
    rc = core_init(&cp);
    if (rc == UTIL_OK)
        mpii_startup_check(rank, size, agree);
    if (rc != UTIL_OK)
        util_die("MPI_Init: cannot open the fabrics (%s)", strerror(-rc));
    mpii_mem_use_fabric(1);
    mpii_errh_init();
    mpii_info_init();
    mpii_dtype_init();
    mpii_op_init();
    mpii_pt2pt_init();
    mpii_comm_init_world();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = mpii_hang_report;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    mpii_async_start(mpii_st.thread_level);
    mpii_live = 1;
    /* the world's modules, where the job spans networks joined by gateways (no message) */
    rc = coll_module_init(mpii_comm_get(MPI_COMM_WORLD));
    if (rc != MPI_SUCCESS)
        return rc;
    /* a spawned process connects to its parent: MPI_Comm_get_parent */
    return mpii_dpm_init();
}

/* what the objects of the sessions and of the world model hold: every communicator,
 * window, file, pending request and buffer; the fabrics, connections, datatypes,
 * operations, info and error handlers stay */
static void mpii_runtime_release(void)
{
    mpii_async_stop();
    osc_finalize();
    mpii_pt2pt_finalize();
    io_finalize(); /* files left open */
}

/* The last session ends and MPI_Init was never called: the objects go, the calls are
 * refused as after finalization, the rest waits for another start or for exit. */
static void mpii_runtime_exit(void);

static void mpii_runtime_pause(void)
{
    static int at_exit;
    mpii_runtime_release();
    mpii_comm_finalize();
    mpii_runtime_paused = 1;
    mpii_live = 0;
    if (!at_exit++)
        atexit(mpii_runtime_exit);
}

static int mpii_runtime_resume(int required)
{
    mpii_runtime_paused = 0;
    int level = mpii_thread_grant(required);
    if (level > mpii_st.thread_level)
        mpii_st.thread_level = level;
    mpii_pt2pt_init();
    mpii_comm_init_world();
    mpii_async_start(mpii_st.thread_level);
    mpii_live = 1;
    return MPI_SUCCESS;
}

static void mpii_runtime_close(void);

/* at exit after a pause: what MPI_Session_finalize left open */
static void mpii_runtime_exit(void)
{
    if (mpii_runtime_paused && mpii_runtime_users == 0)
        mpii_runtime_close();
}

/* the last user leaves: synchronise with the other processes, then tear down */
void mpii_runtime_stop(void)
{
    if (--mpii_runtime_users > 0)
        return;
    if (!mpii_st.initialized) {
        mpii_runtime_pause();
        return;
    }
    /* no barrier over the world: core_finalize exchanges a FIN with each connected peer
     * only (docs/protocol.md, "Finalize") */
    mpii_runtime_release();
    mpii_runtime_close();
}

/* the fabrics, the job-wide barrier, the daemon channel */
static void mpii_runtime_close(void)
{
    mpii_runtime_paused = 0;
    if (util_cfg.stats)
        core_stats_report(mpii_st.world_rank);
    core_finalize();
    mpii_mem_use_fabric(0);
    /* then the process manager's barrier (PMI), as MPICH and Open MPI end MPI_Finalize: no
     * process leaves before every process of the job has reached MPI_Finalize (a rank that
     * exits with an error status right after it would otherwise have the launcher end the
     * others while they still work), and it takes no MPI connection */
    (void)assist_kvs_fence();
    mpii_comm_finalize();
    mpii_dtype_finalize();
    mpii_attr_finalize();
    mpii_node_finalize();
    mpii_unwatch_launcher();
    assist_finalize();
    signal(SIGUSR1, SIG_DFL);
    mpii_runtime_done = 1;
    mpii_live = 0;
}

static int mpii_init(int required, int *provided)
{
    if (mpii_st.initialized)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI_Init", "MPI is already initialized");
    if (mpii_st.finalized)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI_Init",
                        "MPI cannot be initialized again after MPI_Finalize");
    int held = mpii_entry_force();
    int rc = mpii_runtime_start(required);
    if (held)
        mpii_entry_leave();
    if (rc != MPI_SUCCESS)
        util_die("MPI_Init: the library was already shut down by the last MPI_Session_finalize");
    mpii_st.thread_level = mpii_thread_grant(required);
    mpii_st.main_thread = pthread_self();
    if (provided)
        *provided = mpii_st.thread_level;
    mpii_st.initialized = 1;
    return MPI_SUCCESS;
}

int b_Init(int *argc, char ***argv) { return mpii_init(MPI_THREAD_SINGLE, NULL); }

int b_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Init_thread",
                        "required=%d is not a thread level", required);
    return mpii_init(required, provided);
}

int b_Initialized(int *flag)
{
    *flag = mpii_st.initialized;
    return MPI_SUCCESS;
}

int b_Finalized(int *flag)
{
    *flag = mpii_st.finalized;
    return MPI_SUCCESS;
}

int b_Query_thread(int *provided)
{
    *provided = mpii_st.thread_level;
    return MPI_SUCCESS;
}

int b_Is_thread_main(int *flag)
{
    *flag = !mpii_st.initialized || pthread_equal(pthread_self(), mpii_st.main_thread);
    return MPI_SUCCESS;
}

int b_Finalize(void)
{
    if (!mpii_st.initialized || mpii_st.finalized)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI_Finalize",
                        "MPI is not initialized or already finalized");
    mpii_comm *self = mpii_comm_get(MPI_COMM_SELF);
    if (self)
        mpii_attr_delete_all(MPII_OBJ_COMM, MPI_COMM_SELF, &self->attrs);
    int held = mpii_entry_force();
    mpii_runtime_stop();
    mpii_st.finalized = 1;
    if (held)
        mpii_entry_leave();
    return MPI_SUCCESS;
}

int b_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort(errorcode=%d) called by rank %d", errorcode, mpii_st.world_rank);
    fflush(stdout);
    fflush(stderr);
    mpii_dpm_ports_unlink();
    assist_abort(errorcode, msg);
    _exit(errorcode ? errorcode : 1);
}

int b_Get_processor_name(char *name, int *resultlen)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    strcpy(name, host);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int b_Get_library_version(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "DCFA-MPI %s (MPI %d.%d; direct data path: shm rings, CMA rendezvous)",
                     DCFA_VERSION, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}
