/*
 * io_views: file views with derived filetypes, checked byte by byte against
 * POSIX reads and writes.
 *
 * Each case gives every rank a filetype (vector, indexed, hindexed with
 * zero-length blocks, struct of int/double/chars, 2-D subarray, 2-D darray
 * block-cyclic) so that the ranks' types tile the file without holes or
 * overlaps. The test builds its own map of where each byte of a rank's data
 * stream lands (from the constructor arguments, not from MPI), then:
 *   - every rank writes two tiles of data through its view; pread must find
 *     at every file offset the byte the map says;
 *   - the file is rewritten with pwrite and every rank reads its two tiles
 *     through the view.
 * Each case runs with the access collective (two-phase), collective with
 * romio_cb_write/read=disable (every rank on its own), and independent with
 * data sieving forced on and off.
 */
#include "io_util.h"

static int rank, size;

typedef struct tcase {
    const char *name;
    MPI_Datatype etype, ftype;
    MPI_Offset disp;
    long long E;   /* tile extent in bytes */
    long long S;   /* data bytes of my tile */
    long long *bm; /* S entries: offset of stream byte k inside the tile, from disp */
} tcase;

static void bm_add(tcase *c, long long off, long long len)
{
    c->bm = realloc(c->bm, (size_t)(c->S + len) * sizeof *c->bm);
    for (long long i = 0; i < len; i++)
        c->bm[c->S++] = off + i;
}

static long long map(const tcase *c, long long k)
{
    return c->disp + (k / c->S) * c->E + c->bm[k % c->S];
}

/* ---- the cases ------------------------------------------------------------------------- */

static void case_vector(tcase *c)
{
    int nb = 20, bl = 3, stride = bl * size;
    MPI_Datatype v;
    MPI_Type_vector(nb, bl, stride, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)nb * stride * 4, &c->ftype);
    MPI_Type_free(&v);
    c->name = "vector";
    c->etype = MPI_INT;
    c->disp = (MPI_Offset)rank * bl * 4;
    c->E = (long long)nb * stride * 4;
    for (int j = 0; j < nb; j++)
        bm_add(c, (long long)j * stride * 4, bl * 4);
}

static void case_indexed(tcase *c, int bytes)
{
    int J = 6 * size + 3, n = 0, pos = 0;
    int *bl = malloc((size_t)J * sizeof *bl), *dp = malloc((size_t)J * sizeof *dp);
    MPI_Aint *hd = malloc((size_t)J * sizeof *hd);
    for (int j = 0; j < J; j++) {
        /* hindexed: every fifth block of a rank is empty (zero length) */
        int len = bytes && (j / size) % 5 == 2 ? 0 : 1 + (j * 7) % 5;
        if (j % size == rank) {
            bl[n] = bytes ? len * 4 : len;
            dp[n] = pos;
            hd[n] = (MPI_Aint)pos * 4;
            if (len)
                bm_add(c, (long long)pos * 4, (long long)len * 4);
            n++;
        }
        pos += len;
    }
    MPI_Datatype t;
    if (bytes) {
        MPI_Type_create_hindexed(n, bl, hd, MPI_BYTE, &t);
        c->name = "hindexed";
        c->etype = MPI_BYTE;
    } else {
        MPI_Type_indexed(n, bl, dp, MPI_INT, &t);
        c->name = "indexed";
        c->etype = MPI_INT;
    }
    MPI_Type_create_resized(t, 0, (MPI_Aint)pos * 4, &c->ftype);
    MPI_Type_free(&t);
    c->disp = 0;
    c->E = (long long)pos * 4;
    free(bl);
    free(dp);
    free(hd);
}

static void case_struct(tcase *c)
{
    int bl[3] = {1, 1, 3};
    MPI_Aint d[3] = {(MPI_Aint)rank * 4, (MPI_Aint)size * 4 + rank * 8,
                     (MPI_Aint)size * 12 + rank * 3};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t;
    MPI_Type_create_struct(3, bl, d, ty, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)size * 15, &c->ftype);
    MPI_Type_free(&t);
    c->name = "struct";
    c->etype = MPI_BYTE;
    c->disp = 0;
    c->E = (long long)size * 15;
    bm_add(c, d[0], 4);
    bm_add(c, d[1], 8);
    bm_add(c, d[2], 3);
}

static void grid(int *p0, int *p1)
{
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    *p0 = dims[0];
    *p1 = dims[1];
}

