/* Sessions from threads (MPICH threads/init/mult_session): the world model
 * is initialised with MPI_THREAD_MULTIPLE, then several threads each start
 * a session without an info object, check that it grants
 * MPI_THREAD_MULTIPLE (a session asks for it by default), build a
 * communicator from "mpi://WORLD" or "mpi://SELF" with a string tag of their
 * own, and use it at the same time as the main thread uses MPI_COMM_WORLD.
 * Then the same with a session that asks for MPI_THREAD_SINGLE explicitly.
 * MPI_Is_thread_main is true only in the thread that called MPI_Init_thread. */
#include "mtest.h"

#include <pthread.h>

#define NTHREADS 4
#define ITERS    20

static int thread_errs[NTHREADS];

static void *lib_thread(void *arg)
{
    int id = (int)(long)arg, *errs = &thread_errs[id];
    int main_flag = 1;
    MPI_Is_thread_main(&main_flag);
    if (main_flag) {
        fprintf(stderr, "thread %d: MPI_Is_thread_main says it is the main thread\n", id);
        (*errs)++;
    }
    for (int it = 0; it < ITERS; it++) {
        MPI_Session s = MPI_SESSION_NULL;
        if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS) {
            fprintf(stderr, "thread %d: MPI_Session_init failed\n", id);
            (*errs)++;
            return NULL;
        }
        MPI_Info info;
        char val[64] = "";
        int flag = 0;
        MPI_Session_get_info(s, &info);
        MPI_Info_get(info, "thread_level", (int)sizeof val - 1, val, &flag);
        MPI_Info_free(&info);
        if (!flag || strcmp(val, "MPI_THREAD_MULTIPLE") != 0) {
            fprintf(stderr, "thread %d: session thread_level '%s', want MPI_THREAD_MULTIPLE\n", id,
                    flag ? val : "(none)");
            (*errs)++;
        }
        MPI_Group g;
        MPI_Group_from_session_pset(s, id % 2 ? "mpi://WORLD" : "mpi://SELF", &g);
        char tag[32];
        snprintf(tag, sizeof tag, "thread %d", id);
        MPI_Comm c;
        MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        MPI_Group_free(&g);
        int size, me, sum = 0;
        MPI_Comm_size(c, &size);
        MPI_Comm_rank(c, &me);
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
        if (sum != size * (size - 1) / 2) {
            fprintf(stderr, "thread %d: allreduce gave %d, want %d\n", id, sum, size * (size - 1) / 2);
            (*errs)++;
        }
        MPI_Comm_free(&c);
        MPI_Session_finalize(&s);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_wrank);
    mtest_check(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int flag = 0;
    MPI_Is_thread_main(&flag);
    mtest_check(flag, "MPI_Is_thread_main false in the main thread");

    pthread_t th[NTHREADS];
    for (int i = 1; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, lib_thread, (void *)(long)i);
    for (int it = 0; it < ITERS; it++) {
        int size, one = 1, sum = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        mtest_check(sum == size, "world allreduce %d", sum);
    }
    for (int i = 1; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 1; i < NTHREADS; i++)
        mtest_errs += thread_errs[i];

    /* an explicit level is granted as asked */
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "thread_level", "MPI_THREAD_SINGLE");
    MPI_Session s;
    MPI_Session_init(in, MPI_ERRORS_RETURN, &s);
    MPI_Info_free(&in);
    MPI_Info out;
    char val[64] = "";
    MPI_Session_get_info(s, &out);
    MPI_Info_get(out, "thread_level", (int)sizeof val - 1, val, &flag);
    MPI_Info_free(&out);
    mtest_check(flag && strcmp(val, "MPI_THREAD_SINGLE") == 0, "explicit level: '%s'", val);
    MPI_Session_finalize(&s);
    return mtest_finalize();
}
