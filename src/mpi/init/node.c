/* Which processes share a node, the library's one notion of "node".
 *
 * A node is a shared-memory domain: processes with the same util_node_key()
 * (hostname, boot id, /dev/shm device). The process manager tells each rank
 * the node of every rank in the PMI key PMI_process_mapping, as Hydra and
 * Slurm do; our mpirun groups ranks by util_node_key() (DCFA_NODE_KEY
 * included) when it writes it, so both agree, and also passes it as
 * DCFA_PROCESS_MAPPING (start-up then asks the daemon nothing more). Read
 * once at start-up; communicators whose ranks are all on one node may use the
 * node-level collective segment (node_shm.c). MPI_Comm_split_type(SHARED)
 * compares the keys themselves (comm.c).
 *
 * The value: "(vector,(n,k,c),...)": c ranks on each of the k nodes n,
 * n+1, ..., n+k-1, block after block; when the blocks cover fewer ranks than
 * the job has, they repeat (a cyclic layout written once). */
#include "mpi/mpii.h"
#include "assist/assist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int *mpii_node_tab;   /* node of each world process, NULL = unknown */
static int mpii_node_mine_n; /* processes on my node, 0 = unknown */

struct node_block {
    int first, count, per;
};

/* Parses the mapping into node_of[size]; 0, or -1 when it is not one. */
int mpii_node_parse(const char *s, int size, int *node_of)
{
    struct node_block blk[256];
    int nblk = 0, r = 0;
    const char *p = s;

    if (strncmp(p, "(vector", 7) != 0)
        return -1;
    p += 7;
    while (*p == ',') {
        char *end;
        long v[3];
        p++;
        if (*p++ != '(')
            return -1;
        for (int i = 0; i < 3; i++) {
            v[i] = strtol(p, &end, 10);
            if (end == p || v[i] < 0 || v[i] > (1L << 24))
                return -1;
            p = end;
            if (*p++ != (i < 2 ? ',' : ')'))
                return -1;
        }
        if (v[1] < 1 || v[2] < 1 || nblk == (int)(sizeof blk / sizeof blk[0]))
            return -1;
        blk[nblk++] = (struct node_block){(int)v[0], (int)v[1], (int)v[2]};
    }
    if (strcmp(p, ")") != 0 || nblk == 0)
        return -1;
    while (r < size) {
        for (int b = 0; b < nblk && r < size; b++)
            for (int k = 0; k < blk[b].count && r < size; k++)
                for (int c = 0; c < blk[b].per && r < size; c++)
                    node_of[r++] = blk[b].first + k;
    }
    return 0;
}

void mpii_node_init(void)
{
    char val[ASSIST_VALUE_MAX + 1];
    int n = mpii_st.world_size;

    mpii_node_tab = NULL;
    mpii_node_mine_n = 0;
    if (n == 1) {
        mpii_node_tab = util_calloc(1, sizeof(int));
        mpii_node_mine_n = 1;
        return;
    }
    /* our mpirun also passes it in the environment: no round trip to the daemon */
    const char *env = getenv("DCFA_PROCESS_MAPPING");
    if (env != NULL && strlen(env) < sizeof val)
        snprintf(val, sizeof val, "%s", env);
    else if (assist_kvs_get("PMI_process_mapping", val, sizeof val) != 0)
        return;
    int *tab = util_malloc((size_t)n * sizeof(int));
    if (mpii_node_parse(val, n, tab) != 0) {
        util_log("PMI_process_mapping '%.100s' is not understood: no node-level shortcuts", val);
        free(tab);
        return;
    }
    mpii_node_tab = tab;
    for (int r = 0; r < n; r++)
        mpii_node_mine_n += tab[r] == tab[mpii_st.world_rank];
}

void mpii_node_finalize(void)
{
    free(mpii_node_tab);
    mpii_node_tab = NULL;
}

int mpii_node_local_size(void) { return mpii_node_mine_n; }

int mpii_node_group_local(const mpii_group *g)
{
    if (mpii_node_tab == NULL || g->size < 1)
        return 0;
    for (int i = 0; i < g->size; i++) {
        int p = g->lpids[i];
        if (p < 0 || p >= mpii_st.world_size || mpii_node_tab[p] != mpii_node_tab[g->lpids[0]])
            return 0;
    }
    return 1;
}
