/*
 * io_shared: shared file pointers under concurrency, ordered access, and the
 * pointer rules of open (MPI_MODE_APPEND), views and MPI_MODE_SEQUENTIAL.
 *
 *  - every rank appends 200 records of its own size (rank-dependent, so
 *    records do not line up) with write_shared / iwrite_shared, as fast as
 *    it can: the file must be exactly the concatenation of all records, each
 *    complete and present once (parsed back with pread), and the shared
 *    position must be the total;
 *  - write_ordered with different counts per rank (some zero) must lay the
 *    ranks' data out in rank order after the current shared position;
 *    read_ordered gets it back;
 *  - seek_shared with SEEK_SET / SEEK_CUR / SEEK_END, get_position_shared;
 *  - set_view resets the shared pointer; MPI_MODE_APPEND starts both
 *    pointers at the end; MPI_MODE_SEQUENTIAL allows shared access only.
 */
#include "io_util.h"

#define NREC 200

static int rank, size;

/* record: [len:2][rank:1][seq:2][payload ...], total len bytes */
static int rec_len(int r, int i) { return 5 + (r * 7 + i * 3) % 29; }

static void rec_fill(unsigned char *p, int r, int i)
{
    int len = rec_len(r, i);
    p[0] = (unsigned char)len;
    p[1] = (unsigned char)(len >> 8);
    p[2] = (unsigned char)r;
    p[3] = (unsigned char)i;
    p[4] = (unsigned char)(i >> 8);
    for (int k = 5; k < len; k++)
        p[k] = (unsigned char)(r * 31 + i * 17 + k);
}

