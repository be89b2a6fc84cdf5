/*
 * io_zeroview: a view whose filetype has size 0 on one rank (an indexed-block type of no
 * blocks, resized to the extent of the others' tiles), the case of MPICH's io/setview_zero.
 * That rank takes part in the collective calls with nothing to move:
 *   - MPI_File_set_view succeeds on every rank (it was refused with MPI_ERR_TYPE on that rank
 *     alone, and the others waited for it in the view's barrier forever);
 *   - MPI_File_write_all twice, MPI_File_get_position / _shared after each: the file holds what
 *     the other ranks wrote (checked with POSIX reads), the empty rank's pointer stays 0;
 *   - on the empty rank: a read of count > 0 reads nothing (count 0, buffer untouched), a write
 *     of count > 0 is MPI_ERR_IO (there is nowhere to put it), MPI_File_get_byte_offset is the
 *     displacement, MPI_File_seek(MPI_SEEK_END) goes to 0.
 */
#include "io_util.h"

#define PER 3 /* ints per rank with data, per tile */

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("zeroview");
    int empty = rank == size - 1, ndata = size - 1;
    int tile = ndata * PER; /* ints in one tile of every view */

    MPI_File fh;
    mtest_check_rc(
        "MPI_File_open",
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* rank r < ndata owns ints r, r + ndata, r + 2 ndata of each tile */
    int displs[PER];
    for (int i = 0; i < PER; i++)
        displs[i] = rank + i * ndata;
    MPI_Datatype blocks, ftype;
    MPI_Type_create_indexed_block(empty ? 0 : PER, 1, displs, MPI_INT, &blocks);
    MPI_Type_create_resized(blocks, 0, (MPI_Aint)(tile * sizeof(int)), &ftype);
    MPI_Type_commit(&ftype);
    const MPI_Offset disp = 8;
    mtest_check_rc("MPI_File_set_view",
                   MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));

    int buf[PER];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < PER; i++)
            buf[i] = 1000 * (round + 1) + 10 * rank + i;
        MPI_Status st;
        int n = empty ? 0 : PER, got = -1;
        mtest_check_rc("MPI_File_write_all", MPI_File_write_all(fh, buf, n, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &got);
        mtest_check_int("write_all count", got, n);
        MPI_Offset pos = -1, shpos = -1;
        mtest_check_rc("MPI_File_get_position", MPI_File_get_position(fh, &pos));
        mtest_check_int("individual position", pos, (long long)n * (round + 1));
        mtest_check_rc("MPI_File_get_position_shared", MPI_File_get_position_shared(fh, &shpos));
        mtest_check_int("shared position", shpos, 0);
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the file: disp bytes of nothing, then two tiles in which int k belongs to rank k % ndata
     * (its (k / ndata)-th int of that round) */
    long long len = 0;
    unsigned char *raw = io_posix_read_all(path, &len);
    mtest_check_int("file size", len, disp + 2 * tile * (long long)sizeof(int));
    if (len == disp + 2 * tile * (long long)sizeof(int)) {
        for (int k = 0; k < 2 * tile; k++) {
            int v, r = (k % tile) % ndata, i = (k % tile) / ndata, round = k / tile;
            memcpy(&v, raw + disp + k * sizeof(int), sizeof v);
            if (!mtest_check(v == 1000 * (round + 1) + 10 * r + i, "file int %d is %d, expected %d",
                             k, v, 1000 * (round + 1) + 10 * r + i))
                break;
        }
    }
    free(raw);

    if (empty) {
        int rd[PER] = {-7, -7, -7}, got = -1;
        MPI_Status st;
        mtest_check_rc("MPI_File_read_at (empty view)",
                       MPI_File_read_at(fh, 0, rd, PER, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &got);
        mtest_check_int("read through an empty view: count", got, 0);
        for (int i = 0; i < PER; i++)
            mtest_check_int("read through an empty view leaves the buffer", rd[i], -7);
        mtest_check_class("MPI_File_write_at (empty view)",
                          MPI_File_write_at(fh, 0, buf, PER, MPI_INT, &st), MPI_ERR_IO);
        MPI_Offset b = -1;
        mtest_check_rc("MPI_File_get_byte_offset", MPI_File_get_byte_offset(fh, 5, &b));
        mtest_check_int("byte offset in an empty view", b, disp);
        mtest_check_rc("MPI_File_seek", MPI_File_seek(fh, 0, MPI_SEEK_END));
        mtest_check_rc("MPI_File_get_position", MPI_File_get_position(fh, &b));
        mtest_check_int("end of an empty view", b, 0);
    }
    /* a collective read of count > 0 on the empty rank: nothing comes, the others read theirs */
    int rd[PER] = {-7, -7, -7}, got = -1;
    MPI_Status st;
    mtest_check_rc("MPI_File_read_at_all", MPI_File_read_at_all(fh, PER, rd, PER, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &got);
    mtest_check_int("read_at_all count", got, empty ? 0 : PER);
    for (int i = 0; i < PER; i++)
        mtest_check_int("read_at_all data", rd[i], empty ? -7 : 2000 + 10 * rank + i);

    mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&blocks);
    io_tmpdir_remove();
    return mtest_finalize();
}
