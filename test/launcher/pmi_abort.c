/* Launcher test: rank 1 (or the last rank) calls assist_abort(7, ...) after
 * init; the others wait in a fence that never completes. */
#include "assist/assist.h"

#include <stdio.h>
#include <unistd.h>

int main(void)
{
    int rank, size, appnum;

    if (assist_init(&rank, &size, &appnum) != 0)
        return 1;
    if (rank == (size > 1 ? 1 : 0)) {
        assist_abort(7, "test abort: giving up");
        _exit(7);
    }
    assist_kvs_fence();
    sleep(30);
    return 0;
}
