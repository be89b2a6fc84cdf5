/*
 * io_util.h: helpers for the MPI-IO tests (test/mpi/io_*.c), on top of mtest.h.
 *
 * Every test works in a private temporary directory (io_tmpdir_make: rank 0
 * makes it under $TMPDIR or /tmp and broadcasts its name; io_tmpdir_remove:
 * rank 0 removes every file left in it and the directory). Results are
 * checked against plain POSIX reads and writes of the same file (io_posix_*),
 * never against the library itself.
 */
#ifndef IO_UTIL_H
#define IO_UTIL_H

#include "mtest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char io_dir[512];

static inline void io_tmpdir_make(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(io_dir, sizeof io_dir, "%s/dcfa-iotest-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(io_dir)) {
            fprintf(stderr, "mkdtemp %s: %s\n", io_dir, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Bcast(io_dir, sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static inline void io_tmpdir_remove(void)
{
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return;
    DIR *d = opendir(io_dir);
    if (d) {
        struct dirent *e;
        char p[1024];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", io_dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(io_dir);
}

/* a file name in the test directory */
static inline const char *io_path(const char *name)
{
    static char p[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", io_dir, name);
    return p[k];
}

/* the whole file through POSIX; *len gets its size; free() the result */
static inline unsigned char *io_posix_read_all(const char *path, long long *len)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        mtest_fail("posix open/fstat %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        *len = 0;
        return mtest_malloc(1);
    }
    unsigned char *b = mtest_malloc((size_t)sb.st_size + 1);
    long long got = 0;
    while (got < sb.st_size) {
        ssize_t r = pread(fd, b + got, (size_t)(sb.st_size - got), got);
        if (r <= 0)
            break;
        got += r;
    }
    close(fd);
    *len = got;
    return b;
}

/* write len bytes at off through POSIX (creating the file) */
static inline void io_posix_write(const char *path, const void *buf, size_t len, long long off)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0 || pwrite(fd, buf, len, off) != (ssize_t)len)
        mtest_fail("posix write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
}

static inline long long io_posix_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* the byte a test writes at file offset `off` for `rank` in round `round` */
static inline unsigned char io_byte(int rank, int round, long long off)
{
    uint64_t v = (uint64_t)off * 2654435761u + (uint64_t)rank * 97u + (uint64_t)round * 31u;
    return (unsigned char)(v ^ (v >> 11) ^ (v >> 23));
}

#endif
