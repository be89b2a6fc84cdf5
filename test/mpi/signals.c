/*
 * The library leaves the program's signal dispositions alone: SIGINT,
 * SIGILL, SIGABRT, SIGBUS, SIGFPE and SIGSEGV are what they were before
 * MPI_Init (default here) at main's start, after MPI_Init and after
 * communication, whichever fabric carries it (a crash must dump core or end
 * by its signal, not exit 1 quietly). SIGTERM may carry the library's own
 * handler, which is installed only while MPI runs. Libraries loaded with the
 * fabric's must not change these either: Debian's libfabric pulls in
 * libinfinipath, whose constructor replaced all of them when libfabric was
 * linked into libmpi (now it is loaded with IPATH_NO_BACKTRACE set).
 */
#include "mtest.h"
#include <signal.h>

/* AddressSanitizer's runtime installs its own SIGSEGV, SIGBUS and SIGFPE
 * handlers before main (to report the fault); under it those three are only
 * held to "unchanged by MPI", not to "default at main's start". */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static int set_by_sanitizer(int sig)
{
    return UNDER_ASAN && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE);
}

static const int sigs[] = {SIGINT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV};
static const char *const names[] = {"SIGINT", "SIGILL", "SIGABRT", "SIGBUS", "SIGFPE", "SIGSEGV"};

static void snapshot(void (*out[])(int))
{
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        sigaction(sigs[i], NULL, &sa);
        out[i] = sa.sa_handler;
    }
}

static void compare(void (*const before[])(int), const char *when)
{
    void (*now[sizeof sigs / sizeof sigs[0]])(int);
    snapshot(now);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        mtest_check(now[i] == before[i], "%s: the disposition of %s changed (%s -> %s)", when,
                    names[i],
                    before[i] == SIG_DFL   ? "default"
                    : before[i] == SIG_IGN ? "ignored"
                                           : "a handler",
                    now[i] == SIG_DFL   ? "default"
                    : now[i] == SIG_IGN ? "ignored"
                                        : "a handler");
}

int main(int argc, char **argv)
{
    void (*start[sizeof sigs / sizeof sigs[0]])(int);
    snapshot(start);
    mtest_init(&argc, &argv);
    /* at main's start, before any MPI call: nothing loaded with the library changed them */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        /* a launcher in the background may start us with SIGINT ignored */
        if (sigs[i] != SIGINT && !set_by_sanitizer(sigs[i]))
            mtest_check(start[i] == SIG_DFL, "at main's start %s is not at its default", names[i]);
    compare(start, "after MPI_Init");
    int rank, size, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mtest_check_int("sum of ranks", sum, size * (size - 1) / 2);
    compare(start, "after communication");
    return mtest_finalize();
}
