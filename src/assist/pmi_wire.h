/* PMI-1 "simple" wire format helpers, shared by the library's client
 * (src/assist) and the assist daemon (tools/mpirun). Header-only because
 * mpirun does not link libmpi.
 *
 * A message is one line: space-separated "key=value" tokens ending in '\n',
 * the first token being "cmd=<name>". Values contain no spaces, except the
 * abort message "error_msg=", which is always last and runs to the end of
 * the line.
 */
#ifndef DCFA_ASSIST_PMI_WIRE_H
#define DCFA_ASSIST_PMI_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define ASSIST_WIRE_LINE_MAX    2048 /* longest line, '\n' included */
#define ASSIST_WIRE_KVSNAME_MAX 256

/* Finds token "key=" in line (at the start or after a space). Returns a
 * pointer to its value and its length in *len (up to the next space or end
 * of line), or NULL. */
static inline const char *assist_wire_find(const char *line, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    const char *p = line;

    while (*p != '\0' && *p != '\n') {
        while (*p == ' ')
            p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1;
            *len = strcspn(v, " \n");
            return v;
        }
        p += strcspn(p, " \n");
    }
    return NULL;
}

/* Copies the value of "key=" into out[outlen]. 0, -ENOENT or -ENOSPC. */
static inline int assist_wire_get(const char *line, const char *key, char *out, size_t outlen)
{
    size_t len;
    const char *v = assist_wire_find(line, key, &len);

    if (v == NULL)
        return -ENOENT;
    if (len + 1 > outlen)
        return -ENOSPC;
    memcpy(out, v, len);
    out[len] = '\0';
    return 0;
}

/* Integer value of "key=", or -ENOENT / -EINVAL. */
static inline int assist_wire_get_int(const char *line, const char *key, long *out)
{
    char buf[32];
    char *end;
    int rc = assist_wire_get(line, key, buf, sizeof(buf));

    if (rc != 0)
        return rc == -ENOSPC ? -EINVAL : rc;
    errno = 0;
    *out = strtol(buf, &end, 10);
    if (errno != 0 || end == buf || *end != '\0')
        return -EINVAL;
    return 0;
}

/* 1 when the line's command is exactly "cmd=<name>". */
static inline int assist_wire_is(const char *line, const char *name)
{
    size_t len;
    const char *v = assist_wire_find(line, "cmd", &len);

    return v != NULL && strlen(name) == len && strncmp(v, name, len) == 0;
}

/* 1 when s is a valid key: 1..maxlen chars, no space, '=' or control char. */
static inline int assist_wire_key_ok(const char *s, size_t maxlen)
{
    size_t n = strlen(s);

    if (n == 0 || n > maxlen)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '=' || c == 0x7f)
            return 0;
    }
    return 1;
}

/* 1 when s is a valid value: 0..maxlen chars, no space or control char. */
static inline int assist_wire_value_ok(const char *s, size_t maxlen)
{
    size_t n = strlen(s);

    if (n > maxlen)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f)
            return 0;
    }
    return 1;
}

#endif
