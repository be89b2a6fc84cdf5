/*
 * io_access: every data access routine of MPI-IO (MPI 4.1 14.4), checked
 * against plain POSIX reads and writes of the same file.
 *
 * For each access family (explicit offset, individual pointer, ordered;
 * independent / collective; blocking / nonblocking / split; int and _c
 * counts), each view (the default byte view with one contiguous block per
 * rank, and an interleaved view where rank r owns every size-th block of 64
 * bytes, so collective calls aggregate), and each memory layout (contiguous,
 * and every other int of a strided buffer):
 *   - every rank writes its part; the file read back with pread must hold
 *     exactly the expected bytes at every offset, and the status count and
 *     the file pointers must be right;
 *   - the file is then rewritten with pwrite in another pattern and read
 *     through the same family; every rank must get its bytes.
 * Shared file pointer calls write and read self-describing records, each of
 * which must be accessed exactly once (see io_shared for concurrency).
 * The file is opened with cb_buffer_size=8192 so two-phase runs many cycles.
 */
#include "io_util.h"

enum fam {
    F_AT,
    F_AT_ALL,
    F_IAT,
    F_IAT_ALL,
    F_AT_SPLIT, /* explicit offset */
    F_IND,
    F_IND_ALL,
    F_IIND,
    F_IIND_ALL,
    F_IND_SPLIT, /* individual pointer */
    F_ORD,
    F_ORD_SPLIT, /* ordered (contiguous view only) */
    F_NFAM
};
static const char *fam_name[] = {"at",  "at_all", "iat",  "iat_all", "at_split", "ind",
                                 "all", "iind",   "iall", "split",   "ordered",  "ord_split"};

#define NBYTES 12388 /* per rank: whole ints, not whole blocks */
#define BLK    64

static int rank, size;

/* file offset of stream byte k of `r` in view v (0 contiguous, 1 interleaved) */
static long long off_of(int v, int r, long long k)
{
    if (v == 0)
        return (long long)r * NBYTES + k;
    return ((k / BLK) * size + r) * BLK + k % BLK;
}

static int owner_of(int v, long long off, long long *k)
{
    if (v == 0) {
        *k = off % NBYTES;
        return (int)(off / NBYTES);
    }
    long long blk = off / BLK;
    int r = (int)(blk % size);
    *k = (blk / size) * BLK + off % BLK;
    return r;
}

