/*
 * rma_win: window objects: the predefined attributes of every flavour,
 * user attributes with copy/delete callbacks, info keys (defaults, given at
 * creation, set later), names, the group, MPI_Win_shared_query on shared
 * windows (contiguous and alloc_shared_noncontig, ranks with no memory,
 * MPI_PROC_NULL) with direct loads and stores between ranks, dynamic
 * windows with several regions attached, detached and attached again,
 * the _c (large-count) forms, MPI_Win_test, fence assertions, lock_all with
 * MPI_MODE_NOCHECK.
 */
#include "mtest.h"

#include <stdint.h>

static int rank, nprocs;
static int delete_calls;

static int del_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    delete_calls++;
    *(int *)extra += 1;
    return MPI_SUCCESS;
}

static void check_attrs(MPI_Win w, void *base, MPI_Aint size, int disp_unit, int flavor,
                        const char *what)
{
    void *v;
    int flag;
    MPI_Win_get_attr(w, MPI_WIN_BASE, &v, &flag);
    mtest_check(flag && v == base, "%s: MPI_WIN_BASE %p, expected %p", what, v, base);
    MPI_Win_get_attr(w, MPI_WIN_SIZE, &v, &flag);
    mtest_check(flag && *(MPI_Aint *)v == size, "%s: MPI_WIN_SIZE %ld, expected %ld", what,
                flag ? (long)*(MPI_Aint *)v : -1L, (long)size);
    MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &v, &flag);
    mtest_check(flag && *(int *)v == disp_unit, "%s: MPI_WIN_DISP_UNIT", what);
    MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &v, &flag);
    mtest_check(flag && *(int *)v == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d", what,
                flag ? *(int *)v : -1, flavor);
    MPI_Win_get_attr(w, MPI_WIN_MODEL, &v, &flag);
    mtest_check(flag && *(int *)v == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL", what);
}

static void test_attrs_info_names(void)
{
    int buf[8];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win w;
    MPI_Win_create(buf, sizeof buf, sizeof(int), info, MPI_COMM_WORLD, &w);
    MPI_Info_free(&info);
    check_attrs(w, buf, sizeof buf, sizeof(int), MPI_WIN_FLAVOR_CREATE, "MPI_Win_create");

    /* MPI 4.1: shared_query on any flavor but dynamic; memory this process cannot load and
     * store (another rank's, made by MPI_Win_create) is size 0 and NULL */
    for (int r = -1; r < nprocs; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        void *p = (void *)1;
        int q = r < 0 ? MPI_PROC_NULL : r;
        mtest_check_rc("MPI_Win_shared_query on an MPI_Win_create window",
                       MPI_Win_shared_query(w, q, &sz, &du, &p));
        if (q == rank)
            mtest_check(p == (void *)buf && sz == (MPI_Aint)sizeof buf && du == (int)sizeof(int),
                        "shared_query(own rank) of a created window: %p %ld %d", p, (long)sz, du);
        else
            mtest_check(p == NULL && sz == 0, "shared_query(%d) of a created window: %p %ld", q, p,
                        (long)sz);
    }

    /* info: what was given, defaults otherwise, and later changes */
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL];
    int flag;
    MPI_Win_get_info(w, &used);
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL - 1, val, &flag);
    mtest_check(flag && !strcmp(val, "true"), "info no_locks: '%s'", flag ? val : "(absent)");
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &flag);
    mtest_check(flag && !strcmp(val, "none"), "info accumulate_ordering: '%s'",
                flag ? val : "(absent)");
    MPI_Info_get(used, "accumulate_ops", MPI_MAX_INFO_VAL - 1, val, &flag);
    mtest_check(flag && !strcmp(val, "same_op_no_op"), "info accumulate_ops default: '%s'",
                flag ? val : "(absent)");
    MPI_Info_get(used, "dcfa_passive_progress", MPI_MAX_INFO_VAL - 1, val, &flag);
    mtest_check(
        flag && (!strcmp(val, "direct") || !strcmp(val, "assist") || !strcmp(val, "target-calls")),
        "info dcfa_passive_progress: '%s'", flag ? val : "(absent)");
    MPI_Info_free(&used);
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "rar,war");
    MPI_Win_set_info(w, info);
    MPI_Info_free(&info);
    MPI_Win_get_info(w, &used);
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &flag);
    mtest_check(flag && !strcmp(val, "rar,war"), "info after MPI_Win_set_info: '%s'",
                flag ? val : "(absent)");
    MPI_Info_free(&used);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Win_get_name(w, name, &len);
    mtest_check(len == 0 && name[0] == 0, "a new window has an empty name ('%s')", name);
    MPI_Win_set_name(w, "my window");
    MPI_Win_get_name(w, name, &len);
    mtest_check(len == 9 && !strcmp(name, "my window"), "MPI_Win_get_name: '%s'", name);

    /* group */
    MPI_Group wg, cg;
    int res;
    MPI_Win_get_group(w, &wg);
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &res);
    mtest_check(res == MPI_IDENT, "MPI_Win_get_group: not the communicator's group");
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    /* user attributes: set, get, replace (delete callback), delete at free */
    int kv, extra = 0;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, &extra);
    MPI_Win_set_attr(w, kv, (void *)(intptr_t)42);
    void *got;
    MPI_Win_get_attr(w, kv, &got, &flag);
    mtest_check(flag && (intptr_t)got == 42, "user attribute: flag %d value %ld", flag,
                (long)(intptr_t)got);
    MPI_Win_set_attr(w, kv, (void *)(intptr_t)43);
    mtest_check_int("delete callbacks after replacing an attribute", delete_calls, 1);
    MPI_Win_delete_attr(w, kv);
    MPI_Win_get_attr(w, kv, &got, &flag);
    mtest_check(!flag, "attribute still there after MPI_Win_delete_attr");
    MPI_Win_set_attr(w, kv, (void *)(intptr_t)44);
    MPI_Win_free_keyval(&kv);
    MPI_Win_free(&w);
    mtest_check_int("delete callbacks after MPI_Win_free", delete_calls, 3);
    mtest_check_int("extra_state of the callbacks", extra, 3);
    mtest_check(w == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
}

