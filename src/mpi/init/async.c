/* The entry lock and the assist thread (SYSTEM.md section 5).
 *
 * When more than one thread may be inside the library (MPI_THREAD_MULTIPLE
 * granted, or DCFA_ASYNC_PROGRESS=1 starting the assist thread), every MPI_X
 * entry point (the generated wrappers in src/binding/stubs.c) holds one lock
 * for the duration of the call. A thread that waits inside the library gives
 * the lock up each time its backoff looks at the clock, yields or naps
 * (util_wait_unlock/util_wait_lock), so a thread blocked in MPI_Recv never
 * keeps another from sending the message it waits for. Nested entries (a user
 * callback calling MPI) count depth per thread.
 *
 * The assist thread progresses communication while the application computes:
 * it sleeps on a condition variable while no collective schedule runs
 * (coll_sched_start kicks it), steps aside whenever the application holds the
 * lock (trylock: the application is inside the library and progresses
 * itself), and otherwise polls with growing naps (10 us .. 500 us) so that on
 * an oversubscribed node it takes little from the computation. */
#include "mpi/mpii.h"
#include "mpi/coll/sched.h"
#include "core/core.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

int mpii_entry_lock_on;
static pthread_mutex_t mpii_entry_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int mpii_entry_depth;
/* threads blocked on the mutex, and a count of acquisitions: a waiting thread
 * that gives the lock up hands it over (see mpii_wait_unlock) */
static int mpii_entry_waiters;
static unsigned mpii_entry_gen;

static void mpii_entry_acquire(void)
{
    if (pthread_mutex_trylock(&mpii_entry_mutex) != 0) {
        __atomic_add_fetch(&mpii_entry_waiters, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_lock(&mpii_entry_mutex);
        __atomic_sub_fetch(&mpii_entry_waiters, 1, __ATOMIC_SEQ_CST);
    }
    __atomic_add_fetch(&mpii_entry_gen, 1, __ATOMIC_RELAXED);
}

void mpii_entry_enter(void)
{
    if (mpii_entry_depth++ == 0)
        mpii_entry_acquire();
}

void mpii_entry_leave(void)
{
    if (--mpii_entry_depth == 0)
        pthread_mutex_unlock(&mpii_entry_mutex);
}

/* Start and stop of the runtime (MPI_Init, MPI_Finalize, sessions) hold the
 * entry mutex even while the lock is off: sessions may be started and ended
 * by several threads at once, before any of them turned the lock on. 1 if
 * taken here (then mpii_entry_leave). */
int mpii_entry_force(void)
{
    if (mpii_entry_depth > 0)
        return 0;
    mpii_entry_enter();
    return 1;
}

/* A thread waiting inside the library gives the lock up. A mutex is not
 * fair: unlocked and locked again at once, it would stay with the waiter
 * while the threads blocked on it (one of which may be about to send what
 * the waiter waits for) are woken only to find it taken. So when some are
 * blocked, the waiter yields until one of them has taken it (bounded). */
static void mpii_wait_unlock(void)
{
    if (mpii_entry_depth == 0)
        return;
    unsigned gen = __atomic_load_n(&mpii_entry_gen, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mpii_entry_mutex);
    for (int i = 0; i < 64 && __atomic_load_n(&mpii_entry_waiters, __ATOMIC_SEQ_CST) > 0 &&
                    __atomic_load_n(&mpii_entry_gen, __ATOMIC_RELAXED) == gen;
         i++)
        sched_yield();
}

static void mpii_wait_lock(void)
{
    if (mpii_entry_depth > 0)
        mpii_entry_acquire();
}

/* ---- the assist thread -------------------------------------------------------------- */

static struct {
    pthread_t thread;
    int started;
    int stop;
    int work;                   /* schedules started since the thread last looked */
    int holds;                  /* users that need progress all the time (RMA windows in message mode) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} mpii_assist = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

void mpii_async_kick(void)
{
    if (!mpii_assist.started)
        return;
    pthread_mutex_lock(&mpii_assist.mu);
    mpii_assist.work = 1;
    pthread_cond_signal(&mpii_assist.cv);
    pthread_mutex_unlock(&mpii_assist.mu);
}

static void mpii_nap(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void *mpii_assist_main(void *arg)
{
    long nap = 10;
    for (;;) {
        pthread_mutex_lock(&mpii_assist.mu);
        while (!mpii_assist.stop && !mpii_assist.work)
            pthread_cond_wait(&mpii_assist.cv, &mpii_assist.mu);
        int stop = mpii_assist.stop;
        pthread_mutex_unlock(&mpii_assist.mu);
        if (stop)
            return NULL;
        if (pthread_mutex_trylock(&mpii_entry_mutex) != 0) {
            mpii_nap(nap); /* the application is in the library: it progresses itself */
            continue;
        }
        int events = core_progress();
        int running = coll_sched_running() || mpii_assist.holds > 0;
        pthread_mutex_unlock(&mpii_entry_mutex);
        if (!running) {
            pthread_mutex_lock(&mpii_assist.mu);
            mpii_assist.work = 0;   /* sleep until the next start */
            pthread_mutex_unlock(&mpii_assist.mu);
            nap = 10;
            continue;
        }
        nap = events ? 10 : (nap * 2 > 500 ? 500 : nap * 2);
        mpii_nap(nap);
    }
}

