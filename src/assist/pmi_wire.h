/* PMI wire format helpers, shared by the library's client (src/assist) and
 * the assist daemon (tools/mpirun). Header-only because mpirun does not link
 * libmpi.
 *
 * PMI-1 ("simple"): a message is one line: space-separated "key=value"
 * tokens ending in '\n', the first token being "cmd=<name>". Values contain
 * no spaces, except the abort message "error_msg=", which is always last and
 * runs to the end of the line.
 *
 * PMI-2: after a PMI-1 "cmd=init pmi_version=2" line and its reply, every
 * message is a 6-character decimal length (padded with spaces on either
 * side) followed by that many bytes of "key=value;" tokens, the first being
 * "cmd=<name>;". Values contain no ';' (there is no escape).
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

/* ---- PMI-2 ------------------------------------------------------------------ */

#define ASSIST_WIRE2_HDR 6

/* The length in a 6-character header, or -1. */
static inline long assist_wire2_len(const char *hdr)
{
    long v = 0;
    int i = 0, digits = 0;

    while (i < ASSIST_WIRE2_HDR && hdr[i] == ' ')
        i++;
    for (; i < ASSIST_WIRE2_HDR && hdr[i] >= '0' && hdr[i] <= '9'; i++, digits++)
        v = v * 10 + (hdr[i] - '0');
    while (i < ASSIST_WIRE2_HDR && hdr[i] == ' ')
        i++;
    return i == ASSIST_WIRE2_HDR && digits > 0 ? v : -1;
}

/* Finds "key=" at the start of msg or after a ';'; value length up to ';'. */
static inline const char *assist_wire2_find(const char *msg, const char *key, size_t *len)
{
    size_t klen = strlen(key);

    for (const char *p = msg; *p != '\0';) {
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            *len = strcspn(p + klen + 1, ";");
            return p + klen + 1;
        }
        p += strcspn(p, ";");
        if (*p == ';')
            p++;
    }
    return NULL;
}

static inline int assist_wire2_get(const char *msg, const char *key, char *out, size_t outlen)
{
    size_t len;
    const char *v = assist_wire2_find(msg, key, &len);

    if (v == NULL)
        return -ENOENT;
    if (len + 1 > outlen)
        return -ENOSPC;
    memcpy(out, v, len);
    out[len] = '\0';
    return 0;
}

static inline int assist_wire2_get_int(const char *msg, const char *key, long *out)
{
    char buf[32];
    char *end;
    int rc = assist_wire2_get(msg, key, buf, sizeof(buf));

    if (rc != 0)
        return rc == -ENOSPC ? -EINVAL : rc;
    errno = 0;
    *out = strtol(buf, &end, 10);
    if (errno != 0 || end == buf || *end != '\0')
        return -EINVAL;
    return 0;
}

static inline int assist_wire2_is(const char *msg, const char *name)
{
    size_t len;
    const char *v = assist_wire2_find(msg, "cmd", &len);

    return v != NULL && strlen(name) == len && strncmp(v, name, len) == 0;
}

/* "TRUE"/"true" -> 1 */
static inline int assist_wire2_true(const char *msg, const char *key)
{
    char buf[8];

    return assist_wire2_get(msg, key, buf, sizeof(buf)) == 0 &&
           (strcmp(buf, "TRUE") == 0 || strcmp(buf, "true") == 0);
}

#endif
