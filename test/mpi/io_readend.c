/*
 * io_readend: collective reads that reach past the end of the file (MPICH's io/rd_end and
 * more). The count is the number of bytes below the end, the buffer holds the file's bytes
 * there, and every byte of the buffer past them keeps what it had: before, a contiguous
 * buffer received the zeros the aggregator reads past the end of the file.
 *
 * Forms: MPI_File_read_all (every rank the same range, so the ranges interleave and are
 * aggregated), MPI_File_read_at_all with each rank's range straddling the end at a different
 * place, the nonblocking and split forms, with cb_buffer_size small enough for several
 * cycles, and with aggregation forced and off; contiguous and strided (vector) memory.
 */
#include "io_util.h"

#define FILE_LEN 1000 /* bytes in the file */
#define WANT     1500 /* bytes asked for */
#define FILL     0xa5

enum { F_ALL, F_AT_ALL, F_IREAD, F_SPLIT, NFORMS };
static const char *form_name[NFORMS] = {"read_all", "read_at_all", "iread_at_all",
                                        "read_at_all_begin/end"};

static unsigned char file_byte(long long i) { return (unsigned char)(i * 7 + 3); }

/* rank r reads [start, start + WANT) of the file */
static long long start_of(int form, int rank)
{
    return form == F_ALL ? 0 : (long long)(rank * 150) % 900;
}

static void one(MPI_File fh, int form, int strided, const char *how)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* strided: WANT bytes, one every second byte of a 2 * WANT buffer */
    size_t cap = strided ? 2 * WANT : WANT;
    unsigned char *buf = mtest_malloc(cap);
    memset(buf, FILL, cap);
    MPI_Datatype dt = MPI_BYTE;
    int count = WANT;
    if (strided) {
        MPI_Type_vector(WANT, 1, 2, MPI_BYTE, &dt);
        MPI_Type_commit(&dt);
        count = 1;
    }
    long long start = start_of(form, rank);
    MPI_Status st;
    MPI_Request req;
    int rc = MPI_SUCCESS;
    switch (form) {
    case F_ALL:
        MPI_File_seek(fh, start, MPI_SEEK_SET);
        rc = MPI_File_read_all(fh, buf, count, dt, &st);
        break;
    case F_AT_ALL:
        rc = MPI_File_read_at_all(fh, start, buf, count, dt, &st);
        break;
    case F_IREAD:
        rc = MPI_File_iread_at_all(fh, start, buf, count, dt, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, &st);
        break;
    case F_SPLIT:
        rc = MPI_File_read_at_all_begin(fh, start, buf, count, dt);
        if (rc == MPI_SUCCESS)
            rc = MPI_File_read_at_all_end(fh, buf, &st);
        break;
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s %s", form_name[form], strided ? "strided" : "contiguous",
             how);
    if (mtest_check_rc(what, rc)) {
        long long below = FILE_LEN - start;
        int got = -1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        mtest_check(got == below, "%s: count %d, expected %lld", what, got, below);
        for (size_t i = 0; i < cap; i++) {
            int in_stream = !strided || i % 2 == 0;
            long long k = strided ? (long long)i / 2 : (long long)i; /* stream byte */
            unsigned char want = in_stream && k < below ? file_byte(start + k) : FILL;
            if (!mtest_check(buf[i] == want, "%s: buffer byte %zu is 0x%02x, expected 0x%02x%s",
                             what, i, buf[i], want,
                             want == FILL ? " (past the bytes read: must stay untouched)" : ""))
                break;
        }
    }
    if (strided)
        MPI_Type_free(&dt);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    io_tmpdir_make();
    const char *path = io_path("readend");
    if (rank == 0) {
        unsigned char *d = mtest_malloc(FILE_LEN);
        for (int i = 0; i < FILE_LEN; i++)
            d[i] = file_byte(i);
        io_posix_write(path, d, FILE_LEN, 0);
        free(d);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* hints: default; aggregation forced with windows of 256 bytes (several cycles, the end of
     * the file inside one); aggregation off */
    const char *modes[3][2] = {{NULL, NULL}, {"enable", "256"}, {"disable", NULL}};
    for (int m = 0; m < 3; m++) {
        MPI_Info info;
        MPI_Info_create(&info);
        if (modes[m][0])
            MPI_Info_set(info, "romio_cb_read", modes[m][0]);
        if (modes[m][1])
            MPI_Info_set(info, "cb_buffer_size", modes[m][1]);
        MPI_File fh;
        if (!mtest_check_rc("MPI_File_open",
                            MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh))) {
            MPI_Info_free(&info);
            break;
        }
        char how[64];
        snprintf(how, sizeof how, "(romio_cb_read=%s)", modes[m][0] ? modes[m][0] : "automatic");
        for (int form = 0; form < NFORMS; form++)
            for (int strided = 0; strided < 2; strided++)
                one(fh, form, strided, how);
        MPI_File_close(&fh);
        MPI_Info_free(&info);
    }
    io_tmpdir_remove();
    return mtest_finalize();
}
