/* MPI_Init_thread / MPI_Query_thread / MPI_Is_thread_main.
 * The requested level comes from argv[1] (single|funneled|serialized|multiple),
 * default MPI_THREAD_FUNNELED. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int required = MPI_THREAD_FUNNELED, provided = -1, queried = -1, is_main = -1;

    if (argc > 1 && strcmp(argv[1], "single") == 0)
        required = MPI_THREAD_SINGLE;
    else if (argc > 1 && strcmp(argv[1], "serialized") == 0)
        required = MPI_THREAD_SERIALIZED;
    else if (argc > 1 && strcmp(argv[1], "multiple") == 0)
        required = MPI_THREAD_MULTIPLE;

    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_wrank);

    mtest_check(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
                    MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                    MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
                "thread level constants are not ordered");
    mtest_check(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
                "provided level %d out of range", provided);
    MPI_Query_thread(&queried);
    mtest_check_int("Query_thread", queried, provided);
    MPI_Is_thread_main(&is_main);
    mtest_check_int("Is_thread_main", is_main, 1);
    return mtest_finalize();
}
