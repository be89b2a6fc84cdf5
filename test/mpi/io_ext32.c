/*
 * io_ext32: the "external32" data representation, checked against files
 * encoded and decoded by hand (big-endian, MPI 4.1 Table 13.2 sizes: long is
 * 4 bytes there).
 *
 *  - records {int, double, short, long, long long, float} (a struct
 *    datatype with padding in memory, 30 bytes each in the file) written by
 *    every rank with write_at_all (two-phase) and write_at (independent):
 *    pread must find the big-endian bytes, no padding;
 *  - a file written with pwrite in big-endian read back with read_at_all and
 *    read_at: the values come back, negative longs sign-extended;
 *  - a view with etype = filetype = MPI_LONG (4 bytes in the file):
 *    offsets count 4-byte longs; MPI_File_get_type_extent says 4;
 *  - the same record written through a "native" view has the memory layout.
 *  - a non-contiguous filetype of MPI_LONG, whose external32 layout would
 *    differ from its native one, is refused with MPI_ERR_UNSUPPORTED_DATAREP.
 */
#include "io_util.h"

typedef struct rec {
    int a;
    double b;
    short c;
    long d;
    long long e;
    float f;
} rec;
#define RECB 30 /* bytes of one record in external32 */
#define N    37

static int rank, size;

