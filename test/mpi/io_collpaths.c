/*
 * io_collpaths: collective access in which the ranks' own cases differ, so that one rank could
 * take a path without the exchange the others make. Every rank must make the same collective
 * calls whatever its view, hints or access (before, the rank whose case differed did its part
 * alone and returned, and the others waited for it in the exchange forever: PnetCDF's examples
 * column_wise, block_cyclic, transpose, ... hung at 2 and 4 ranks).
 *
 * The file holds P * N ints from byte HDR; rank r owns ints k P + r (k < N) and writes
 * 1000 round + 100 r + k there. Three layouts, each written and read back with the explicit
 * offset collectives, blocking, nonblocking and split:
 *   - pnetcdf: rank 0's filetype is PnetCDF's for rank 0: the header bytes and its ints in one
 *     hindexed type whose extent is shorter than its data (its tiles interleave, so the view is
 *     not monotone), accessed at offset HDR, within the first tile; the others have a vector;
 *   - unordered: rank 0 accesses two interleaving tiles, so its stream runs out of file order
 *     (its ints 0, 2, 1, 3);
 *   - hints: rank 0 has romio_cb_write / romio_cb_read = disable, the others enable;
 *   - sizes: rank 0 has cb_buffer_size 8 and cb_nodes 2, the others the defaults (16 MiB,
 *     one per node): the exchange must use the same windows and aggregators everywhere.
 * The file is checked with POSIX reads after each write, the data read back against it.
 * Last, MPI_File_set_view refused on rank 0 alone (its filetype overlaps itself in a file open
 * for writing): every rank returns MPI_ERR_IO and keeps its view, and a collective write
 * through it works (before, rank 0 returned and the others waited in the view's barrier).
 */
#include "io_util.h"

#define HDR 64 /* bytes before the ints */
#define N   4  /* ints per rank */

enum layout { PNETCDF, UNORDERED, HINTS, SIZES, NLAYOUT };
static const char *const layout_name[NLAYOUT] = {"pnetcdf", "unordered", "hints", "sizes"};
enum mode { BLOCKING, NONBLOCKING, SPLIT, NMODE };
static const char *const mode_name[NMODE] = {"blocking", "nonblocking", "split"};

static int value(int round, int r, int k) { return 1000 * round + 100 * r + k; }

/* the view of this rank for layout l; *offset: where its access starts (etypes), *order: the
 * int index k of each element of its access, in stream order */
static void set_view(MPI_File fh, enum layout l, int rank, int size, MPI_Offset *offset,
                     int order[N])
{
    MPI_Datatype t, ft;
    MPI_Info info = MPI_INFO_NULL;
    for (int i = 0; i < N; i++)
        order[i] = i;
    *offset = 0;
    if (l == PNETCDF && rank == 0) {
        /* bytes [0, HDR), then its ints; extent: one row of P ints */
        int lens[N + 1];
        MPI_Aint displs[N + 1];
        lens[0] = HDR;
        displs[0] = 0;
        for (int k = 0; k < N; k++) {
            lens[k + 1] = (int)sizeof(int);
            displs[k + 1] = HDR + (MPI_Aint)(k * size) * (MPI_Aint)sizeof(int);
        }
        MPI_Type_create_hindexed(N + 1, lens, displs, MPI_BYTE, &t);
        MPI_Type_create_resized(t, HDR, (MPI_Aint)(size * sizeof(int)), &ft);
        MPI_Type_commit(&ft);
        mtest_check_rc("MPI_File_set_view (pnetcdf rank 0)",
                       MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        *offset = HDR;
    } else if (l == UNORDERED && rank == 0) {
        /* ints k and k + 2 in tile k (tiles one int apart): the stream is ints 0, 2, 1, 3 */
        MPI_Aint displs[2] = {0, (MPI_Aint)(2 * size * sizeof(int))};
        MPI_Type_create_hindexed_block(2, 1, displs, MPI_INT, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint)(size * sizeof(int)), &ft);
        MPI_Type_commit(&ft);
        mtest_check_rc("MPI_File_set_view (unordered rank 0)",
                       MPI_File_set_view(fh, HDR, MPI_INT, ft, "native", MPI_INFO_NULL));
        order[1] = 2;
        order[2] = 1;
    } else {
        MPI_Type_vector(N, 1, size, MPI_INT, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint)(N * size * sizeof(int)), &ft);
        MPI_Type_commit(&ft);
        if (l == HINTS || l == SIZES) {
            MPI_Info_create(&info);
            const char *v = rank == 0 && l == HINTS ? "disable" : "enable";
            MPI_Info_set(info, "romio_cb_write", v);
            MPI_Info_set(info, "romio_cb_read", v);
            if (rank == 0 && l == SIZES) {
                MPI_Info_set(info, "cb_buffer_size", "8");
                MPI_Info_set(info, "cb_nodes", "2");
            }
        }
        mtest_check_rc("MPI_File_set_view",
                       MPI_File_set_view(fh, HDR + (MPI_Offset)(rank * sizeof(int)), MPI_INT, ft,
                                         "native", info));
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Type_free(&ft);
    MPI_Type_free(&t);
}

