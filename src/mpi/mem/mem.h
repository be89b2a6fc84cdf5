/* Memory handed out by the library (MPI_Alloc_mem / MPI_Free_mem). */
#ifndef DCFA_MPI_MEM_H
#define DCFA_MPI_MEM_H

#include <stddef.h>

/* A provider of memory the fabric reaches faster than plain heap memory (e.g.
 * shared-memory-backed buffers for the shm fabric). alloc returns NULL to
 * decline; free is called only for blocks its alloc returned. */
typedef struct mpii_mem_provider {
    const char *name;
    void *(*alloc)(size_t size, size_t align, void *ctx);
    void (*free)(void *base, size_t size, void *ctx);
    void *ctx;
} mpii_mem_provider;

/* Installs (or with NULL removes) the provider used by later allocations;
 * blocks already handed out are freed by whoever allocated them. */
void mpii_mem_set_provider(const mpii_mem_provider *p);

/* Installs (on) or removes the core's provider: memory the node's peers map
 * (core_mem_alloc), from MPI_Init to MPI_Finalize */
void mpii_mem_use_fabric(int on);

/* size bytes aligned to align (a power of two, at least sizeof(void *));
 * size 0 gives a unique non-NULL pointer. NULL when out of memory. */
void *mpii_mem_alloc(size_t size, size_t align);
/* UTIL_EINVAL if base was not returned by mpii_mem_alloc (or already freed) */
int mpii_mem_free(void *base);

#endif
