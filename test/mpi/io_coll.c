/*
 * io_coll: collective (two-phase) access on random layouts, against POSIX.
 *
 * Each iteration draws, from a seed every rank shares: a region of up to
 * 48 KiB cut into pieces of 1..300 bytes, each piece given to one rank or
 * left as a hole; cb_buffer_size (64 B .. 1 MiB, so windows cut pieces and
 * domains take many cycles), cb_nodes (1..size aggregators), romio_cb_*
 * (automatic or enable) and the memory layout (contiguous, or strided ints).
 * The file is first filled with pwrite; every rank then writes its pieces
 * (hindexed filetype) with write_all, iwrite_all (overlapped with a ring of
 * point-to-point messages before the wait) or a split collective. pread
 * must find every piece with its new bytes and every hole with the old
 * ones (two-phase reads-modifies-writes windows with holes); read_all must
 * bring every rank its pieces back; reading past the end of the file gives
 * the count of the bytes that are there.
 */
#include "io_util.h"

static int rank, size;
static unsigned long long rng;

static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng >> 33) % n);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 60;
    io_tmpdir_make();
    const char *path = io_path("coll.dat");
    MPI_File fh;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (!mtest_check_rc("MPI_File_open", rc)) {
        io_tmpdir_remove();
        return mtest_finalize();
    }
    enum { MAXP = 2048 };
    int *owner = mtest_malloc(MAXP * sizeof *owner), *blen = mtest_malloc(MAXP * sizeof *blen);
    long long *poff = mtest_malloc(MAXP * sizeof *poff);
    int *mbl = mtest_malloc(MAXP * sizeof *mbl);
    MPI_Aint *mdp = mtest_malloc(MAXP * sizeof *mdp);
    for (int it = 0; it < iters; it++) {
        rng = 0x9e3779b97f4a7c15ull * (unsigned long long)(it + 1);
        long long L = 0;
        int np = 0, target = 16 + (int)rnd(300);
        while (np < target && np < MAXP) {
            blen[np] = 1 + (int)rnd(rnd(4) == 0 ? 300 : 24);
            poff[np] = L;
            owner[np] = (int)rnd((unsigned)size + 1); /* size: a hole */
            L += blen[np];
            np++;
        }
        static const int cbs[] = {64, 1000, 4096, 1 << 20};
        char cbsz[32], cbn[32];
        snprintf(cbsz, sizeof cbsz, "%d", cbs[rnd(4)]);
        snprintf(cbn, sizeof cbn, "%d", 1 + (int)rnd((unsigned)size));
        int enable = (int)rnd(2), how = (int)rnd(3), strided = (int)rnd(2);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "cb_buffer_size", cbsz);
        MPI_Info_set(info, "cb_nodes", cbn);
        MPI_Info_set(info, "romio_cb_write", enable ? "enable" : "automatic");
        MPI_Info_set(info, "romio_cb_read", enable ? "enable" : "automatic");
        MPI_File_set_info(fh, info);
        MPI_Info_free(&info);
        char what[256];
        snprintf(what, sizeof what,
                 "iteration %d (%d pieces, %lld bytes, cb_buffer_size %s, "
                 "cb_nodes %s, %s, how %d, strided %d)",
                 it, np, L, cbsz, cbn, enable ? "enable" : "automatic", how, strided);

        /* my filetype: my pieces */
        int n = 0;
        long long mybytes = 0;
        for (int p = 0; p < np; p++)
            if (owner[p] == rank) {
                mbl[n] = blen[p];
                mdp[n] = (MPI_Aint)poff[p];
                mybytes += blen[p];
                n++;
            }
        MPI_Datatype hi, ft;
        MPI_Type_create_hindexed(n, mbl, mdp, MPI_BYTE, &hi);
        MPI_Type_create_resized(hi, 0, (MPI_Aint)L, &ft);
        MPI_Type_commit(&ft);
        MPI_Type_free(&hi);

        /* old contents: pwrite the region plus a tail */
        MPI_File_set_size(fh, 0);
        if (rank == 0) {
            unsigned char *b = mtest_malloc((size_t)L + 100);
            for (long long o = 0; o < L + 100; o++)
                b[o] = io_byte(size + 1, it, o);
            io_posix_write(path, b, (size_t)L + 100, 0);
            free(b);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        mtest_check_rc("set_view", MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        /* my data, in stream order, placed in memory */
        unsigned char *data = mtest_malloc((size_t)mybytes + 1);
        for (long long k = 0, p = 0; p < np; p++)
            if (owner[p] == rank)
                for (int b = 0; b < blen[p]; b++)
                    data[k++] = io_byte(rank, it, poff[p] + b);
        long long nints = (mybytes + 3) / 4;
        unsigned char *mem = mtest_malloc((size_t)nints * 8 + 8);
        MPI_Datatype mt = MPI_BYTE, vec = MPI_DATATYPE_NULL;
        int count = (int)mybytes;
        if (strided && mybytes % 4 == 0) {
            MPI_Type_vector((int)nints, 1, 2, MPI_INT, &vec);
            MPI_Type_commit(&vec);
            mt = vec;
            count = 1;
            for (long long k = 0; k < mybytes; k++)
                mem[(k / 4) * 8 + k % 4] = data[k];
        } else {
            memcpy(mem, data, (size_t)mybytes);
        }
        MPI_Status st;
        MPI_Request req;
        if (how == 0) {
            rc = MPI_File_write_at_all(fh, 0, mem, count, mt, &st);
        } else if (how == 1) {
            rc = MPI_File_iwrite_at_all(fh, 0, mem, count, mt, &req);
            /* other traffic while it runs */
            int tok = rank, got = -1;
            MPI_Sendrecv(&tok, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                         (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mtest_check(got == (rank + size - 1) % size, "ring during iwrite_all");
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, &st);
        } else {
            rc = MPI_File_write_at_all_begin(fh, 0, mem, count, mt);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_write_at_all_end(fh, mem, &st);
        }
        if (mtest_check_rc(what, rc)) {
            int c;
            MPI_Get_count(&st, MPI_BYTE, &c);
            mtest_check(c == mybytes, "%s: write count %d, expected %lld", what, c, mybytes);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            long long len;
            unsigned char *b = io_posix_read_all(path, &len);
            mtest_check(len == L + 100, "%s: file of %lld bytes, expected %lld", what, len,
                        L + 100);
            for (int p = 0; p < np; p++)
                for (int k = 0; k < blen[p] && poff[p] + k < len; k++) {
                    long long o = poff[p] + k;
                    unsigned char want = io_byte(owner[p] < size ? owner[p] : size + 1, it, o);
                    if (b[o] != want) {
                        mtest_fail("%s: byte %lld (%s of rank %d) is 0x%02x, expected 0x%02x", what,
                                   o, owner[p] < size ? "piece" : "hole", owner[p], b[o], want);
                        p = np;
                        break;
                    }
                }
            for (long long o = L; o < len; o++)
                if (b[o] != io_byte(size + 1, it, o)) {
                    mtest_fail("%s: the tail byte %lld changed", what, o);
                    break;
                }
            free(b);
        }
        MPI_Barrier(MPI_COMM_WORLD);

        /* read back: everybody's pieces, then a second tile past the end */
        memset(mem, 0, (size_t)nints * 8 + 8);
        rc = how == 1 ? MPI_File_iread_at_all(fh, 0, mem, count, mt, &req)
                      : MPI_File_read_at_all(fh, 0, mem, count, mt, &st);
        if (how == 1 && rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, &st);
        if (mtest_check_rc(what, rc)) {
            int bad = 0;
            for (long long k = 0; k < mybytes && !bad; k++) {
                unsigned char got = mt == MPI_BYTE ? mem[k] : mem[(k / 4) * 8 + k % 4];
                if (got != data[k]) {
                    mtest_fail("%s: read_all byte %lld is 0x%02x, expected 0x%02x", what, k, got,
                               data[k]);
                    bad = 1;
                }
            }
        }
        /* past the end: tile 2 starts at L, the file ends at L + 100 */
        long long want = 0;
        for (int p = 0; p < np; p++)
            if (owner[p] == rank && poff[p] < 100)
                want += poff[p] + blen[p] <= 100 ? blen[p] : 100 - poff[p];
        unsigned char *tail = mtest_malloc((size_t)mybytes + 1);
        rc = MPI_File_read_at_all(fh, (MPI_Offset)mybytes, tail, (int)mybytes, MPI_BYTE, &st);
        if (mtest_check_rc(what, rc)) {
            int c;
            MPI_Get_count(&st, MPI_BYTE, &c);
            mtest_check(c == want, "%s: read past the end gave %d bytes, expected %lld", what, c,
                        want);
        }
        free(tail);
        if (vec != MPI_DATATYPE_NULL)
            MPI_Type_free(&vec);
        MPI_Type_free(&ft);
        free(data);
        free(mem);
    }
    /* two nonblocking collective writes through two views, the view changed
     * while the first is still pending (ROMIO allows it; MPICH's i_hindexed
     * does it): each write uses the view it started with */
    {
        enum { B = 40 };
        unsigned char w[2][B];
        MPI_Request rq[2];
        MPI_File_set_size(fh, 0);
        for (int i = 0; i < 2; i++) {
            MPI_Datatype blk, ft;
            MPI_Type_contiguous(B, MPI_BYTE, &blk);
            MPI_Type_create_resized(blk, 0, (MPI_Aint)B * size, &ft);
            MPI_Type_commit(&ft);
            MPI_Type_free(&blk);
            MPI_File_set_view(fh, (MPI_Offset)i * B * size * 2 + (MPI_Offset)rank * B, MPI_BYTE, ft,
                              "native", MPI_INFO_NULL);
            MPI_Type_free(&ft);
            for (int k = 0; k < B; k++)
                w[i][k] = io_byte(rank, 500 + i, k);
            mtest_check_rc("iwrite_all", MPI_File_iwrite_at_all(fh, 0, w[i], B, MPI_BYTE, &rq[i]));
        }
        mtest_check_rc("waitall", MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            long long len;
            unsigned char *b = io_posix_read_all(path, &len);
            mtest_check(len == (long long)B * size * 3, "two views: file of %lld bytes", len);
            for (int i = 0; i < 2; i++)
                for (int r = 0; r < size; r++)
                    for (int k = 0; k < B; k++) {
                        long long o = (long long)i * B * size * 2 + (long long)r * B + k;
                        if (o < len && b[o] != io_byte(r, 500 + i, k)) {
                            mtest_fail("two views: byte %lld is 0x%02x, expected 0x%02x", o, b[o],
                                       io_byte(r, 500 + i, k));
                            i = 2, r = size;
                            break;
                        }
                    }
            free(b);
        }
    }
    free(owner);
    free(blen);
    free(poff);
    free(mbl);
    free(mdp);
    mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
    io_tmpdir_remove();
    return mtest_finalize();
}