static void concurrent_appends(MPI_File fh, const char *path)
{
    unsigned char rec[64];
    MPI_Status st;
    long long mine = 0, total = 0;
    mtest_check_rc("seek_shared", MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int i = 0; i < NREC; i++) {
        rec_fill(rec, rank, i);
        int rc;
        if (i % 3 == 1) {
            MPI_Request req;
            rc = MPI_File_iwrite_shared(fh, rec, rec_len(rank, i), MPI_BYTE, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, &st);
        } else {
            rc = MPI_File_write_shared(fh, rec, rec_len(rank, i), MPI_BYTE, &st);
        }
        if (!mtest_check_rc("write_shared", rc))
            break;
        mine += rec_len(rank, i);
    }
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Offset pos;
    MPI_File_get_position_shared(fh, &pos);
    mtest_check(pos == total, "after the appends the shared position is %lld, expected %lld",
                (long long)pos, total);
    if (rank == 0) {
        long long len, o = 0;
        unsigned char *b = io_posix_read_all(path, &len), want[64];
        mtest_check(len == total, "appends: file of %lld bytes, expected %lld", len, total);
        int *next = calloc((size_t)size, sizeof *next); /* records of a rank appear in order */
        int n = 0;
        while (o + 5 <= len) {
            int l = b[o] | b[o + 1] << 8, r = b[o + 2], i = b[o + 3] | b[o + 4] << 8;
            if (r >= size || i >= NREC || l != rec_len(r, i) || o + l > len) {
                mtest_fail("appends: no record at offset %lld (overlapping or torn writes)", o);
                break;
            }
            rec_fill(want, r, i);
            if (memcmp(want, b + o, (size_t)l)) {
                mtest_fail("appends: record %d of rank %d at %lld is damaged", i, r, o);
                break;
            }
            mtest_check(i == next[r], "appends: record %d of rank %d came before %d", i, r,
                        next[r]);
            next[r] = i + 1;
            o += l;
            n++;
        }
        mtest_check(n == size * NREC, "appends: %d records in the file, expected %d", n,
                    size * NREC);
        free(next);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void ordered(MPI_File fh, const char *path)
{
    MPI_Status st;
    int cnt[8], base = 1000;
    for (int r = 0; r < size; r++)
        cnt[r % 8] = (r % 3 == 1) ? 0 : 10 + 13 * r; /* ints; some ranks write nothing */
    mtest_check_rc("seek_shared", MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
    int n = cnt[rank % 8];
    int *v = mtest_malloc((size_t)(n + 1) * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = rank * 100000 + i;
    mtest_check_rc("write_ordered", MPI_File_write_ordered(fh, v, n, MPI_INT, &st));
    MPI_Offset pos;
    MPI_File_get_position_shared(fh, &pos);
    long long total = 0;
    for (int r = 0; r < size; r++)
        total += cnt[r % 8];
    mtest_check(pos == base + 4 * total, "write_ordered: shared position %lld, expected %lld",
                (long long)pos, base + 4 * total);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long len;
        unsigned char *b = io_posix_read_all(path, &len);
        long long o;
        /* the view is bytes: data of rank r starts at base + 4 * (counts before r) */
        o = base;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt[r % 8]; i++, o += 4) {
                int x = -1;
                if (o + 4 <= len)
                    memcpy(&x, b + o, 4);
                if (x != r * 100000 + i) {
                    mtest_fail("write_ordered: int %d of rank %d is %d at offset %lld", i, r, x, o);
                    r = size;
                    break;
                }
            }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* read it back in the same order */
    mtest_check_rc("seek_shared", MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
    memset(v, 0, (size_t)(n + 1) * sizeof *v);
    mtest_check_rc("read_ordered", MPI_File_read_ordered(fh, v, n, MPI_INT, &st));
    int got;
    MPI_Get_count(&st, MPI_INT, &got);
    mtest_check_int("read_ordered count", got, n);
    for (int i = 0; i < n; i++)
        if (v[i] != rank * 100000 + i) {
            mtest_fail("read_ordered: int %d is %d", i, v[i]);
            break;
        }
    free(v);
}

static void seeks(MPI_File fh)
{
    MPI_Offset pos, size_b;
    MPI_File_get_size(fh, &size_b);
    mtest_check_rc("seek_shared set", MPI_File_seek_shared(fh, 10, MPI_SEEK_SET));
    MPI_File_get_position_shared(fh, &pos);
    mtest_check_int("shared position after SEEK_SET 10", pos, 10);
    mtest_check_rc("seek_shared cur", MPI_File_seek_shared(fh, 5, MPI_SEEK_CUR));
    MPI_File_get_position_shared(fh, &pos);
    mtest_check_int("shared position after SEEK_CUR 5", pos, 15);
    mtest_check_rc("seek_shared end", MPI_File_seek_shared(fh, -3, MPI_SEEK_END));
    MPI_File_get_position_shared(fh, &pos);
    mtest_check_int("shared position after SEEK_END -3", pos, size_b - 3);
    /* a view change resets it */
    mtest_check_rc("set_view", MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_File_get_position_shared(fh, &pos);
    mtest_check_int("shared position after set_view", pos, 0);
    /* SEEK_END in a view of ints counts ints (rounded up) */
    mtest_check_rc("seek_shared end", MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    MPI_File_get_position_shared(fh, &pos);
    mtest_check_int("shared position at the end in ints", pos, (size_b + 3) / 4);
    mtest_check_rc("set_view",
                   MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

static void append_and_sequential(const char *path)
{
    MPI_File fh;
    MPI_Offset fsize = io_posix_size(path), pos;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh);
    if (!mtest_check_rc("open APPEND", rc))
        return;
    MPI_File_get_position(fh, &pos);
    mtest_check_int("APPEND: individual pointer", pos, fsize);
    MPI_File_get_position_shared(fh, &pos);
    mtest_check_int("APPEND: shared pointer", pos, fsize);
    MPI_File_close(&fh);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                       &fh);
    if (!mtest_check_rc("open SEQUENTIAL", rc))
        return;
    char c[4];
    MPI_Status st;
    rc = MPI_File_read_at(fh, 0, c, 1, MPI_BYTE, &st);
    mtest_check_class("read_at on a MPI_MODE_SEQUENTIAL file", rc, MPI_ERR_UNSUPPORTED_OPERATION);
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    mtest_check_class("seek on a MPI_MODE_SEQUENTIAL file", rc, MPI_ERR_UNSUPPORTED_OPERATION);
    mtest_check_rc("read_ordered on a MPI_MODE_SEQUENTIAL file",
                   MPI_File_read_ordered(fh, c, 4, MPI_BYTE, &st));
    /* MPI_DISPLACEMENT_CURRENT: the view starts where the shared pointer is */
    mtest_check_rc("set_view MPI_DISPLACEMENT_CURRENT",
                   MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_BYTE, MPI_BYTE, "native",
                                     MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    mtest_check_int("MPI_DISPLACEMENT_CURRENT view displacement", disp, 4 * size);
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("shared.dat");
    MPI_File fh;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (mtest_check_rc("MPI_File_open", rc)) {
        concurrent_appends(fh, path);
        mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
        ordered(fh, path);
        seeks(fh);
        mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
        append_and_sequential(path);
    }
    io_tmpdir_remove();
    return mtest_finalize();
}
