/* Module-aware collectives (docs/collectives.md "Across modules"): with the
 * world's modules given by DCFA_COLL_MODULES (a job with gateways finds them
 * from its networks), barrier, bcast, reduce and allreduce of commutative
 * operations cross between modules once per module and direction. Checked:
 * the results (every root, eager and rendezvous sizes, in place, a user
 * operation, nonblocking forms, a split communicator, all ranks getting the
 * same bits of a floating-point sum), the pvars dcfa_coll_module_ops (one per
 * collective on every rank) and dcfa_coll_module_cross (summed over the ranks:
 * modules - 1 for bcast and reduce, 2 (modules - 1) for allreduce and
 * barrier), a non-commutative operation keeping the usual algorithms (and rank
 * order), and a barrier that waits for a late rank. Without modules, or with
 * DCFA_COLL_MODULE=0, the counters stay at 0 and the results are the same. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static MPI_T_pvar_session ses;
static int nmod; /* modules in the world; 0: the module-aware algorithms are off */
static unsigned long long ops0, cross0;

static void mark(void)
{
    ops0 = mtest_pvar_counter(ses, "dcfa_coll_module_ops");
    cross0 = mtest_pvar_counter(ses, "dcfa_coll_module_cross");
}

/* after one collective on MPI_COMM_WORLD since mark(): one build here, `cross` messages
 * between modules in all */
