/* CHECK(cond, fmt, ...) for unit tests: a failed condition prints its line and message on
 * stderr and counts in `errors`; the test ends with the count as its status. */
#ifndef DCFA_UT_CHECK_H
#define DCFA_UT_CHECK_H

#include <stdio.h>

static int errors;

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stderr, "line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);           \
            fputc('\n', stderr);                    \
            errors++;                               \
        }                                           \
    } while (0)

#endif
