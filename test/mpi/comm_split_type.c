/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the node communicator holds
 * exactly the world ranks of my node: those the launcher counts in
 * MPI_LOCALNRANKS/MPI_LOCALRANKID (our mpirun groups ranks by node key, so
 * DCFA_NODE_KEY set per program splits one machine into "nodes"), else the
 * ranks with my processor name; MPI_UNDEFINED gives MPI_COMM_NULL; the key
 * orders ranks. Collectives on the world and on the node communicator give
 * the right sums whether or not the node segment may be used. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, nsize, nrank, len, i, same = 0, below = 0, named = 0, name_sum = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    char *all;
    MPI_Comm node, rev, none;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(name, 0, sizeof(name));
    MPI_Get_processor_name(name, &len);
    all = mtest_malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (i = 0; i < size; i++) {
        if (strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, name) == 0) {
            same++;
            name_sum += i + 1;
            if (i < rank)
                below++;
        }
    }

    named = same;
    if (getenv("MPI_LOCALNRANKS") && getenv("MPI_LOCALRANKID")) {
        same = atoi(getenv("MPI_LOCALNRANKS"));
        below = atoi(getenv("MPI_LOCALRANKID"));
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (mtest_check(node != MPI_COMM_NULL, "split_type(SHARED) gave MPI_COMM_NULL")) {
        int x = rank + 1, sum = 0, lo = 0, nsum = 0;
        MPI_Comm_size(node, &nsize);
        MPI_Comm_rank(node, &nrank);
        mtest_check_int("node comm size = ranks of my node", nsize, same);
        mtest_check_int("node comm rank (key 0 keeps world order)", nrank, below);
        for (int rep = 0; rep < 3; rep++) {
            MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            mtest_check_int("allreduce on the world", sum, size * (size + 1) / 2);
            MPI_Allreduce(&rank, &lo, 1, MPI_INT, MPI_MIN, node);
            MPI_Allreduce(&x, &nsum, 1, MPI_INT, MPI_SUM, node);
            /* my node's ranks: those with my processor name when the names tell the nodes
             * apart (hosts, placed round-robin or by block), else consecutive ranks (one
             * machine split by DCFA_NODE_KEY, placed by block): lo .. lo + nsize - 1 */
            mtest_check_int("allreduce on the node", nsum,
                            named == same ? name_sum : nsize * (2 * lo + nsize + 1) / 2);
            MPI_Barrier(node);
            MPI_Bcast(&lo, 1, MPI_INT, 0, node);
        }
        MPI_Comm_free(&node);
    }

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &rev);
    MPI_Comm_rank(rev, &nrank);
    mtest_check_int("node comm rank with reversing key", nrank, same - 1 - below);
    MPI_Comm_free(&rev);

    MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &none);
    if (rank % 2)
        mtest_check(none == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) is not MPI_COMM_NULL");
    else if (none != MPI_COMM_NULL)
        MPI_Comm_free(&none);

    /* an inter-communicator (even ranks against odd ones) splits by node too (MPI 4.1): the
     * result pairs my group's processes on my node with the other group's on it, and is
     * MPI_COMM_NULL where the other group has nobody on my node */
    if (size >= 2) {
        int lo = rank, *node_of = mtest_malloc((size_t)size * sizeof(int));
        MPI_Comm half, inter, split;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
        MPI_Allgather(&lo, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
        int mine = 0, theirs = 0;
        for (i = 0; i < size; i++)
            if (node_of[i] == lo && i % 2 == rank % 2)
                mine++;
            else if (node_of[i] == lo)
                theirs++;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &split);
        if (theirs == 0) {
            mtest_check(split == MPI_COMM_NULL, "inter split_type: no peer on my node, not NULL");
        } else if (mtest_check(split != MPI_COMM_NULL, "inter split_type gave MPI_COMM_NULL")) {
            int flag = 0, ls = -1, rs = -1, x = rank, sum = -1;
            MPI_Comm_test_inter(split, &flag);
            MPI_Comm_size(split, &ls);
            MPI_Comm_remote_size(split, &rs);
            mtest_check(flag, "inter split_type did not give an inter-communicator");
            mtest_check_int("inter split_type: local size", ls, mine);
            mtest_check_int("inter split_type: remote size", rs, theirs);
            /* the other group's ranks on my node sum to this */
            int want = 0;
            for (i = 0; i < size; i++)
                if (node_of[i] == lo && i % 2 != rank % 2)
                    want += i;
            MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, split);
            mtest_check_int("allreduce over the split inter-communicator", sum, want);
            MPI_Comm_free(&split);
        }
        MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &split);
        mtest_check(split == MPI_COMM_NULL, "inter split_type(MPI_UNDEFINED) is not MPI_COMM_NULL");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        free(node_of);
    }
    free(all);
    return mtest_finalize();
}