static void expect(const char *what, int cross)
{
    unsigned long long d[2] = {mtest_pvar_counter(ses, "dcfa_coll_module_ops") - ops0,
                               mtest_pvar_counter(ses, "dcfa_coll_module_cross") - cross0};
    unsigned long long sum[2];
    MPI_Allreduce(d, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    mtest_check(d[0] == (nmod > 1 ? 1u : 0u), "%s: %llu module-aware builds here, expected %d",
                what, d[0], nmod > 1);
    unsigned long long want = nmod > 1 ? (unsigned long long)cross : 0;
    mtest_check(sum[1] == want, "%s: %llu messages between modules, expected %llu", what, sum[1],
                want);
}

/* composition of affine maps x -> a x + b (pairs of longs, modulo a prime): associative, not
 * commutative; inout = in o inout, in being the lower ranks' */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    long *f = in, *g = inout;
    for (int i = 0; i < *len; i++, f += 2, g += 2) {
        long a = f[0] * g[0] % 1000003, b = (f[0] * g[1] + f[1]) % 1000003;
        g[0] = a;
        g[1] = b;
    }
}

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        if (abs(a[i]) > abs(b[i]))
            b[i] = a[i];
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    MPI_T_pvar_session_create(&ses);
    const char *list = getenv("DCFA_COLL_MODULES"), *on = getenv("DCFA_COLL_MODULE");
    if (on && atoi(on) == 0) {
        nmod = 1;
    } else if (list && !strncmp(list, "mod:", 4)) {
        nmod = atoi(list + 4) < size ? atoi(list + 4) : size;
    } else if (!list || !*list) {
        /* the modules the job has (a job with gateways): MPIX_COMM_TYPE_MODULE's count */
        MPI_Comm m;
        int mr, leaders;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_MODULE, 0, MPI_INFO_NULL, &m);
        MPI_Comm_rank(m, &mr);
        mr = mr == 0;
        MPI_Allreduce(&mr, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Comm_free(&m);
        nmod = leaders;
    } else {
        int seen[64], ns = 0;
        for (const char *p = list; *p;) {
            int v = atoi(p), k = 0;
            while (k < ns && seen[k] != v)
                k++;
            if (k == ns && ns < 64)
                seen[ns++] = v;
            p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
        }
        nmod = ns;
    }
    int cross_all = nmod == 2 ? 2 : 2 * (nmod - 1);
    static const int counts[] = {1, 3000, 100000};
    int *buf = mtest_malloc(100000 * sizeof(int)), *out = mtest_malloc(100000 * sizeof(int));

    for (int ci = 0; ci < 3; ci++) {
        int n = counts[ci];
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++)
                buf[i] = rank == root ? root * 1000 + i : -1;
            mark();
            MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
            expect("MPI_Bcast", nmod - 1);
            for (int i = 0; i < n; i++)
                if (!mtest_check(buf[i] == root * 1000 + i, "bcast %d ints from %d: [%d] = %d", n,
                                 root, i, buf[i]))
                    break;
            /* reduce: sum, in place at the root every other time */
            for (int i = 0; i < n; i++)
                buf[i] = rank + i;
            int inplace = root % 2 == 1 && rank == root;
            if (inplace)
                memcpy(out, buf, (size_t)n * sizeof(int));
            mark();
            MPI_Reduce(inplace ? MPI_IN_PLACE : buf, out, n, MPI_INT, MPI_SUM, root,
                       MPI_COMM_WORLD);
            expect("MPI_Reduce", nmod - 1);
            if (rank == root)
                for (int i = 0; i < n; i++)
                    if (!mtest_check(out[i] == size * i + size * (size - 1) / 2,
                                     "reduce %d ints to %d: [%d] = %d", n, root, i, out[i]))
                        break;
        }
        /* allreduce, and in place */
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < n; i++)
                out[i] = buf[i] = rank * 3 + i;
            mark();
            MPI_Allreduce(inplace ? MPI_IN_PLACE : buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            expect("MPI_Allreduce", cross_all);
            for (int i = 0; i < n; i++)
                if (!mtest_check(out[i] == 3 * size * (size - 1) / 2 + size * i,
                                 "allreduce %d ints%s: [%d] = %d", n, inplace ? " in place" : "", i,
                                 out[i]))
                    break;
        }
    }
    /* a user operation, commutative: the module-aware path */
    MPI_Op op;
    MPI_Op_create(maxabs, 1, &op);
    int v = (rank % 2 ? -1 : 1) * (rank * 5 + 1), r = 0;
    mark();
    MPI_Allreduce(&v, &r, 1, MPI_INT, op, MPI_COMM_WORLD);
    expect("MPI_Allreduce (user op)", cross_all);
    int want = ((size - 1) % 2 ? -1 : 1) * ((size - 1) * 5 + 1);
    mtest_check(r == want, "allreduce of a commutative user op: %d, expected %d", r, want);
    MPI_Op_free(&op);
    /* not commutative: the usual algorithms, ranks combined in order */
    MPI_Datatype affine;
    MPI_Type_contiguous(2, MPI_LONG, &affine);
    MPI_Type_commit(&affine);
    MPI_Op_create(compose, 0, &op);
    long lv[2] = {rank + 2, rank + 1}, lr[2] = {0, 0}, lw[2] = {2, 1};
    for (int q = 1; q < size; q++) {
        long a = lw[0] * (q + 2) % 1000003, b = (lw[0] * (q + 1) + lw[1]) % 1000003;
        lw[0] = a;
        lw[1] = b;
    }
    unsigned long long o0 = mtest_pvar_counter(ses, "dcfa_coll_module_ops");
    MPI_Allreduce(lv, lr, 1, affine, op, MPI_COMM_WORLD);
    mtest_check(mtest_pvar_counter(ses, "dcfa_coll_module_ops") == o0,
                "a non-commutative allreduce took the module-aware path");
    mtest_check(lr[0] == lw[0] && lr[1] == lw[1],
                "non-commutative allreduce: (%ld, %ld), expected "
                "(%ld, %ld)",
                lr[0], lr[1], lw[0], lw[1]);
    MPI_Op_free(&op);
    MPI_Type_free(&affine);
    /* floating point: every rank gets the same bits */
    double d = rank % 2 ? 1e16 : 1.0 + rank * 0.1, ds, all[64];
    MPI_Allreduce(&d, &ds, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (size <= 64) {
        MPI_Allgather(&ds, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int q = 1; q < size; q++)
            mtest_check(memcmp(&all[q], &all[0], sizeof(double)) == 0,
                        "allreduce of doubles: rank %d got %.17g, rank 0 %.17g", q, all[q], all[0]);
    }
    /* barrier: nobody leaves before the last rank has come (one host: one clock) */
    double t_in = 0, t_out, late_in;
    if (rank == size - 1) {
        mtest_sleep_ms(200);
        t_in = now();
    }
    mark();
    MPI_Barrier(MPI_COMM_WORLD);
    t_out = now();
    expect("MPI_Barrier", cross_all);
    late_in = t_in;
    MPI_Bcast(&late_in, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
    mtest_check(t_out >= late_in, "left the barrier %.3f s before the last rank entered it",
                late_in - t_out);
    /* nonblocking forms */
    MPI_Request rq[2];
    int ib = rank == 0 ? 77 : 0, ia = rank + 1, iar = 0;
    MPI_Ibcast(&ib, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Iallreduce(&ia, &iar, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    mtest_check(ib == 77 && iar == size * (size + 1) / 2, "ibcast %d (77), iallreduce %d (%d)", ib,
                iar, size * (size + 1) / 2);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    /* a split communicator: its own layout */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    int hr, hs, hv, hsum = 0;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    hv = hr == hs - 1 ? 4242 : 0;
    MPI_Bcast(&hv, 1, MPI_INT, hs - 1, half);
    MPI_Allreduce(&hr, &hsum, 1, MPI_INT, MPI_SUM, half);
    mtest_check(hv == 4242 && hsum == hs * (hs - 1) / 2, "split communicator: bcast %d, sum %d", hv,
                hsum);
    MPI_Comm_free(&half);
    free(buf);
    free(out);
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    return mtest_finalize();
}