/* one call of family f; count in elements of dt; offset in etypes (bytes) */
static int do_rw(MPI_File fh, int f, int wr, int large, MPI_Offset offset, void *buf, int count,
                 MPI_Datatype dt, MPI_Status *st)
{
    MPI_Request req;
    int rc = MPI_SUCCESS;
    MPI_Count c = count;
    if (f >= F_IND && f <= F_IND_SPLIT)
        MPI_File_seek(fh, offset, MPI_SEEK_SET);
    if (f == F_ORD || f == F_ORD_SPLIT)
        MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    switch (f) {
    case F_AT:
        rc = wr ? (large ? MPI_File_write_at_c(fh, offset, buf, c, dt, st)
                         : MPI_File_write_at(fh, offset, buf, count, dt, st))
                : (large ? MPI_File_read_at_c(fh, offset, buf, c, dt, st)
                         : MPI_File_read_at(fh, offset, buf, count, dt, st));
        break;
    case F_AT_ALL:
        rc = wr ? (large ? MPI_File_write_at_all_c(fh, offset, buf, c, dt, st)
                         : MPI_File_write_at_all(fh, offset, buf, count, dt, st))
                : (large ? MPI_File_read_at_all_c(fh, offset, buf, c, dt, st)
                         : MPI_File_read_at_all(fh, offset, buf, count, dt, st));
        break;
    case F_IAT:
        rc = wr ? (large ? MPI_File_iwrite_at_c(fh, offset, buf, c, dt, &req)
                         : MPI_File_iwrite_at(fh, offset, buf, count, dt, &req))
                : (large ? MPI_File_iread_at_c(fh, offset, buf, c, dt, &req)
                         : MPI_File_iread_at(fh, offset, buf, count, dt, &req));
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, st);
        break;
    case F_IAT_ALL:
        rc = wr ? (large ? MPI_File_iwrite_at_all_c(fh, offset, buf, c, dt, &req)
                         : MPI_File_iwrite_at_all(fh, offset, buf, count, dt, &req))
                : (large ? MPI_File_iread_at_all_c(fh, offset, buf, c, dt, &req)
                         : MPI_File_iread_at_all(fh, offset, buf, count, dt, &req));
        if (rc == MPI_SUCCESS) {
            int flag = 0;
            while (!flag && rc == MPI_SUCCESS)
                rc = MPI_Test(&req, &flag, st);
        }
        break;
    case F_AT_SPLIT:
        if (wr) {
            rc = large ? MPI_File_write_at_all_begin_c(fh, offset, buf, c, dt)
                       : MPI_File_write_at_all_begin(fh, offset, buf, count, dt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_write_at_all_end(fh, buf, st);
        } else {
            rc = large ? MPI_File_read_at_all_begin_c(fh, offset, buf, c, dt)
                       : MPI_File_read_at_all_begin(fh, offset, buf, count, dt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_read_at_all_end(fh, buf, st);
        }
        break;
    case F_IND:
        rc = wr ? (large ? MPI_File_write_c(fh, buf, c, dt, st)
                         : MPI_File_write(fh, buf, count, dt, st))
                : (large ? MPI_File_read_c(fh, buf, c, dt, st)
                         : MPI_File_read(fh, buf, count, dt, st));
        break;
    case F_IND_ALL:
        rc = wr ? (large ? MPI_File_write_all_c(fh, buf, c, dt, st)
                         : MPI_File_write_all(fh, buf, count, dt, st))
                : (large ? MPI_File_read_all_c(fh, buf, c, dt, st)
                         : MPI_File_read_all(fh, buf, count, dt, st));
        break;
    case F_IIND:
        rc = wr ? (large ? MPI_File_iwrite_c(fh, buf, c, dt, &req)
                         : MPI_File_iwrite(fh, buf, count, dt, &req))
                : (large ? MPI_File_iread_c(fh, buf, c, dt, &req)
                         : MPI_File_iread(fh, buf, count, dt, &req));
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, st);
        break;
    case F_IIND_ALL:
        rc = wr ? (large ? MPI_File_iwrite_all_c(fh, buf, c, dt, &req)
                         : MPI_File_iwrite_all(fh, buf, count, dt, &req))
                : (large ? MPI_File_iread_all_c(fh, buf, c, dt, &req)
                         : MPI_File_iread_all(fh, buf, count, dt, &req));
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, st);
        break;
    case F_IND_SPLIT:
        if (wr) {
            rc = large ? MPI_File_write_all_begin_c(fh, buf, c, dt)
                       : MPI_File_write_all_begin(fh, buf, count, dt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_write_all_end(fh, buf, st);
        } else {
            rc = large ? MPI_File_read_all_begin_c(fh, buf, c, dt)
                       : MPI_File_read_all_begin(fh, buf, count, dt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_read_all_end(fh, buf, st);
        }
        break;
    case F_ORD:
        rc = wr ? (large ? MPI_File_write_ordered_c(fh, buf, c, dt, st)
                         : MPI_File_write_ordered(fh, buf, count, dt, st))
                : (large ? MPI_File_read_ordered_c(fh, buf, c, dt, st)
                         : MPI_File_read_ordered(fh, buf, count, dt, st));
        break;
    case F_ORD_SPLIT:
        if (wr) {
            rc = large ? MPI_File_write_ordered_begin_c(fh, buf, c, dt)
                       : MPI_File_write_ordered_begin(fh, buf, count, dt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_write_ordered_end(fh, buf, st);
        } else {
            rc = large ? MPI_File_read_ordered_begin_c(fh, buf, c, dt)
                       : MPI_File_read_ordered_begin(fh, buf, count, dt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_read_ordered_end(fh, buf, st);
        }
        break;
    }
    return rc;
}

/* memory layouts: 0 contiguous bytes, 1 every other int of a buffer twice as large */
static void mem_put(int m, unsigned char *mem, const unsigned char *data, int n)
{
    if (m == 0) {
        memcpy(mem, data, (size_t)n);
        return;
    }
    for (int i = 0; i < n; i++)
        mem[(i / 4) * 8 + i % 4] = data[i];
}

static void mem_get(int m, const unsigned char *mem, unsigned char *data, int n)
{
    if (m == 0) {
        memcpy(data, mem, (size_t)n);
        return;
    }
    for (int i = 0; i < n; i++)
        data[i] = mem[(i / 4) * 8 + i % 4];
}

static void run_case(MPI_File fh, const char *path, int f, int v, int m, int large, int round)
{
    char what[128];
    snprintf(what, sizeof what, "%s%s view %d mem %d", fam_name[f], large ? "_c" : "", v, m);
    int n = NBYTES;
    MPI_Datatype dt = MPI_BYTE, vec = MPI_DATATYPE_NULL;
    int count = n;
    if (m == 1) {
        MPI_Type_vector(n / 4, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        dt = vec;
        count = 1;
    }
    unsigned char *data = mtest_malloc((size_t)n), *mem = mtest_malloc(2 * (size_t)n + 8);
    MPI_Status st;
    MPI_Offset pos, offset = v == 0 ? (MPI_Offset)rank * NBYTES : 0;
    int rc, cnt;

    /* ---- write through MPI, check with pread */
    mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
    for (int k = 0; k < n; k++)
        data[k] = io_byte(rank, round, off_of(v, rank, k));
    memset(mem, 0xee, 2 * (size_t)n + 8);
    mem_put(m, mem, data, n);
    rc = do_rw(fh, f, 1, large, offset, mem, count, dt, &st);
    if (mtest_check_rc(what, rc)) {
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        mtest_check(cnt == n, "%s write: status counts %d bytes, expected %d", what, cnt, n);
        if (f >= F_IND && f <= F_IND_SPLIT) {
            MPI_File_get_position(fh, &pos);
            mtest_check(pos == offset + n, "%s write: position %lld, expected %lld", what,
                        (long long)pos, (long long)(offset + n));
        }
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long len, k, bad = 0;
        unsigned char *b = io_posix_read_all(path, &len);
        long long want = 0;
        for (int r = 0; r < size; r++) {
            int nr = n;
            long long e = off_of(v, r, nr - 1) + 1;
            if (e > want)
                want = e;
        }
        mtest_check(len == want, "%s write: file has %lld bytes, expected %lld", what, len, want);
        for (long long o = 0; o < len && bad < 3; o++) {
            int r = owner_of(v, o, &k);
            unsigned char exp = (k < n && r < size) ? io_byte(r, round, o) : 0;
            if (b[o] != exp) {
                mtest_fail("%s write: file byte %lld is 0x%02x, expected 0x%02x", what, o, b[o],
                           exp);
                bad++;
            }
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- the file rewritten with pwrite, read back through MPI */
    if (rank == 0) {
        long long len = 0;
        for (int r = 0; r < size; r++) {
            long long e = off_of(v, r, n - 1) + 1;
            if (e > len)
                len = e;
        }
        unsigned char *b = mtest_malloc((size_t)len);
        for (long long o = 0; o < len; o++) {
            long long k;
            int r = owner_of(v, o, &k);
            b[o] = io_byte(r, round + 1000, o);
        }
        io_posix_write(path, b, (size_t)len, 0);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(mem, 0xee, 2 * (size_t)n + 8);
    rc = do_rw(fh, f, 0, large, offset, mem, count, dt, &st);
    if (mtest_check_rc(what, rc)) {
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        mtest_check(cnt == n, "%s read: status counts %d bytes, expected %d", what, cnt, n);
        mem_get(m, mem, data, n);
        for (int k = 0; k < n; k++)
            if (data[k] != io_byte(rank, round + 1000, off_of(v, rank, k))) {
                mtest_fail("%s read: byte %d is 0x%02x, expected 0x%02x", what, k, data[k],
                           io_byte(rank, round + 1000, off_of(v, rank, k)));
                break;
            }
        if (m == 1)
            for (int k = 0; k < n / 4; k++)
                if (mem[k * 8 + 4] != 0xee) {
                    mtest_fail("%s read: the gap at int %d of the memory type was written", what,
                               2 * k + 1);
                    break;
                }
        if (f >= F_IND && f <= F_IND_SPLIT) {
            MPI_File_get_position(fh, &pos);
            mtest_check(pos == offset + n, "%s read: position %lld, expected %lld", what,
                        (long long)pos, (long long)(offset + n));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (vec != MPI_DATATYPE_NULL)
        MPI_Type_free(&vec);
    free(data);
    free(mem);
}

/* shared pointer: K records of R bytes per rank, each written / read exactly once */
#define K 5
#define R 24
static void record(unsigned char *p, int id)
{
    for (int i = 0; i < R; i++)
        p[i] = (unsigned char)(id * 7 + i * 13 + (id >> 8));
}

static void run_shared(MPI_File fh, const char *path, int nonblocking, int large)
{
    char what[64];
    snprintf(what, sizeof what, "%sshared%s", nonblocking ? "i" : "", large ? "_c" : "");
    unsigned char rec[R];
    MPI_Status st;
    MPI_Request req;
    int cnt;
    mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
    mtest_check_rc("seek_shared", MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int i = 0; i < K; i++) {
        record(rec, rank * K + i);
        int rc;
        if (nonblocking) {
            rc = large ? MPI_File_iwrite_shared_c(fh, rec, R, MPI_BYTE, &req)
                       : MPI_File_iwrite_shared(fh, rec, R, MPI_BYTE, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, &st);
        } else {
            rc = large ? MPI_File_write_shared_c(fh, rec, R, MPI_BYTE, &st)
                       : MPI_File_write_shared(fh, rec, R, MPI_BYTE, &st);
        }
        if (mtest_check_rc(what, rc)) {
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            mtest_check_int("shared write count", cnt, R);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    MPI_File_get_position_shared(fh, &pos);
    mtest_check(pos == (MPI_Offset)size * K * R, "%s: shared position %lld, expected %d", what,
                (long long)pos, size * K * R);
    if (rank == 0) {
        long long len;
        unsigned char *b = io_posix_read_all(path, &len);
        mtest_check(len == (long long)size * K * R, "%s: file has %lld bytes", what, len);
        int *seen = calloc((size_t)(size * K), sizeof *seen);
        for (long long o = 0; o + R <= len; o += R) {
            int found = -1;
            for (int id = 0; id < size * K && found < 0; id++) {
                record(rec, id);
                if (!memcmp(rec, b + o, R))
                    found = id;
            }
            if (found < 0)
                mtest_fail("%s: bytes %lld.. are no record (overlapping writes?)", what, o);
            else
                seen[found]++;
        }
        for (int id = 0; id < size * K; id++)
            mtest_check(seen[id] == 1, "%s: record %d written %d times", what, id, seen[id]);
        free(seen);
        free(b);
    }
    /* read them back with the shared pointer: every record once over all ranks */
    mtest_check_rc("seek_shared", MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int mine[K];
    for (int i = 0; i < K; i++) {
        int rc;
        if (nonblocking) {
            rc = large ? MPI_File_iread_shared_c(fh, rec, R, MPI_BYTE, &req)
                       : MPI_File_iread_shared(fh, rec, R, MPI_BYTE, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, &st);
        } else {
            rc = large ? MPI_File_read_shared_c(fh, rec, R, MPI_BYTE, &st)
                       : MPI_File_read_shared(fh, rec, R, MPI_BYTE, &st);
        }
        mine[i] = -1;
        if (mtest_check_rc(what, rc)) {
            unsigned char r2[R];
            for (int id = 0; id < size * K; id++) {
                record(r2, id);
                if (!memcmp(r2, rec, R))
                    mine[i] = id;
            }
        }
    }
    int *all = mtest_malloc((size_t)(size * K) * sizeof *all);
    MPI_Allgather(mine, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD);
    if (rank == 0) {
        int *seen = calloc((size_t)(size * K), sizeof *seen);
        for (int i = 0; i < size * K; i++)
            if (all[i] >= 0)
                seen[all[i]]++;
        for (int id = 0; id < size * K; id++)
            mtest_check(seen[id] == 1, "%s: record %d read %d times", what, id, seen[id]);
        free(seen);
    }
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("access.dat");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "8192");
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (!mtest_check_rc("MPI_File_open", rc)) {
        io_tmpdir_remove();
        return mtest_finalize();
    }
    MPI_Datatype ftype;
    MPI_Type_create_resized(MPI_BYTE, 0, 1, &ftype);
    MPI_Datatype blk, inter;
    MPI_Type_contiguous(BLK, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)BLK * size, &inter);
    MPI_Type_commit(&inter);
    MPI_Type_free(&blk);
    MPI_Type_free(&ftype);
    int round = 0;
    for (int v = 0; v < 2; v++) {
        if (v == 0)
            MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        else
            MPI_File_set_view(fh, (MPI_Offset)rank * BLK, MPI_BYTE, inter, "native", MPI_INFO_NULL);
        for (int f = 0; f < F_NFAM; f++) {
            if ((f == F_ORD || f == F_ORD_SPLIT) && v != 0)
                continue;
            for (int m = 0; m < 2; m++)
                for (int large = 0; large < 2; large++)
                    run_case(fh, path, f, v, m, large, ++round);
        }
    }
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    for (int nb = 0; nb < 2; nb++)
        for (int large = 0; large < 2; large++)
            run_shared(fh, path, nb, large);
    MPI_Type_free(&inter);
    mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
    io_tmpdir_remove();
    return mtest_finalize();
}
