/* ad: mpirun --isolate seccomp, a system call filter for the ranks (docs/launcher.md "Endpoints
 * and isolation").
 *
 * In the child before exec the daemon sets PR_SET_NO_NEW_PRIVS (so that no root is needed) and
 * installs a classic BPF program that answers EPERM, never kills, to:
 *   - socket() and socketpair() for any family but AF_UNIX (AF_INET, AF_INET6, AF_NETLINK,
 *     AF_PACKET, ...): the rank's only sockets are local ones and those its daemon hands over;
 *   - io_uring_setup(), whose SOCKET and CONNECT operations would not pass through the filter;
 *   - pidfd_getfd(), which would take a socket out of another process of the same user;
 *   - every call of another ABI than the daemon's own (i386's socketcall through int 0x80, x32
 *     numbers on x86_64, arm32 on aarch64).
 * connect() is left alone: a filter cannot read the address it is given (it is in the rank's
 * memory), and every socket the rank can hold is AF_UNIX already. The filter is written here
 * for x86_64 and aarch64; on other architectures --isolate seccomp is refused. */
#include "ad_seccomp.h"
#include "ad.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define AD_SECCOMP_ARCH AUDIT_ARCH_X86_64
#define AD_SECCOMP_X32  0x40000000u /* __X32_SYSCALL_BIT */
#elif defined(__aarch64__)
#define AD_SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

/* the low 32 bits of argument 0 (socket's family is an int) */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define AD_SECCOMP_ARG0 offsetof(struct seccomp_data, args[0])
#else
#define AD_SECCOMP_ARG0 (offsetof(struct seccomp_data, args[0]) + 4)
#endif

int ad_seccomp_supported(void)
{
#ifdef AD_SECCOMP_ARCH
    return 1;
#else
    return 0;
#endif
}

int ad_seccomp_install(char *err, size_t cap)
{
#ifndef AD_SECCOMP_ARCH
    snprintf(err, cap, "--isolate seccomp: no filter for this architecture (x86_64 and aarch64)");
    return -ENOTSUP;
#else
    enum { DENY = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA) };
    /* jump offsets count from the next instruction; the last two are ALLOW and DENY */
    struct sock_filter prog[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AD_SECCOMP_ARCH, 1, 0),
        /* 2 */ BPF_STMT(BPF_RET | BPF_K, DENY),
        /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef AD_SECCOMP_X32
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, AD_SECCOMP_X32, 8, 0),
#else
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 4, 0),
        /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 3, 0),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 5, 0),
        /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_getfd, 4, 0),
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JA, 2, 0, 0),
        /* 10: socket, socketpair */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, AD_SECCOMP_ARG0),
        /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 13 */ BPF_STMT(BPF_RET | BPF_K, DENY),
    };
    struct sock_fprog fp = {.len = (unsigned short)(sizeof prog / sizeof prog[0]), .filter = prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(err, cap, "--isolate seccomp: prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        return -errno;
    }
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0 &&
        (errno != ENOSYS || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) != 0)) {
        snprintf(err, cap,
                 "--isolate seccomp: cannot install the filter: %s (needs a kernel with "
                 "CONFIG_SECCOMP_FILTER)",
                 strerror(errno));
        return -errno;
    }
    return 0;
#endif
}
