/* MPI_Alloc_mem / MPI_Free_mem. Blocks come from the installed provider when
 * there is one and it accepts (the hook through which a fabric can hand out
 * memory it moves faster, e.g. shared-memory-backed buffers), else from the
 * heap with the requested alignment. A table of live blocks lets
 * MPI_Free_mem reject pointers it did not hand out and return each block to
 * whoever made it. */
#include "mpi/mem/mem.h"
#include "util/util.h"
#include "core/core.h"

#include <stdint.h>
#include <stdlib.h>

#define MEM_BUCKETS 256

typedef struct mem_block {
    struct mem_block *next;
    void *base;
    size_t size;
    mpii_mem_provider prov; /* prov.free == NULL: heap */
} mem_block;

static mem_block *mem_table[MEM_BUCKETS];
static mpii_mem_provider mem_provider;
static int mem_have_provider;

static unsigned mem_bucket(const void *p)
{
    uintptr_t v = (uintptr_t)p;
    return (unsigned)((v >> 6) ^ (v >> 14) ^ (v >> 22)) % MEM_BUCKETS;
}

void mpii_mem_set_provider(const mpii_mem_provider *p)
{
    mem_have_provider = p != NULL;
    if (p)
        mem_provider = *p;
}

void *mpii_mem_alloc(size_t size, size_t align)
{
    mem_block *b = util_calloc(1, sizeof *b);
    void *p = NULL;
    if (mem_have_provider && mem_provider.alloc) {
        p = mem_provider.alloc(size, align, mem_provider.ctx);
        if (p)
            b->prov = mem_provider;
    }
    if (!p && posix_memalign(&p, align, size ? size : 1) != 0)
        p = NULL;
    if (!p) {
        free(b);
        return NULL;
    }
    b->base = p;
    b->size = size;
    unsigned h = mem_bucket(p);
    b->next = mem_table[h];
    mem_table[h] = b;
    return p;
}

int mpii_mem_free(void *base)
{
    mem_block **pp = &mem_table[mem_bucket(base)];
    for (; *pp; pp = &(*pp)->next) {
        mem_block *b = *pp;
        if (b->base != base)
            continue;
        *pp = b->next;
        if (b->prov.free)
            b->prov.free(b->base, b->size, b->prov.ctx);
        else
            free(b->base);
        free(b);
        return UTIL_OK;
    }
    return UTIL_EINVAL;
}

static void *mem_fabric_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    return core_mem_alloc(size, align);
}

static void mem_fabric_free(void *base, size_t size, void *ctx)
{
    (void)ctx;
    core_mem_free(base, size);
}

void mpii_mem_use_fabric(int on)
{
    static const mpii_mem_provider fabric = {"fabric", mem_fabric_alloc, mem_fabric_free, NULL};
    mpii_mem_set_provider(on ? &fabric : NULL);
}
