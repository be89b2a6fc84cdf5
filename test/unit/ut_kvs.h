/* A key/value exchange for unit tests that fork processes: a table in
 * shared memory made before the fork, with a fence for n processes. Stands
 * in for the assist daemon's (core_params.kvs). */
#ifndef DCFA_UT_KVS_H
#define DCFA_UT_KVS_H

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/util.h"

enum { UT_KVS_MAX = 16 };

typedef struct ut_kvs {
    _Atomic int nput;
    _Atomic int fenced;
    int nprocs;
    struct {
        _Atomic int set;
        char key[64];
        char value[1024];
    } e[UT_KVS_MAX];
} ut_kvs;

static ut_kvs *ut_kv;
static int ut_kv_generation;

/* before fork: a fresh table for nprocs processes */
static inline void ut_kvs_make(int nprocs)
{
    if (!ut_kv)
        ut_kv = mmap(NULL, sizeof *ut_kv, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(ut_kv, 0, sizeof *ut_kv);
    ut_kv->nprocs = nprocs;
    ut_kv_generation = 0;
}

static inline int ut_kvs_put(const char *key, const char *value)
{
    int i = atomic_fetch_add(&ut_kv->nput, 1);
    if (i >= UT_KVS_MAX || strlen(key) >= sizeof ut_kv->e[i].key ||
        strlen(value) >= sizeof ut_kv->e[i].value)
        return UTIL_ENOMEM;
    strcpy(ut_kv->e[i].key, key);
    strcpy(ut_kv->e[i].value, value);
    atomic_store(&ut_kv->e[i].set, 1);
    return UTIL_OK;
}

static inline int ut_kvs_fence(void)
{
    ut_kv_generation++;
    atomic_fetch_add(&ut_kv->fenced, 1);
    while (atomic_load(&ut_kv->fenced) < ut_kv_generation * ut_kv->nprocs)
        usleep(100);
    return UTIL_OK;
}

static inline int ut_kvs_get(const char *key, char *value, int maxlen)
{
    for (int i = 0; i < UT_KVS_MAX; i++) {
        if (atomic_load(&ut_kv->e[i].set) && !strcmp(ut_kv->e[i].key, key)) {
            if ((int)strlen(ut_kv->e[i].value) >= maxlen)
                return -ENOSPC;
            strcpy(value, ut_kv->e[i].value);
            return UTIL_OK;
        }
    }
    return UTIL_ENOENT;
}

#endif
