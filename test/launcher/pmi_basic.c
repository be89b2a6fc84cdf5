/* Launcher test: PMI-1 client round trip (init, put, fence, get, finalize).
 * Links only src/assist. Each rank puts its own key, fences, reads every
 * other rank's key and checks it; rank 0 prints " No Errors". */
#include "assist/assist.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    char key[64], want[128], got[ASSIST_VALUE_MAX + 1];
    int rank, size, appnum, rc, errs = 0;

    rc = assist_init(&rank, &size, &appnum);
    if (rc != 0) {
        fprintf(stderr, "assist_init: %d\n", rc);
        return 1;
    }
    snprintf(key, sizeof(key), "addr-%d", rank);
    snprintf(want, sizeof(want), "rank%d=value:%s", rank, assist_job_id());
    rc = assist_kvs_put(key, want);
    if (rc != 0) {
        fprintf(stderr, "[%d] put: %d\n", rank, rc);
        errs++;
    }
    if (assist_kvs_put("bad key", "x") != -EINVAL)
        errs++;
    rc = assist_kvs_fence();
    if (rc != 0) {
        fprintf(stderr, "[%d] fence: %d\n", rank, rc);
        errs++;
    }
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "addr-%d", r);
        snprintf(want, sizeof(want), "rank%d=value:%s", r, assist_job_id());
        rc = assist_kvs_get(key, got, sizeof(got));
        if (rc != 0 || strcmp(got, want) != 0) {
            fprintf(stderr, "[%d] get %s: rc %d '%s' want '%s'\n", rank, key, rc,
                    rc == 0 ? got : "", want);
            errs++;
        }
    }
    if (assist_kvs_get("no-such-key", got, sizeof(got)) != -ENOENT) {
        fprintf(stderr, "[%d] missing key not reported\n", rank);
        errs++;
    }
    if (assist_kvs_get("addr-0", got, 3) != -ENOSPC) {
        fprintf(stderr, "[%d] short buffer not reported\n", rank);
        errs++;
    }
    if (assist_universe_size() < size) {
        fprintf(stderr, "[%d] universe size %d < %d\n", rank, assist_universe_size(), size);
        errs++;
    }
    rc = assist_kvs_fence();
    if (rc != 0)
        errs++;
    rc = assist_finalize();
    if (rc != 0) {
        fprintf(stderr, "[%d] finalize: %d\n", rank, rc);
        errs++;
    }
    if (errs == 0 && rank == 0)
        printf(" No Errors\n");
    return errs != 0;
}
