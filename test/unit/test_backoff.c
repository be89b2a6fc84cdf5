/* Unit test of the waiting policy (src/util/util.c): a wait spins for DCFA_SPIN_US before it
 * yields, except while util_backoff_hold says an answer of another process of this host is
 * awaited (sock's connection request to the assist daemon): then its first idle poll yields,
 * so the daemon it waits for gets the core. */
#include "util/util.h"

#include <stdio.h>

static int errors;

/* polls an idle wait n times; returns whether it got to yielding */
static int yields_after(int n)
{
    util_backoff b;
    util_backoff_reset(&b);
    for (int i = 0; i < n; i++)
        util_backoff_wait(&b);
    return b.yielding;
}

static void expect(int got, int want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "%s: %s, want %s\n", what, got ? "yields" : "spins",
                want ? "yields" : "spins");
        errors++;
    }
}

int main(void)
{
    util_tunables_load();
    util_cfg.spin_us = 10 * 1000 * 1000; /* 10 s: 200 polls never get to the end of it */
    util_cfg.yield_us = 20000;
    expect(yields_after(200), 0, "a wait with nothing held");
    util_backoff_hold(1);
    expect(yields_after(1), 1, "a wait while an answer is awaited");
    util_backoff_hold(1);
    util_backoff_hold(-1);
    expect(yields_after(1), 1, "a wait while one of two answers is still awaited");
    util_backoff_hold(-1);
    expect(yields_after(200), 0, "a wait after the answers came");
    /* DCFA_SPIN_US 0 (an oversubscribed node) yields at once anyway */
    util_cfg.spin_us = 0;
    expect(yields_after(1), 1, "a wait with DCFA_SPIN_US 0");
    if (errors)
        return 1;
    printf("backoff: spins, and yields at once while held: ok\n");
    return 0;
}