static void case_subarray(tcase *c)
{
    int p0, p1;
    grid(&p0, &p1);
    int G[2] = {4 * p0 + 1, 3 * p1 + 2}, c0 = rank / p1, c1 = rank % p1;
    int s0 = c0 * G[0] / p0, e0 = (c0 + 1) * G[0] / p0, s1 = c1 * G[1] / p1,
        e1 = (c1 + 1) * G[1] / p1;
    int sub[2] = {e0 - s0, e1 - s1}, st[2] = {s0, s1};
    MPI_Type_create_subarray(2, G, sub, st, MPI_ORDER_C, MPI_DOUBLE, &c->ftype);
    c->name = "subarray";
    c->etype = MPI_DOUBLE;
    c->disp = 0;
    c->E = (long long)G[0] * G[1] * 8;
    for (int i = s0; i < e0; i++)
        bm_add(c, ((long long)i * G[1] + s1) * 8, (long long)(e1 - s1) * 8);
}

static void case_darray(tcase *c)
{
    int p0, p1;
    grid(&p0, &p1);
    int G[2] = {9, 10}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {p0, p1};
    MPI_Type_create_darray(size, rank, 2, G, dist, darg, ps, MPI_ORDER_C, MPI_INT, &c->ftype);
    c->name = "darray";
    c->etype = MPI_INT;
    c->disp = 0;
    c->E = (long long)G[0] * G[1] * 4;
    int b1 = (G[1] + p1 - 1) / p1;
    for (int i = 0; i < G[0]; i++)
        for (int j = 0; j < G[1]; j++) {
            int owner = ((i / 2) % p0) * p1 + j / b1;
            if (owner == rank)
                bm_add(c, ((long long)i * G[1] + j) * 4, 4);
        }
}

/* ---- running one --------------------------------------------------------------------------- */

enum { M_COLL, M_COLL_NOCB, M_IND_DS, M_IND_NODS, M_NMODES };
static const char *mode_name[] = {"collective", "collective cb=disable", "independent ds=enable",
                                  "independent ds=disable"};

static void set_hints(MPI_File fh, int mode)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", mode == M_COLL_NOCB ? "disable" : "automatic");
    MPI_Info_set(info, "romio_cb_read", mode == M_COLL_NOCB ? "disable" : "automatic");
    MPI_Info_set(info, "romio_ds_write", mode == M_IND_NODS ? "disable" : "enable");
    MPI_Info_set(info, "romio_ds_read", mode == M_IND_NODS ? "disable" : "enable");
    MPI_Info_set(info, "cb_buffer_size", "1024");
    MPI_File_set_info(fh, info);
    MPI_Info_free(&info);
}