static void test_shared(int noncontig)
{
    const char *what = noncontig ? "allocate_shared (noncontig)" : "allocate_shared";
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    /* rank r has r % 3 * 8 + 4 ints, rank 1 none */
    int mine = rank == 1 ? 0 : (rank % 3) * 8 + 4;
    int *base;
    MPI_Win w;
    MPI_Win_allocate_shared((MPI_Aint)mine * (MPI_Aint)sizeof(int), sizeof(int), info,
                            MPI_COMM_WORLD, &base, &w);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    check_attrs(w, mine ? (void *)base : base, (MPI_Aint)mine * (MPI_Aint)sizeof(int), sizeof(int),
                MPI_WIN_FLAVOR_SHARED, what);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w);
    for (int i = 0; i < mine; i++)
        base[i] = -1;
    MPI_Win_sync(w);
    MPI_Barrier(MPI_COMM_WORLD);
    /* write my rank into the first element of every neighbour, through the pointers */
    int **ptr = malloc((size_t)nprocs * sizeof *ptr);
    MPI_Aint prev_end = 0;
    for (int r = 0; r < nprocs; r++) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(w, r, &sz, &du, &ptr[r]);
        int want = r == 1 ? 0 : (r % 3) * 8 + 4;
        mtest_check(sz == (MPI_Aint)want * (MPI_Aint)sizeof(int) && du == (int)sizeof(int),
                    "%s: shared_query(%d) size %ld unit %d", what, r, (long)sz, du);
        if (!noncontig && r > 0 && want > 0 && prev_end)
            mtest_check((char *)ptr[r] == (char *)prev_end,
                        "%s: rank %d's memory does not follow rank %d's", what, r, r - 1);
        if (want > 0)
            prev_end = (MPI_Aint)(uintptr_t)((char *)ptr[r] + want * sizeof(int));
        if (noncontig && want > 0)
            mtest_check(((uintptr_t)ptr[r] & 4095) == 0, "%s: rank %d's memory is not page aligned",
                        what, r);
    }
    if (rank == 0) {
        MPI_Aint sz;
        int du;
        int *p;
        MPI_Win_shared_query(w, MPI_PROC_NULL, &sz, &du, &p);
        mtest_check(p == ptr[0] && sz == 4 * (MPI_Aint)sizeof(int),
                    "%s: shared_query(MPI_PROC_NULL) is not rank 0's memory", what);
    }
    int next = (rank + 1) % nprocs;
    int nsize = next == 1 ? 0 : (next % 3) * 8 + 4;
    if (nsize)
        ptr[next][nsize - 1] = 100 + rank;
    MPI_Win_sync(w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w);
    int prev = (rank - 1 + nprocs) % nprocs;
    if (mine)
        mtest_check(base[mine - 1] == 100 + prev, "%s: a store by rank %d through its pointer: %d",
                    what, prev, base[mine - 1]);
    MPI_Win_unlock_all(w);
    free(ptr);
    MPI_Win_free(&w);
}

