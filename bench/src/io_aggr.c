/* MPI-IO aggregation: many ranks writing (and reading) interleaved small
 * pieces of one file. Rank r owns pieces r, r + P, r + 2P, ... of --piece
 * bytes (a block-cyclic file view: MPI_Type_vector of one piece every P),
 * --total bytes in all. Four ways, each timed on the slowest rank:
 *   coll          MPI_File_write_all / read_all (collective buffering: the
 *                 library may aggregate the pieces into large writes)
 *   indep         MPI_File_write / read with the same view (each rank on its
 *                 own; the library may sieve: read-modify-write under a lock)
 *   indep_nosieve the same with romio_ds_write / romio_ds_read = disable
 *                 (one system call per piece)
 * The data is checked after each read. Besides the time, every rank counts
 * its write and read system calls (syscw / syscr of /proc/self/io) during
 * the timed writes and reads; the sum over ranks shows how many calls the
 * file system saw. The file goes in --dir (default: $TMPDIR or /tmp) and
 * is removed. JSON, one object per line, on rank 0's stdout.
 * Options: --piece BYTES[,BYTES...]  --total BYTES  --reps N  --dir DIR
 *          --ways coll,indep,indep_nosieve */
#include "bench_common.h"

#include <unistd.h>

static void proc_io(long long *syscr, long long *syscw)
{
    FILE *f = fopen("/proc/self/io", "r");
    char key[64];
    long long v;
    *syscr = *syscw = -1;
    if (!f)
        return;
    while (fscanf(f, "%63s %lld", key, &v) == 2) {
        if (!strcmp(key, "syscr:"))
            *syscr = v;
        else if (!strcmp(key, "syscw:"))
            *syscw = v;
    }
    fclose(f);
}

/* name is an item of the comma-separated list */
static int way_on(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static unsigned char pattern(long long off) { return (unsigned char)(off * 131 + (off >> 9)); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = bc_arg_long(argc, argv, "--total", 64L << 20);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 3);
    const char *ways = bc_arg_str(argc, argv, "--ways", "coll,indep,indep_nosieve");
    const char *dir = bc_arg_str(argc, argv, "--dir", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    long pieces[BC_MAX_SIZES];
    int npieces = bc_sizes(argc, argv, pieces, 0, 64, 16384);
    const char *plist = bc_arg_str(argc, argv, "--piece", NULL);
    if (plist) {
        char tmp[512];
        npieces = 0;
        snprintf(tmp, sizeof tmp, "%s", plist);
        for (char *t = strtok(tmp, ","); t && npieces < BC_MAX_SIZES; t = strtok(NULL, ","))
            pieces[npieces++] = bc_parse_size(t);
    }
    /* reading /proc/self/io costs read calls of its own: measured once, subtracted */
    long long cr0, cw0, cr1, cw1;
    proc_io(&cr0, &cw0);
    proc_io(&cr1, &cw1);
    long long probe_r = cr1 - cr0, probe_w = cw1 - cw0;
    char path[1024];
    int salt = 0;
    if (rank == 0)
        salt = (int)getpid();
    MPI_Bcast(&salt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/io_aggr.%d.dat", dir, salt);

    static const char *way_name[3] = {"coll", "indep", "indep_nosieve"};
    for (int pi = 0; pi < npieces; pi++) {
        long piece = pieces[pi];
        long n = total / piece / size; /* my pieces */
        if (n < 1)
            continue;
        long bytes = n * piece;
        unsigned char *buf = malloc((size_t)bytes), *rbuf = malloc((size_t)bytes);
        for (long k = 0; k < n; k++)
            for (long b = 0; b < piece; b++)
                buf[k * piece + b] = pattern(((long long)k * size + rank) * piece + b);
        MPI_Datatype vec, ft;
        MPI_Type_vector((int)n, (int)piece, (int)(piece * size), MPI_BYTE, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint)n * piece * size, &ft);
        MPI_Type_commit(&ft);
        MPI_Type_free(&vec);
        for (int w = 0; w < 3; w++) {
            if (!way_on(ways, way_name[w]))
                continue;
            MPI_Info info;
            MPI_Info_create(&info);
            if (w == 2) {
                MPI_Info_set(info, "romio_ds_write", "disable");
                MPI_Info_set(info, "romio_ds_read", "disable");
            }
            double tw[64], tr[64];
            long long calls_w = 0, calls_r = 0;
            int bad = 0;
            for (int rep = 0; rep < reps && rep < 64; rep++) {
                MPI_File fh;
                if (rank == 0)
                    unlink(path);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
                MPI_File_set_view(fh, (MPI_Offset)rank * piece, MPI_BYTE, ft, "native", info);
                MPI_Status st;
                long long r0, w0, r1, w1, r2, w2;
                MPI_Barrier(MPI_COMM_WORLD);
                proc_io(&r0, &w0);
                double t0 = MPI_Wtime();
                if (w == 0)
                    MPI_File_write_all(fh, buf, (int)bytes, MPI_BYTE, &st);
                else
                    MPI_File_write(fh, buf, (int)bytes, MPI_BYTE, &st);
                double t1 = MPI_Wtime() - t0;
                proc_io(&r1, &w1);
                MPI_File_sync(fh);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_File_seek(fh, 0, MPI_SEEK_SET);
                memset(rbuf, 0, (size_t)bytes);
                MPI_Barrier(MPI_COMM_WORLD);
                proc_io(&r1, &w1);
                t0 = MPI_Wtime();
                if (w == 0)
                    MPI_File_read_all(fh, rbuf, (int)bytes, MPI_BYTE, &st);
                else
                    MPI_File_read(fh, rbuf, (int)bytes, MPI_BYTE, &st);
                double t2 = MPI_Wtime() - t0;
                proc_io(&r2, &w2);
                if (memcmp(buf, rbuf, (size_t)bytes))
                    bad = 1;
                MPI_File_close(&fh);
                MPI_Allreduce(&t1, &tw[rep], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                MPI_Allreduce(&t2, &tr[rep], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                long long cw = w1 - w0 - probe_w, cr = r2 - r1 - probe_r, sw, sr;
                MPI_Allreduce(&cw, &sw, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                MPI_Allreduce(&cr, &sr, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                calls_w = sw;
                calls_r = sr;
            }
            int anybad = 0;
            MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (rank == 0) {
                bc_stats sw_ = bc_stats_of(tw, reps), sr_ = bc_stats_of(tr, reps);
                double mb = (double)bytes * size / 1048576.0;
                printf("{\"bench\":\"io_aggr\",\"way\":\"%s\",\"ranks\":%d,\"piece\":%ld,"
                       "\"bytes\":%ld,\"write_s\":%.6f,\"write_q1\":%.6f,\"write_q3\":%.6f,"
                       "\"read_s\":%.6f,\"write_MiBps\":%.1f,\"read_MiBps\":%.1f,"
                       "\"write_calls\":%lld,\"read_calls\":%lld,\"reps\":%d,\"ok\":%s}\n",
                       way_name[w], size, piece, bytes * size, sw_.median, sw_.q1, sw_.q3,
                       sr_.median, mb / sw_.median, mb / sr_.median, calls_w, calls_r, reps,
                       anybad ? "false" : "true");
                fflush(stdout);
            }
            MPI_Info_free(&info);
        }
        MPI_Type_free(&ft);
        free(buf);
        free(rbuf);
    }
    if (rank == 0)
        unlink(path);
    MPI_Finalize();
    return 0;
}
