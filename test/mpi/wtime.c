/* MPI_Wtime is monotonic and advances; MPI_Wtick is a sane resolution. */
#include "mtest.h"

int main(int argc, char **argv)
{
    double tick, t0, t1, prev, now;
    int i;

    mtest_init(&argc, &argv);
    tick = MPI_Wtick();
    mtest_check(tick > 0.0 && tick <= 0.01, "Wtick %g not in (0, 0.01]", tick);

    prev = MPI_Wtime();
    for (i = 0; i < 100000; i++) {
        now = MPI_Wtime();
        if (now < prev) {
            mtest_fail("Wtime went backwards: %.9f then %.9f", prev, now);
            break;
        }
        prev = now;
    }

    t0 = MPI_Wtime();
    mtest_sleep_ms(50);
    t1 = MPI_Wtime();
    mtest_check(t1 - t0 >= 0.045 && t1 - t0 < 5.0, "50 ms sleep measured as %.6f s", t1 - t0);
    return mtest_finalize();
}