static void test_dynamic(void)
{
    MPI_Win w;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    check_attrs(w, NULL, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "create_dynamic");
    enum { R = 5 };
    int *reg[R];
    MPI_Aint addr[R], *all = malloc((size_t)nprocs * R * sizeof(MPI_Aint));
    for (int k = 0; k < R; k++) {
        reg[k] = calloc(8, sizeof(int));
        MPI_Win_attach(w, reg[k], 8 * sizeof(int));
        MPI_Get_address(reg[k], &addr[k]);
    }
    /* detach region 2 and attach it again: still usable */
    MPI_Win_detach(w, reg[2]);
    MPI_Win_attach(w, reg[2], 8 * sizeof(int));
    MPI_Allgather(addr, R, MPI_AINT, all, R, MPI_AINT, MPI_COMM_WORLD);
    int t = (rank + 1) % nprocs;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w);
    for (int k = 0; k < R; k++) {
        int v = 1000 * rank + k;
        MPI_Put(&v, 1, MPI_INT, t, all[t * R + k] + 3 * (MPI_Aint)sizeof(int), 1, MPI_INT, w);
    }
    MPI_Win_unlock(t, w);
    MPI_Barrier(MPI_COMM_WORLD);
    int o = (rank - 1 + nprocs) % nprocs;
    for (int k = 0; k < R; k++)
        mtest_check(reg[k][3] == 1000 * o + k, "dynamic: region %d got %d, expected %d", k,
                    reg[k][3], 1000 * o + k);
    for (int k = 0; k < R; k++) {
        MPI_Win_detach(w, reg[k]);
        free(reg[k]);
    }
    free(all);
    MPI_Win_free(&w);
}

static void test_large_count_forms(void)
{
    int *mem = calloc(64, sizeof(int));
    MPI_Win w;
    mtest_check_rc("MPI_Win_create_c",
                   MPI_Win_create_c(mem, 64 * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                                    MPI_COMM_WORLD, &w));
    int t = (rank + 1) % nprocs, v[4] = {rank, rank + 1, rank + 2, rank + 3}, got[4];
    MPI_Win_fence(MPI_MODE_NOPRECEDE, w);
    mtest_check_rc("MPI_Put_c",
                   MPI_Put_c(v, (MPI_Count)4, MPI_INT, t, 8, (MPI_Count)4, MPI_INT, w));
    MPI_Win_fence(MPI_MODE_NOSTORE, w);
    mtest_check_rc("MPI_Get_c",
                   MPI_Get_c(got, (MPI_Count)4, MPI_INT, t, 8, (MPI_Count)4, MPI_INT, w));
    mtest_check_rc("MPI_Accumulate_c", MPI_Accumulate_c(v, (MPI_Count)4, MPI_INT, t, 16,
                                                        (MPI_Count)4, MPI_INT, MPI_SUM, w));
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
    for (int i = 0; i < 4; i++) {
        mtest_check(got[i] == rank + i, "MPI_Get_c: %d, expected %d", got[i], rank + i);
        int o = (rank - 1 + nprocs) % nprocs;
        mtest_check(mem[8 + i] == o + i && mem[16 + i] == o + i, "MPI_Put_c/Accumulate_c: %d %d",
                    mem[8 + i], mem[16 + i]);
    }
    MPI_Win_free(&w);
    free(mem);

    int *base;
    mtest_check_rc("MPI_Win_allocate_c",
                   MPI_Win_allocate_c(16 * sizeof(long), (MPI_Aint)sizeof(long), MPI_INFO_NULL,
                                      MPI_COMM_WORLD, &base, &w));
    MPI_Aint sz, du;
    void *bp;
    mtest_check_rc("MPI_Win_shared_query_c", MPI_Win_shared_query_c(w, rank, &sz, &du, &bp));
    mtest_check(sz == 16 * (MPI_Aint)sizeof(long) && du == (MPI_Aint)sizeof(long) && bp == base,
                "MPI_Win_shared_query_c on my own memory");
    MPI_Win_free(&w);
}

/* post/start/complete with MPI_Win_test polling at the target */
static void test_win_test(void)
{
    int *mem;
    MPI_Win w;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    mem[0] = -1;
    MPI_Group wg, g;
    MPI_Win_get_group(w, &wg);
    int t = (rank + 1) % nprocs, o = (rank - 1 + nprocs) % nprocs;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_incl(wg, 1, &o, &g);
    MPI_Win_post(g, MPI_MODE_NOSTORE, w);
    MPI_Group_free(&g);
    MPI_Group_incl(wg, 1, &t, &g);
    MPI_Win_start(g, 0, w);
    MPI_Group_free(&g);
    MPI_Put(&rank, 1, MPI_INT, t, 0, 1, MPI_INT, w);
    MPI_Win_complete(w);
    int flag = 0, polls = 0;
    while (!flag && polls < 1000000) {
        MPI_Win_test(w, &flag);
        polls++;
    }
    mtest_check(flag, "MPI_Win_test never reported the epoch complete");
    mtest_check(mem[0] == o, "after MPI_Win_test: %d, expected %d", mem[0], o);
    MPI_Group_free(&wg);
    MPI_Win_free(&w);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_attrs_info_names();
    int *base;
    MPI_Win w;
    MPI_Win_allocate(40, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    check_attrs(w, base, 40, 4, MPI_WIN_FLAVOR_ALLOCATE, "MPI_Win_allocate");
    MPI_Win_free(&w);
    test_shared(0);
    test_shared(1);
    test_dynamic();
    test_large_count_forms();
    test_win_test();
    return mtest_finalize();
}
