/* Unit test of the process-mapping parser (src/mpi/init/node.c): the
 * PMI_process_mapping forms Hydra, Slurm and our mpirun write, the cyclic
 * repetition, and malformed values. */
#include "mpi/mpii.h"

#include <stdio.h>
#include <string.h>

static int errors;

static void expect(const char *map, int size, const int *want)
{
    int got[64];
    memset(got, -1, sizeof got);
    if (mpii_node_parse(map, size, got) != 0) {
        fprintf(stderr, "'%s': not parsed\n", map);
        errors++;
        return;
    }
    for (int r = 0; r < size; r++) {
        if (got[r] != want[r]) {
            fprintf(stderr, "'%s': rank %d on node %d, want %d\n", map, r, got[r], want[r]);
            errors++;
            return;
        }
    }
}

static void reject(const char *map)
{
    int got[8];
    if (mpii_node_parse(map, 8, got) == 0) {
        fprintf(stderr, "'%s': accepted\n", map);
        errors++;
    }
}

int main(void)
{
    expect("(vector,(0,1,4))", 4, (int[]){0, 0, 0, 0});
    expect("(vector,(0,2,2))", 4, (int[]){0, 0, 1, 1});
    /* Slurm's block layout with unequal nodes */
    expect("(vector,(0,2,3),(2,1,1))", 7, (int[]){0, 0, 0, 1, 1, 1, 2});
    /* cyclic: the vector repeats */
    expect("(vector,(0,3,1))", 7, (int[]){0, 1, 2, 0, 1, 2, 0});
    /* our mpirun's wrap-around written out */
    expect("(vector,(0,2,2),(0,2,2))", 8, (int[]){0, 0, 1, 1, 0, 0, 1, 1});
    /* ranks on nodes out of order (DCFA_NODE_KEY per program) */
    expect("(vector,(1,1,2),(0,1,2))", 4, (int[]){1, 1, 0, 0});
    reject("");
    reject("(vector)");
    reject("(vector,(0,0,2))");
    reject("(vector,(0,1,0))");
    reject("(vector,(0,1,2)");
    reject("(vector,(0,1,2)) ");
    reject("(vector,(-1,1,2))");
    reject("(vector,(0,1))");
    reject("(hostlist,(0,1,2))");
    if (errors == 0)
        printf(" No Errors\n");
    return errors != 0;
}