/* rank 0 checks the file with POSIX: int i is rank i % size's k = i / size of the round */
static void check_file(const char *path, int round, int size, const char *what, const char *how)
{
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        long long len = 0, want = HDR + (long long)(N * size * sizeof(int));
        unsigned char *raw = io_posix_read_all(path, &len);
        if (mtest_check(len >= want, "%s %s: file size %lld, expected %lld", what, how, len, want))
            for (int i = 0; i < N * size; i++) {
                int v;
                memcpy(&v, raw + HDR + i * sizeof(int), sizeof v);
                if (!mtest_check(v == value(round, i % size, i / size),
                                 "%s %s: file int %d is %d, expected %d", what, how, i, v,
                                 value(round, i % size, i / size)))
                    break;
            }
        free(raw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int file_access(MPI_File fh, int write, enum mode m, MPI_Offset off, int *buf)
{
    MPI_Status st;
    MPI_Request req;
    int rc, got = -1;
    switch (m) {
    case BLOCKING:
        rc = write ? MPI_File_write_at_all(fh, off, buf, N, MPI_INT, &st)
                   : MPI_File_read_at_all(fh, off, buf, N, MPI_INT, &st);
        break;
    case NONBLOCKING:
        rc = write ? MPI_File_iwrite_at_all(fh, off, buf, N, MPI_INT, &req)
                   : MPI_File_iread_at_all(fh, off, buf, N, MPI_INT, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, &st);
        break;
    default:
        rc = write ? MPI_File_write_at_all_begin(fh, off, buf, N, MPI_INT)
                   : MPI_File_read_at_all_begin(fh, off, buf, N, MPI_INT);
        if (rc == MPI_SUCCESS)
            rc = write ? MPI_File_write_at_all_end(fh, buf, &st)
                       : MPI_File_read_at_all_end(fh, buf, &st);
        break;
    }
    if (rc == MPI_SUCCESS)
        MPI_Get_count(&st, MPI_INT, &got);
    return rc == MPI_SUCCESS ? got : -1;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("collpaths");
    int round = 0;
    for (int l = 0; l < NLAYOUT; l++)
        for (int m = 0; m < NMODE; m++, round++) {
            MPI_File fh;
            mtest_check_rc("MPI_File_open",
                           MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                         MPI_INFO_NULL, &fh));
            MPI_Offset off;
            int order[N], buf[N];
            set_view(fh, l, rank, size, &off, order);
            for (int i = 0; i < N; i++)
                buf[i] = value(round, rank, order[i]);
            int got = file_access(fh, 1, m, off, buf);
            if (!mtest_check(got == N, "%s %s write: count %d, expected %d", layout_name[l],
                             mode_name[m], got, N))
                MPI_Abort(MPI_COMM_WORLD, 1);
            MPI_File_sync(fh);
            check_file(path, round, size, layout_name[l], mode_name[m]);
            int rd[N] = {-1, -1, -1, -1};
            got = file_access(fh, 0, m, off, rd);
            mtest_check(got == N, "%s %s read: count %d, expected %d", layout_name[l], mode_name[m],
                        got, N);
            for (int i = 0; i < N; i++)
                mtest_check(rd[i] == buf[i], "%s %s read: element %d is %d, expected %d",
                            layout_name[l], mode_name[m], i, rd[i], buf[i]);
            mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
        }

    /* a view refused on rank 0 alone */
    MPI_File fh;
    mtest_check_rc("MPI_File_open",
                   MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Offset off;
    int order[N], buf[N];
    set_view(fh, HINTS, rank, size, &off, order);
    int lens[2] = {2, 1}, displs[2] = {0, 1};
    MPI_Datatype overlap;
    MPI_Type_indexed(2, lens, displs, MPI_INT, &overlap);
    MPI_Type_commit(&overlap);
    int rc =
        MPI_File_set_view(fh, 0, MPI_INT, rank == 0 ? overlap : MPI_INT, "native", MPI_INFO_NULL);
    mtest_check_class("MPI_File_set_view refused on rank 0", rc, MPI_ERR_IO);
    MPI_Type_free(&overlap);
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    mtest_check_rc("MPI_File_get_view", MPI_File_get_view(fh, &disp, &et, &ft, rep));
    mtest_check_int("the view kept: displacement", disp, HDR + rank * (long long)sizeof(int));
    MPI_Type_free(&ft);
    for (int i = 0; i < N; i++)
        buf[i] = value(round, rank, i);
    int got = file_access(fh, 1, BLOCKING, 0, buf);
    mtest_check_int("write_at_all through the view kept: count", got, N);
    mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
    check_file(path, round, size, "after the refused view", "blocking");
    io_tmpdir_remove();
    return mtest_finalize();
}
