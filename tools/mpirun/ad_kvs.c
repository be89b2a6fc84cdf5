/* ad: per-job key/value store (hash table with chaining, grows by doubling),
 * and the name service's table (published service names) on top of it. */
#include "ad.h"
#include "assist/ns_wire.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

int ad_kvs_del(struct ad_kvs *kvs, const char *key)
{
    size_t h;

    if (kvs->buckets == NULL)
        return -ENOENT;
    h = ad_kvs_hash(key) % kvs->nbuckets;
    for (struct ad_kv **pp = &kvs->buckets[h]; *pp != NULL; pp = &(*pp)->next) {
        struct ad_kv *kv = *pp;
        if (strcmp(kv->key, key) == 0) {
            *pp = kv->next;
            free(kv->value);
            free(kv);
            kvs->count--;
            return 0;
        }
    }
    return -ENOENT;
}

/* ---- name service ----------------------------------------------------------- */

/* Through the name server of DCFA_NAMESERVER. */
static int ad_name_remote(const char *server, int op, const char *service, const char *port,
                          char *port_out, size_t cap)
{
    char req[ASSIST_NS_LINE_MAX + 32], reply[ASSIST_NS_LINE_MAX + 32];
    const char *rest;
    int rc;

    if (op == AD_NAME_PUBLISH)
        snprintf(req, sizeof(req), "PUBLISH %s %s\n", service, port);
    else
        snprintf(req, sizeof(req), "%s %s\n", op == AD_NAME_LOOKUP ? "LOOKUP" : "UNPUBLISH",
                 service);
    rc = assist_ns_call(server, req, reply, sizeof(reply), ASSIST_NS_TIMEOUT_MS);
    if (rc != 0)
        return -EHOSTUNREACH;
    rc = assist_ns_status(reply, &rest);
    if (rc == -EACCES)
        fprintf(stderr,
                "mpirun: the name server %s refused this request: %s (is %s the server's?)\n",
                server, rest, ASSIST_NS_SECRET_ENV);
    if (rc == -EPROTO || rc == -EBUSY || rc == -EACCES)
        return -EHOSTUNREACH;
    if (rc == 0 && op == AD_NAME_LOOKUP) {
        if (!assist_ns_field_ok(rest, ASSIST_NS_PORT_MAX))
            return -EHOSTUNREACH;
        snprintf(port_out, cap, "%s", rest);
    }
    return rc;
}

int ad_name_do(struct ad_daemon *d, int op, const char *service, const char *port, char *port_out,
               size_t cap)
{
    const char *v;

    if (!assist_ns_field_ok(service, ASSIST_NS_SERVICE_MAX) ||
        (op == AD_NAME_PUBLISH && !assist_ns_field_ok(port, ASSIST_NS_PORT_MAX)))
        return -EINVAL;
    if (d->nameserver != NULL)
        return ad_name_remote(d->nameserver, op, service, port, port_out, cap);
    if (d->names.buckets == NULL && ad_kvs_init(&d->names) != 0)
        return -ENOMEM;
    switch (op) {
    case AD_NAME_PUBLISH:
        if (ad_kvs_get(&d->names, service) != NULL)
            return -EEXIST;
        if (d->names.count >= AD_NAMES_MAX)
            return -ENOSPC;
        return ad_kvs_put(&d->names, service, port);
    case AD_NAME_UNPUBLISH:
        return ad_kvs_del(&d->names, service);
    case AD_NAME_LOOKUP:
        v = ad_kvs_get(&d->names, service);
        if (v == NULL)
            return -ENOENT;
        snprintf(port_out, cap, "%s", v);
        return 0;
    default:
        return -EINVAL;
    }
}