static void be_put(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static uint64_t be_get(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static void rec_make(rec *r, long long g, int salt)
{
    memset(r, 0, sizeof *r);
    r->a = (int)(g * 1000 - 7 + salt);
    r->b = (double)g + 0.25 + salt;
    r->c = (short)(-g - salt);
    r->d = -(long)(g * 3 + 1 + salt);
    r->e = g * (1LL << 40) + 5 + salt;
    r->f = (float)g * 0.5f + (float)salt;
}

static void rec_encode(unsigned char *p, const rec *r)
{
    uint64_t u;
    uint32_t w;
    be_put(p, (uint32_t)r->a, 4);
    memcpy(&u, &r->b, 8);
    be_put(p + 4, u, 8);
    be_put(p + 12, (uint16_t)r->c, 2);
    be_put(p + 14, (uint32_t)(int32_t)r->d, 4);
    be_put(p + 18, (uint64_t)r->e, 8);
    memcpy(&w, &r->f, 4);
    be_put(p + 26, w, 4);
}

static int rec_same(const rec *x, const rec *y)
{
    return x->a == y->a && x->b == y->b && x->c == y->c && x->d == y->d && x->e == y->e &&
           x->f == y->f;
}

static MPI_Datatype rec_type(void)
{
    int bl[6] = {1, 1, 1, 1, 1, 1};
    MPI_Aint d[6] = {offsetof(rec, a), offsetof(rec, b), offsetof(rec, c),
                     offsetof(rec, d), offsetof(rec, e), offsetof(rec, f)};
    MPI_Datatype ty[6] = {MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_LONG, MPI_LONG_LONG, MPI_FLOAT}, t, r;
    MPI_Type_create_struct(6, bl, d, ty, &t);
    MPI_Type_create_resized(t, 0, sizeof(rec), &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

static void records(MPI_File fh, const char *path, MPI_Datatype rt, int coll, int round)
{
    const char *what = coll ? "external32 records, collective" : "external32 records, independent";
    rec *r = mtest_malloc(N * sizeof *r);
    MPI_Status st;
    int cnt;
    mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
    mtest_check_rc("set_view", MPI_File_set_view(fh, (MPI_Offset)rank * N * RECB, MPI_BYTE,
                                                 MPI_BYTE, "external32", MPI_INFO_NULL));
    for (int i = 0; i < N; i++)
        rec_make(&r[i], (long long)rank * N + i, round);
    int rc = coll ? MPI_File_write_at_all(fh, 0, r, N, rt, &st)
                  : MPI_File_write_at(fh, 0, r, N, rt, &st);
    if (mtest_check_rc(what, rc)) {
        MPI_Get_count(&st, rt, &cnt);
        mtest_check_int("records written", cnt, N);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long len;
        unsigned char *b = io_posix_read_all(path, &len), want[RECB];
        mtest_check(len == (long long)size * N * RECB, "%s: file of %lld bytes, expected %d", what,
                    len, size * N * RECB);
        for (long long g = 0; g < (long long)size * N && (g + 1) * RECB <= len; g++) {
            rec x;
            rec_make(&x, g, round);
            rec_encode(want, &x);
            if (memcmp(want, b + g * RECB, RECB)) {
                mtest_fail("%s: record %lld in the file is not the big-endian encoding", what, g);
                break;
            }
        }
        /* new contents for the read, encoded by hand */
        for (long long g = 0; g < (long long)size * N; g++) {
            rec x;
            rec_make(&x, g, round + 100);
            rec_encode(b + g * RECB, &x);
        }
        io_posix_write(path, b, (size_t)size * N * RECB, 0);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(r, 0, N * sizeof *r);
    rc = coll ? MPI_File_read_at_all(fh, 0, r, N, rt, &st) : MPI_File_read_at(fh, 0, r, N, rt, &st);
    if (mtest_check_rc(what, rc)) {
        MPI_Get_count(&st, rt, &cnt);
        mtest_check_int("records read", cnt, N);
        for (int i = 0; i < N; i++) {
            rec x;
            rec_make(&x, (long long)rank * N + i, round + 100);
            if (!rec_same(&x, &r[i])) {
                mtest_fail("%s: record %d read back as {%d %g %d %ld %lld %g}, expected {%d %g %d "
                           "%ld %lld %g}",
                           what, i, r[i].a, r[i].b, r[i].c, r[i].d, r[i].e, (double)r[i].f, x.a,
                           x.b, x.c, x.d, x.e, (double)x.f);
                break;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(r);
}

/* etype = filetype = MPI_LONG: 4-byte elements in the file */
static void longs(MPI_File fh, const char *path)
{
    const char *what = "external32 MPI_LONG view";
    long v[N];
    MPI_Status st;
    MPI_Aint ext = 0;
    mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
    mtest_check_rc("set_view",
                   MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_File_get_type_extent(fh, MPI_LONG, &ext);
    mtest_check(ext == 4, "%s: MPI_File_get_type_extent(MPI_LONG) = %ld, expected 4", what,
                (long)ext);
    for (int i = 0; i < N; i++)
        v[i] = (i % 2 ? -1L : 1L) * (rank * 100000L + i);
    mtest_check_rc(what, MPI_File_write_at_all(fh, (MPI_Offset)rank * N, v, N, MPI_LONG, &st));
    MPI_Offset byte;
    MPI_File_get_byte_offset(fh, (MPI_Offset)rank * N + 1, &byte);
    mtest_check(byte == ((MPI_Offset)rank * N + 1) * 4, "%s: byte offset %lld, expected %lld", what,
                (long long)byte, ((long long)rank * N + 1) * 4);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long len;
        unsigned char *b = io_posix_read_all(path, &len);
        mtest_check(len == (long long)size * N * 4, "%s: file of %lld bytes", what, len);
        for (int r = 0; r < size && (r + 1) * N * 4 <= len; r++)
            for (int i = 0; i < N; i++) {
                long want = (i % 2 ? -1L : 1L) * (r * 100000L + i);
                int32_t got = (int32_t)be_get(b + (r * N + i) * 4, 4);
                if (got != want) {
                    mtest_fail("%s: long %d of rank %d is %d in the file, expected %ld", what, i, r,
                               got, want);
                    r = size;
                    break;
                }
            }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(v, 0, sizeof v);
    int other = (rank + 1) % size;
    mtest_check_rc(what, MPI_File_read_at(fh, (MPI_Offset)other * N, v, N, MPI_LONG, &st));
    for (int i = 0; i < N; i++)
        if (v[i] != (i % 2 ? -1L : 1L) * (other * 100000L + i)) {
            mtest_fail("%s: read long %d = %ld, expected %ld", what, i, v[i],
                       (i % 2 ? -1L : 1L) * (other * 100000L + i));
            break;
        }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void native_layout(MPI_File fh, const char *path, MPI_Datatype rt)
{
    rec x;
    MPI_Status st;
    mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
    mtest_check_rc("set_view",
                   MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    rec_make(&x, rank, 3);
    int tsize;
    MPI_Type_size(rt, &tsize);
    mtest_check_rc("native write", MPI_File_write_at(fh, (MPI_Offset)rank * tsize, &x, 1, rt, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long len;
        unsigned char *b = io_posix_read_all(path, &len);
        rec y;
        rec_make(&y, 0, 3);
        mtest_check(len == (long long)size * tsize && !memcmp(b, &y.a, 4) &&
                        !memcmp(b + 4, &y.b, 8),
                    "native view: the file does not hold the memory bytes");
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("ext32.dat");
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable"); /* aggregate even what does not interleave */
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "cb_buffer_size", "100"); /* windows cut records */
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (mtest_check_rc("MPI_File_open", rc)) {
        MPI_Datatype rt = rec_type();
        records(fh, path, rt, 1, 1);
        records(fh, path, rt, 0, 2);
        longs(fh, path);
        native_layout(fh, path, rt);
        /* refused layout */
        MPI_Datatype vl;
        MPI_Type_vector(3, 1, 2, MPI_LONG, &vl);
        MPI_Type_commit(&vl);
        rc = MPI_File_set_view(fh, 0, MPI_LONG, vl, "external32", MPI_INFO_NULL);
        mtest_check_class("set_view external32 with a strided MPI_LONG filetype", rc,
                          MPI_ERR_UNSUPPORTED_DATAREP);
        MPI_Type_free(&vl);
        MPI_Type_free(&rt);
        mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
    }
    io_tmpdir_remove();
    return mtest_finalize();
}