/* Turning the lock on while the library runs: the caller holds the entry
 * mutex (mpii_entry_force); every call from now on takes it too. */
void mpii_async_multiple(void)
{
    if (mpii_entry_lock_on)
        return;
    util_wait_unlock = mpii_wait_unlock;
    util_wait_lock = mpii_wait_lock;
    __atomic_store_n(&mpii_entry_lock_on, 1, __ATOMIC_SEQ_CST);
}

/* called at the end of MPI_Init / the first session, before any other thread
 * may call in: turn the entry lock on if needed and start the assist thread */
void mpii_async_start(int thread_level)
{
    if (thread_level == MPI_THREAD_MULTIPLE || util_cfg.async_progress)
        mpii_async_multiple();
    if (!util_cfg.async_progress)
        return;
    mpii_assist.stop = 0;
    mpii_assist.work = 0;
    if (pthread_create(&mpii_assist.thread, NULL, mpii_assist_main, NULL) != 0) {
        util_log("DCFA_ASYNC_PROGRESS: cannot start the assist thread (%m); progress only "
                 "inside MPI calls");
        return;
    }
    mpii_assist.started = 1;
}

/* at finalize, with the entry lock held by the caller */
void mpii_async_stop(void)
{
    if (mpii_assist.started) {
        pthread_mutex_lock(&mpii_assist.mu);
        mpii_assist.stop = 1;
        pthread_cond_signal(&mpii_assist.cv);
        pthread_mutex_unlock(&mpii_assist.mu);
        pthread_join(mpii_assist.thread, NULL);
        mpii_assist.started = 0;
    }
}

/* Something needs the library to progress while the application computes,
 * until released (an RMA window whose origins send it messages): the assist
 * thread is started if it is not running and keeps polling while any hold
 * is taken. Called inside an MPI call, as its last step when it starts the
 * thread: from then on every MPI_X entry takes the entry lock. */
void mpii_async_hold(int delta)
{
    pthread_mutex_lock(&mpii_assist.mu);
    mpii_assist.holds += delta;
    if (delta > 0) {
        mpii_assist.work = 1;
        pthread_cond_signal(&mpii_assist.cv);
    }
    pthread_mutex_unlock(&mpii_assist.mu);
    if (delta <= 0 || mpii_assist.started)
        return;
    util_wait_unlock = mpii_wait_unlock;
    util_wait_lock = mpii_wait_lock;
    mpii_entry_lock_on = 1;
    mpii_assist.stop = 0;
    if (pthread_create(&mpii_assist.thread, NULL, mpii_assist_main, NULL) != 0) {
        util_log("RMA: cannot start the assist thread (%m); passive-target operations in "
                 "message mode progress only inside MPI calls of the target");
        return;
    }
    mpii_assist.started = 1;
}
