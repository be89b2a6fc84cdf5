/* ad: per-job key/value store (hash table with chaining, grows by doubling). */
#include "ad.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ad_kv {
    struct ad_kv *next;
    char *value;
    char key[];
};

static size_t ad_kvs_hash(const char *key)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *key != '\0'; key++) {
        h ^= (unsigned char)*key;
        h *= 0x100000001b3ull;
    }
    return (size_t)h;
}

int ad_kvs_init(struct ad_kvs *kvs)
{
    kvs->nbuckets = 256;
    kvs->count = 0;
    kvs->buckets = calloc(kvs->nbuckets, sizeof(*kvs->buckets));
    return kvs->buckets != NULL ? 0 : -ENOMEM;
}

void ad_kvs_destroy(struct ad_kvs *kvs)
{
    for (size_t i = 0; i < kvs->nbuckets && kvs->buckets != NULL; i++) {
        struct ad_kv *kv = kvs->buckets[i];
        while (kv != NULL) {
            struct ad_kv *next = kv->next;
            free(kv->value);
            free(kv);
            kv = next;
        }
    }
    free(kvs->buckets);
    kvs->buckets = NULL;
    kvs->count = 0;
}

static void ad_kvs_grow(struct ad_kvs *kvs)
{
    size_t n = kvs->nbuckets * 2;
    struct ad_kv **b = calloc(n, sizeof(*b));

    if (b == NULL)
        return; /* keep the longer chains */
    for (size_t i = 0; i < kvs->nbuckets; i++) {
        struct ad_kv *kv = kvs->buckets[i];
        while (kv != NULL) {
            struct ad_kv *next = kv->next;
            size_t h = ad_kvs_hash(kv->key) % n;
            kv->next = b[h];
            b[h] = kv;
            kv = next;
        }
    }
    free(kvs->buckets);
    kvs->buckets = b;
    kvs->nbuckets = n;
}

int ad_kvs_put(struct ad_kvs *kvs, const char *key, const char *value)
{
    size_t h = ad_kvs_hash(key) % kvs->nbuckets;
    char *copy = strdup(value);
    struct ad_kv *kv;

    if (copy == NULL)
        return -ENOMEM;
    for (kv = kvs->buckets[h]; kv != NULL; kv = kv->next) {
        if (strcmp(kv->key, key) == 0) {
            free(kv->value);
            kv->value = copy;
            return 0;
        }
    }
    kv = malloc(sizeof(*kv) + strlen(key) + 1);
    if (kv == NULL) {
        free(copy);
        return -ENOMEM;
    }
    strcpy(kv->key, key);
    kv->value = copy;
    kv->next = kvs->buckets[h];
    kvs->buckets[h] = kv;
    if (++kvs->count > 2 * kvs->nbuckets)
        ad_kvs_grow(kvs);
    return 0;
}

const char *ad_kvs_get(const struct ad_kvs *kvs, const char *key)
{
    size_t h = ad_kvs_hash(key) % kvs->nbuckets;

    for (const struct ad_kv *kv = kvs->buckets[h]; kv != NULL; kv = kv->next)
        if (strcmp(kv->key, key) == 0)
            return kv->value;
    return NULL;
}
