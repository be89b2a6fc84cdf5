/* Launcher test program: one binary, one behaviour per first argument.
 * Uses only the PMI client (src/assist), never libmpi.
 *
 *   exit CODE RANK       rank RANK exits with CODE, the others sleep
 *   signal SIG RANK      rank RANK raises SIG, the others sleep
 *   bytes N SEED         write N pseudo-random bytes (seed SEED+rank) to stdout
 *   fill N               write N bytes 'A'+rank to stdout and 'a'+rank to stderr
 *   lines N              write N lines "rank R line I" (one write each)
 *   env NAME...          print NAME=value (or NAME unset) for each NAME
 *   cat                  copy stdin to stdout
 *   shmcrash MARKER      create /dev/shm/dcfa-<DCFA_JOBID>-t<rank>, start a
 *                        detached grandchild "lt_prog linger MARKER", then
 *                        rank 1 dies of SIGSEGV, the others sleep
 *   linger MARKER        sleep for a long time (the grandchild)
 *   nofinalize RANK      all ranks init; RANK exits 0 without finalize,
 *                        the others wait in a fence
 *   hang                 init; on SIGUSR1 print "rank R: waiting in hang"; sleep
 *   mpi                  init, fence, finalize, exit 0
 */
#include "assist/assist.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int lt_rank(void)
{
    const char *s = getenv("PMI_RANK");

    return s != NULL ? atoi(s) : 0;
}

static void lt_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            exit(3);
        buf += n;
        len -= (size_t)n;
    }
}

static void lt_sleep_forever(void)
{
    for (int i = 0; i < 600; i++)
        sleep(1);
    exit(5);
}

static volatile sig_atomic_t lt_dump;

static void lt_on_usr1(int sig) { lt_dump = 1; }

static int lt_init(int *rank, int *size)
{
    int appnum;

    if (assist_init(rank, size, &appnum) != 0) {
        fprintf(stderr, "lt_prog: assist_init failed\n");
        exit(4);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rank = lt_rank(), size;
    char buf[65536];

    if (strcmp(mode, "exit") == 0 && argc > 3) {
        if (rank == atoi(argv[3]))
            return atoi(argv[2]);
        lt_sleep_forever();
    } else if (strcmp(mode, "signal") == 0 && argc > 3) {
        if (rank == atoi(argv[3])) {
            signal(atoi(argv[2]), SIG_DFL);
            raise(atoi(argv[2]));
        }
        lt_sleep_forever();
    } else if (strcmp(mode, "bytes") == 0 && argc > 3) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        unsigned int x = (unsigned int)strtoul(argv[3], NULL, 10) + (unsigned int)rank + 1;
        while (n > 0) {
            size_t chunk = n < 1000 ? n : 1000; /* odd sizes on purpose */
            for (size_t i = 0; i < chunk; i++) {
                x = x * 1103515245u + 12345u;
                buf[i] = (char)(x >> 16);
            }
            lt_write_all(1, buf, chunk);
            n -= chunk;
        }
        return 0;
    } else if (strcmp(mode, "fill") == 0 && argc > 2) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        while (n > 0) {
            size_t chunk = n < 4096 ? n : 4096;
            memset(buf, 'A' + rank % 26, chunk);
            lt_write_all(1, buf, chunk);
            memset(buf, 'a' + rank % 26, chunk);
            lt_write_all(2, buf, chunk);
            n -= chunk;
        }
        return 0;
    } else if (strcmp(mode, "lines") == 0 && argc > 2) {
        long n = atol(argv[2]);
        for (long i = 0; i < n; i++) {
            int len = snprintf(buf, sizeof(buf), "rank %d line %ld\n", rank, i);
            lt_write_all(1, buf, (size_t)len);
        }
        return 0;
    } else if (strcmp(mode, "env") == 0) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            if (v != NULL)
                printf("%s=%s\n", argv[i], v);
            else
                printf("%s unset\n", argv[i]);
        }
        return 0;
    } else if (strcmp(mode, "cat") == 0) {
        ssize_t n;
        while ((n = read(0, buf, sizeof(buf))) > 0)
            lt_write_all(1, buf, (size_t)n);
        return n < 0;
    } else if (strcmp(mode, "shmcrash") == 0 && argc > 2) {
        const char *jobid = getenv("DCFA_JOBID");
        char path[256];
        if (jobid == NULL)
            return 6;
        snprintf(path, sizeof(path), "/dev/shm/dcfa-%s-t%d", jobid, rank);
        int fd = open(path, O_CREAT | O_RDWR, 0600);
        if (fd < 0)
            return 7;
        close(fd);
        if (rank == 0) {
            printf("jobid %s\n", jobid);
            fflush(stdout);
        }
        pid_t pid = fork();
        if (pid == 0) {
            setsid(); /* escape the rank's process group */
            execl("/proc/self/exe", "lt_prog", "linger", argv[2], (char *)NULL);
            _exit(8);
        }
        if (rank == 1) {
            usleep(200 * 1000);
            signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would exit(1) */
            raise(SIGSEGV);
        }
        lt_sleep_forever();
    } else if (strcmp(mode, "linger") == 0) {
        lt_sleep_forever();
    } else if (strcmp(mode, "nofinalize") == 0 && argc > 2) {
        lt_init(&rank, &size);
        if (rank == atoi(argv[2]))
            return 0;
        assist_kvs_fence();
        assist_finalize();
        return 0;
    } else if (strcmp(mode, "hang") == 0) {
        signal(SIGUSR1, lt_on_usr1);
        lt_init(&rank, &size);
        for (int i = 0; i < 600; i++) {
            if (lt_dump) {
                int len = snprintf(buf, sizeof(buf), "rank %d: waiting in hang\n", rank);
                lt_write_all(2, buf, (size_t)len);
                lt_dump = 0;
            }
            sleep(1);
        }
        return 5;
    } else if (strcmp(mode, "mpi") == 0) {
        lt_init(&rank, &size);
        if (assist_kvs_fence() != 0 || assist_finalize() != 0)
            return 9;
        return 0;
    }
    fprintf(stderr, "lt_prog: bad arguments\n");
    return 2;
}
