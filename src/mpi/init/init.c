/* Start-up and shut-down of the library, and the process-wide queries. */
#include "mpi/mpii.h"
#include "mpi/attr/attr.h"
#include "core/core.h"
#include "mpi/coll/sched.h"
#include "assist/assist.h"
#include "mpi/osc/osc.h"

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
    coll_sched_dump_pending();
    osc_dump_pending();
}

/* The runtime (daemon channel, fabric, predefined objects) is shared by the
 * world model (MPI_Init) and every session; it starts with the first of them
 * and ends with the last. */
static int mpii_runtime_users;
static int mpii_runtime_done;

static int mpii_thread_grant(int required)
{
    /* MULTIPLE: every entry point then holds the entry lock (async.c) */
    int level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    return level < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : level;
}

int mpii_runtime_start(int required)
{
    if (mpii_runtime_users++ > 0)
        return MPI_SUCCESS;
    if (mpii_runtime_done) {
        mpii_runtime_users--;
        return MPI_ERR_OTHER;   /* the daemon channel cannot be reopened */
    }
    util_tunables_load();
    /* idle waits nap in 20 us steps: keep the kernel from stretching them to 50 us */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    int rank = 0, size = 1, appnum = 0;
    int rc = assist_init(&rank, &size, &appnum);
    if (rc < 0)
        util_die("MPI_Init: cannot reach the assist daemon (%s)", strerror(-rc));
    util_log_rank = rank;
    const char *local = getenv("MPI_LOCALNRANKS");
    util_backoff_configure(local ? atoi(local) : size);
    mpii_st.world_rank = rank;
    mpii_st.world_size = size;
    mpii_st.appnum = appnum;
    int usize = assist_universe_size();
    mpii_st.universe_size = usize > 0 ? usize : size;
    gethostname(mpii_st.hostname, sizeof mpii_st.hostname - 1);
    mpii_st.thread_level = mpii_thread_grant(required);
    rc = core_init(rank, size, assist_job_id());
    if (rc != UTIL_OK)
        util_die("MPI_Init: cannot set up the shared-memory fabric");
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
    return MPI_SUCCESS;
}

/* the last user leaves: synchronise with the other processes, then tear down */
void mpii_runtime_stop(void)
{
    if (--mpii_runtime_users > 0)
        return;
    mpii_async_stop();
    mpii_barrier(mpii_comm_get(MPI_COMM_WORLD));
    osc_finalize();
    mpii_pt2pt_finalize();
    if (util_cfg.stats)
        core_stats_report(mpii_st.world_rank);
    core_finalize();
    mpii_comm_finalize();
    mpii_dtype_finalize();
    mpii_attr_finalize();
    assist_finalize();
    signal(SIGUSR1, SIG_DFL);
    mpii_runtime_done = 1;
}

static int mpii_init(int required, int *provided)
{
    if (mpii_st.initialized)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI_Init", "MPI is already initialized");
    if (mpii_st.finalized)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI_Init",
                        "MPI cannot be initialized again after MPI_Finalize");
    if (mpii_runtime_start(required) != MPI_SUCCESS)
        util_die("MPI_Init: the library was already shut down by the last MPI_Session_finalize");
    mpii_st.thread_level = mpii_thread_grant(required);
    if (provided)
        *provided = mpii_st.thread_level;
    mpii_st.initialized = 1;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return mpii_init(MPI_THREAD_SINGLE, NULL);
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Init_thread",
                        "required=%d is not a thread level", required);
    return mpii_init(required, provided);
}

int PMPI_Initialized(int *flag)
{
    *flag = mpii_st.initialized;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    *flag = mpii_st.finalized;
    return MPI_SUCCESS;
}

int PMPI_Query_thread(int *provided)
{
    *provided = mpii_st.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    *flag = 1;
    return MPI_SUCCESS;
}

int PMPI_Finalize(void)
{
    if (!mpii_st.initialized || mpii_st.finalized)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI_Finalize",
                        "MPI is not initialized or already finalized");
    mpii_comm *self = mpii_comm_get(MPI_COMM_SELF);
    if (self)
        mpii_attr_delete_all(MPII_OBJ_COMM, MPI_COMM_SELF, &self->attrs);
    mpii_runtime_stop();
    mpii_st.finalized = 1;
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort(errorcode=%d) called by rank %d", errorcode, mpii_st.world_rank);
    fflush(stdout);
    fflush(stderr);
    assist_abort(errorcode, msg);
    _exit(errorcode ? errorcode : 1);
}

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    strcpy(name, host);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "DCFA-MPI %s (MPI %d.%d; direct data path: shm rings, CMA rendezvous)",
                     DCFA_VERSION, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}
