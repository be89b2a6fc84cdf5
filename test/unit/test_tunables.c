/* Unit test of the tunables registry (src/util/tunables.c): every variable the library reads
 * through util_cfg is in util_tunables[], the part util_tunables_load reads, so that it takes
 * its default and the environment's value. (DCFA_GW_EAGER_LIMIT stood among the variables
 * read elsewhere, with a util_cfg pointer: it stayed 0, and the gw fabric's packets 16 KiB
 * instead of 64.) */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;

int main(void)
{
    for (int i = util_ntunables; i < util_nvars; i++) {
        const util_tunable *t = util_var(i);
        if (t->ptr) {
            fprintf(stderr,
                    "%s: a util_cfg variable among those read elsewhere: "
                    "util_tunables_load never sets it\n",
                    t->name);
            errors++;
        }
    }
    unsetenv("DCFA_GW_EAGER_LIMIT");
    unsetenv("DCFA_OFI_EAGER_LIMIT");
    setenv("DCFA_SOCK_EAGER_LIMIT", "32k", 1);
    util_tunables_load();
    /* each number not set in the environment takes its default */
    for (int i = 0; i < util_ntunables; i++) {
        const util_tunable *t = &util_tunables[i];
        if (!t->ptr || (t->type != UTIL_T_INT && t->type != UTIL_T_SIZE) || getenv(t->name) ||
            strpbrk(t->defval, "kKmMgG"))
            continue;
        char got[64];
        util_tunable_format(t, got, sizeof got);
        if (strtoll(got, NULL, 0) != strtoll(t->defval, NULL, 0)) {
            fprintf(stderr, "%s = %s after loading, its default is %s\n", t->name, got, t->defval);
            errors++;
        }
    }
    if (util_cfg.gw_eager_limit != 262208) {
        fprintf(stderr, "DCFA_GW_EAGER_LIMIT: %zu, want its default 262208\n",
                util_cfg.gw_eager_limit);
        errors++;
    }
    if (util_cfg.sock_eager_limit != 32768) {
        fprintf(stderr, "DCFA_SOCK_EAGER_LIMIT=32k: %zu\n", util_cfg.sock_eager_limit);
        errors++;
    }
    if (errors)
        return 1;
    printf("tunables: %d registered, %d loaded: ok\n", util_nvars, util_ntunables);
    return 0;
}