static void run(MPI_File fh, const char *path, tcase *c, int mode, int round)
{
    char what[128];
    snprintf(what, sizeof what, "%s, %s", c->name, mode_name[mode]);
    int esz;
    MPI_Type_size(c->etype, &esz);
    long long nbytes = 2 * c->S; /* two tiles */
    int count = (int)(nbytes / esz);
    unsigned char *buf = mtest_malloc((size_t)nbytes);
    MPI_Status st;
    int rc;

    /* the map must agree with what MPI says about the type */
    int tsize;
    MPI_Aint lb, ext;
    MPI_Type_size(c->ftype, &tsize);
    MPI_Type_get_extent(c->ftype, &lb, &ext);
    mtest_check(tsize == c->S && ext == c->E,
                "%s: filetype size %d extent %ld, the test's map "
                "says %lld and %lld",
                what, tsize, (long)ext, c->S, c->E);

    mtest_check_rc("set_size", MPI_File_set_size(fh, 0));
    set_hints(fh, mode);
    mtest_check_rc("set_view",
                   MPI_File_set_view(fh, c->disp, c->etype, c->ftype, "native", MPI_INFO_NULL));
    for (long long k = 0; k < nbytes; k++)
        buf[k] = io_byte(0, round, map(c, k));
    if (mode == M_COLL || mode == M_COLL_NOCB)
        rc = MPI_File_write_all(fh, buf, count, c->etype, &st);
    else
        rc = MPI_File_write_at(fh, 0, buf, count, c->etype, &st);
    mtest_check_rc(what, rc);
    MPI_Barrier(MPI_COMM_WORLD);
    long long total = 0, mine = 0;
    for (long long k = 0; k < nbytes; k++)
        if (map(c, k) + 1 > mine)
            mine = map(c, k) + 1;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        long long len;
        unsigned char *b = io_posix_read_all(path, &len);
        mtest_check(len == total, "%s: file has %lld bytes, expected %lld", what, len, total);
        for (long long o = 0; o < len; o++)
            if (b[o] != io_byte(0, round, o)) {
                mtest_fail("%s: after the write, file byte %lld is 0x%02x, expected 0x%02x", what,
                           o, b[o], io_byte(0, round, o));
                break;
            }
        /* rewrite it for the read */
        for (long long o = 0; o < len; o++)
            b[o] = io_byte(1, round, o);
        io_posix_write(path, b, (size_t)len, 0);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(buf, 0, (size_t)nbytes);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    if (mode == M_COLL || mode == M_COLL_NOCB)
        mtest_check(pos == count, "%s: individual pointer at %lld after the write, expected %d",
                    what, (long long)pos, count);
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    if (mode == M_COLL || mode == M_COLL_NOCB)
        rc = MPI_File_read_all(fh, buf, count, c->etype, &st);
    else
        rc = MPI_File_read_at(fh, 0, buf, count, c->etype, &st);
    if (mtest_check_rc(what, rc)) {
        int cnt;
        MPI_Get_count(&st, c->etype, &cnt);
        mtest_check(cnt == count, "%s: read %d elements, expected %d", what, cnt, count);
        for (long long k = 0; k < nbytes; k++)
            if (buf[k] != io_byte(1, round, map(c, k))) {
                mtest_fail("%s: read byte %lld (file offset %lld) is 0x%02x, expected 0x%02x", what,
                           k, map(c, k), buf[k], io_byte(1, round, map(c, k)));
                break;
            }
    }
    /* reading past the end: the third tile is not there, the count says so */
    if (rank == 0 && mode == M_IND_DS) {
        unsigned char *big = mtest_malloc((size_t)(3 * c->S));
        rc = MPI_File_read_at(fh, 0, big, (int)(3 * c->S / esz), c->etype, &st);
        if (mtest_check_rc(what, rc)) {
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            /* stream bytes below the end of the file */
            long long want = 0;
            for (long long k = 0; k < 3 * c->S; k++)
                if (map(c, k) < total)
                    want++;
            mtest_check(cnt == want,
                        "%s: reading 3 tiles of a 2-tile file gave %d bytes, "
                        "expected %lld",
                        what, cnt, want);
        }
        free(big);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
}

/* A read-only view may overlap itself: ints {0,1,2} and {1} per tile of 12
 * bytes read back as 0 1 2 1 3 4 5 4 ... (independent and collective). */
static void overlap_read_only(const char *path)
{
    MPI_File fh;
    int ints[64], got[16], bl[2] = {3, 1}, dp[2] = {0, 1};
    for (int i = 0; i < 64; i++)
        ints[i] = 1000 + i;
    if (rank == 0)
        io_posix_write(path, ints, sizeof ints, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!mtest_check_rc("open RDONLY",
                        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        return;
    MPI_Datatype t;
    MPI_Type_indexed(2, bl, dp, MPI_INT, &t);
    MPI_Type_commit(&t);
    mtest_check_rc("set_view with an overlapping filetype (read-only)",
                   MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL));
    for (int coll = 0; coll < 2; coll++) {
        MPI_Status st;
        memset(got, 0, sizeof got);
        int rc = coll ? MPI_File_read_at_all(fh, 4, got, 16, MPI_INT, &st)
                      : MPI_File_read_at(fh, 4, got, 16, MPI_INT, &st);
        if (!mtest_check_rc("read through an overlapping view", rc))
            continue;
        for (int k = 0; k < 16; k++) {
            int e = k + 4, tile = e / 4, in = e % 4;
            int want = 1000 + tile * 3 + (in < 3 ? in : 1);
            if (got[k] != want) {
                mtest_fail("overlapping view (%s): int %d is %d, expected %d",
                           coll ? "collective" : "independent", k, got[k], want);
                break;
            }
        }
    }
    MPI_Type_free(&t);
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("views.dat");
    MPI_File fh;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (mtest_check_rc("MPI_File_open", rc)) {
        int round = 0;
        for (int k = 0; k < 6; k++) {
            tcase c;
            memset(&c, 0, sizeof c);
            switch (k) {
            case 0:
                case_vector(&c);
                break;
            case 1:
                case_indexed(&c, 0);
                break;
            case 2:
                case_indexed(&c, 1);
                break;
            case 3:
                case_struct(&c);
                break;
            case 4:
                case_subarray(&c);
                break;
            case 5:
                case_darray(&c);
                break;
            }
            MPI_Type_commit(&c.ftype);
            for (int mode = 0; mode < M_NMODES; mode++)
                run(fh, path, &c, mode, ++round);
            MPI_Type_free(&c.ftype);
            free(c.bm);
        }
        mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
        overlap_read_only(io_path("overlap.dat"));
    }
    io_tmpdir_remove();
    return mtest_finalize();
}
