/* The definition of "same node" (util_node_key), header-only so that mpirun,
 * which does not link libmpi, computes the same key for its process mapping.
 *
 * The key is the hostname, the kernel's boot id and the device of /dev/shm,
 * so test "hosts" made of namespaces with their own hostname and /dev/shm
 * count as different nodes; override (DCFA_NODE_KEY), when set and not
 * empty, replaces it. Only [A-Za-z0-9._:-] are kept (others become '_'). */
#ifndef DCFA_UTIL_NODE_KEY_H
#define DCFA_UTIL_NODE_KEY_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UTIL_NODE_KEY_CAP 128 /* bytes for a key and its NUL */

static inline void util_node_key_make(char *key, size_t cap, const char *override)
{
    char raw[3 * 64 + 64] = "";
    size_t n = 0;

    if (override != NULL && *override != '\0') {
        snprintf(raw, sizeof raw, "%s", override);
    } else {
        char host[65] = "", boot[64] = "";
        struct stat st;
        gethostname(host, sizeof host - 1);
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
        if (f) {
            if (!fgets(boot, sizeof boot, f))
                boot[0] = 0;
            fclose(f);
        }
        boot[strcspn(boot, "\n")] = 0;
        unsigned long long dev = stat("/dev/shm", &st) == 0 ? (unsigned long long)st.st_dev : 0;
        snprintf(raw, sizeof raw, "%s:%.36s:%llx", host, boot, dev);
    }
    for (const char *s = raw; *s && n + 1 < cap; s++) {
        char ch = *s;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == ':' || ch == '-';
        key[n++] = ok ? ch : '_';
    }
    if (n == 0 && cap > 1)
        key[n++] = '_';
    key[n] = 0;
}

#endif
