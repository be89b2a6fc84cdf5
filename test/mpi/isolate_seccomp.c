/* mpirun --isolate seccomp (DCFA_ISOLATE=seccomp, or net,seccomp): each rank runs under the
 * daemon's filter (Seccomp: 2 in /proc/self/status), cannot make a socket of any family but
 * AF_UNIX (AF_INET, AF_INET6, AF_NETLINK, AF_PACKET fail with EPERM, the process lives on), nor
 * an io_uring, nor reach socketcall through the i386 ABI; AF_UNIX sockets still work, and
 * messages still flow (a ring at 1 B-1 MiB over the fabric the test list forces). Fails when
 * run without the filter. */
#include "mtest.h"
#include <errno.h>
#include <linux/net.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    long long mode = mtest_proc_value("/proc/self/status", "Seccomp");
    mtest_check(mode == 2, "Seccomp: %lld in /proc/self/status, not 2 (a filter)", mode);
    static const struct {
        int family, type;
        const char *name;
    } denied[] = {{AF_INET, SOCK_STREAM, "AF_INET stream"},
                  {AF_INET, SOCK_DGRAM, "AF_INET datagram"},
                  {AF_INET6, SOCK_STREAM, "AF_INET6 stream"},
                  {AF_NETLINK, SOCK_RAW, "AF_NETLINK"},
                  {AF_PACKET, SOCK_RAW, "AF_PACKET"}};
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        errno = 0;
        int s = socket(denied[i].family, denied[i].type, 0);
        mtest_check(s < 0 && errno == EPERM, "socket(%s): %s (not EPERM)", denied[i].name,
                    s >= 0 ? "made" : strerror(errno));
        if (s >= 0)
            close(s);
    }
    int sv[2];
    int rc = socketpair(AF_INET, SOCK_STREAM, 0, sv);
    mtest_check(rc < 0 && errno == EPERM, "socketpair(AF_INET): %s (not EPERM)",
                rc == 0 ? "made" : strerror(errno));
    long r = syscall(__NR_io_uring_setup, 4, NULL);
    mtest_check(r < 0 && errno == EPERM, "io_uring_setup: %s (not EPERM)",
                r >= 0 ? "made" : strerror(errno));
#if defined(__x86_64__)
    /* the i386 ABI's socketcall(SYS_SOCKET, ...) through int 0x80, another arch for the filter;
     * in a child, since a kernel without the i386 ABI answers int 0x80 with SIGSEGV */
    pid_t pid = fork();
    if (pid == 0) {
        long ret;
        static unsigned int args[3] = {AF_INET, SOCK_STREAM, 0};
        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "0"(102L), "b"((long)SYS_SOCKET), "c"((long)(uintptr_t)args)
                         : "memory");
        _exit(ret == -EPERM ? 0 : 1);
    }
    int st = 0;
    mtest_check(pid > 0 && waitpid(pid, &st, 0) == pid, "fork: %s", strerror(errno));
    mtest_check(!WIFEXITED(st) || WEXITSTATUS(st) == 0,
                "i386 socketcall(SYS_SOCKET, AF_INET) was not denied with EPERM");
    /* an x32 system call number */
    r = syscall(__NR_socket | 0x40000000L, AF_INET, SOCK_STREAM, 0);
    mtest_check(r < 0 && errno == EPERM, "x32 socket(AF_INET): %s (not EPERM)",
                r >= 0 ? "made" : strerror(errno));
#endif
    /* local sockets stay */
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    mtest_check(u >= 0, "socket(AF_UNIX): %s", strerror(errno));
    if (u >= 0)
        close(u);
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0) {
        close(sv[0]);
        close(sv[1]);
    } else
        mtest_check(0, "socketpair(AF_UNIX): %s", strerror(errno));
    /* and the ranks still talk: a ring of sizes eager and rendezvous */
    mtest_ring_sizes(MPI_COMM_WORLD, 1 << 20);
    return mtest_finalize();
}
