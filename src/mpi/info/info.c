/* Info objects: a small ordered array of (key, value) strings per object.
 * MPI_INFO_ENV (index 1) describes how the program was started (MPI 4.1 11.2.6). */
#include "mpi/info/info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct info_obj {
    int n, cap;
    char **keys, **vals;
} info_obj;

static util_htab info_tab;
static int info_ready;

static void info_setup(void);

static info_obj *info_get(MPI_Info h)
{
    if (MPII_HANDLE_KIND(h) != MPII_KIND_INFO)
        return NULL;
    info_setup();
    return util_htab_get(&info_tab, MPII_HANDLE_INDEX(h));
}

int mpii_info_exists(MPI_Info info) { return info_get(info) != NULL; }

MPI_Info mpii_info_new(void)
{
    int idx;
    info_setup();
    util_htab_alloc(&info_tab, &idx);
    return MPII_HANDLE(MPII_KIND_INFO, idx);
}

static int info_find(const info_obj *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return i;
    return -1;
}

static void info_clear(info_obj *o)
{
    for (int i = 0; i < o->n; i++) {
        free(o->keys[i]);
        free(o->vals[i]);
    }
    free(o->keys);
    free(o->vals);
    memset(o, 0, sizeof *o);
}

void mpii_info_set(MPI_Info info, const char *key, const char *value)
{
    info_obj *o = info_get(info);
    if (!o)
        return;
    int i = info_find(o, key);
    if (i >= 0) {
        free(o->vals[i]);
        o->vals[i] = util_strdup(value);
        return;
    }
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 8;
        o->keys = util_realloc(o->keys, (size_t)o->cap * sizeof *o->keys);
        o->vals = util_realloc(o->vals, (size_t)o->cap * sizeof *o->vals);
    }
    o->keys[o->n] = util_strdup(key);
    o->vals[o->n] = util_strdup(value);
    o->n++;
}

const char *mpii_info_lookup(MPI_Info info, const char *key)
{
    info_obj *o = info_get(info);
    int i = o ? info_find(o, key) : -1;
    return i >= 0 ? o->vals[i] : NULL;
}

int mpii_info_delete(MPI_Info info, const char *key)
{
    info_obj *o = info_get(info);
    int i = o ? info_find(o, key) : -1;
    if (i < 0)
        return UTIL_ENOENT;
    free(o->keys[i]);
    free(o->vals[i]);
    memmove(&o->keys[i], &o->keys[i + 1], (size_t)(o->n - i - 1) * sizeof *o->keys);
    memmove(&o->vals[i], &o->vals[i + 1], (size_t)(o->n - i - 1) * sizeof *o->vals);
    o->n--;
    return UTIL_OK;
}

int mpii_info_nkeys(MPI_Info info)
{
    info_obj *o = info_get(info);
    return o ? o->n : 0;
}

const char *mpii_info_nthkey(MPI_Info info, int n)
{
    info_obj *o = info_get(info);
    return o && n >= 0 && n < o->n ? o->keys[n] : NULL;
}

MPI_Info mpii_info_dup(MPI_Info info)
{
    info_obj *o = info_get(info);
    if (!o)
        return MPI_INFO_NULL;
    MPI_Info h = mpii_info_new();
    o = info_get(info); /* the table may have grown */
    for (int i = 0; i < o->n; i++)
        mpii_info_set(h, o->keys[i], o->vals[i]);
    return h;
}

void mpii_info_free(MPI_Info info)
{
    info_obj *o = info_get(info);
    if (!o || info == MPI_INFO_ENV)
        return;
    info_clear(o);
    util_htab_free(&info_tab, MPII_HANDLE_INDEX(info));
}

/* ---- MPI_INFO_ENV ------------------------------------------------------------------------ */

/* argv[0] and the rest of the command line, from /proc/self/cmdline */
static void info_env_cmdline(MPI_Info env)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    char buf[MPI_MAX_INFO_VAL];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    if (n == 0)
        return;
    mpii_info_set(env, "command", buf);
    size_t first = strlen(buf) + 1;
    if (first >= n)
        return;
    for (size_t i = first; i + 1 < n; i++)
        if (buf[i] == 0)
            buf[i] = ' ';
    mpii_info_set(env, "argv", buf + first);
}

static void info_env_args(MPI_Info env, int argc, char **argv)
{
    if (argc < 1 || !argv[0])
        return;
    mpii_info_set(env, "command", argv[0]);
    char buf[MPI_MAX_INFO_VAL];
    size_t len = 0;
    buf[0] = 0;
    for (int i = 1; i < argc && argv[i]; i++) {
        int w = snprintf(buf + len, sizeof buf - len, "%s%s", i > 1 ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof buf - len)
            break;
        len += (size_t)w;
    }
    if (argc > 1)
        mpii_info_set(env, "argv", buf);
}

static void info_env_fill(MPI_Info env, int argc, char **argv)
{
    char buf[MPI_MAX_INFO_VAL];
    if (argv)
        info_env_args(env, argc, argv);
    else
        info_env_cmdline(env);
    /* the same before and after MPI_Init (MPI_Info_create_env may be called
     * either side of it): the launch size comes from the process manager */
    const char *np = getenv("PMI_SIZE");
    mpii_info_set(env, "maxprocs", np && *np ? np : "1");
    if (gethostname(buf, sizeof buf - 1) == 0) {
        buf[sizeof buf - 1] = 0;
        mpii_info_set(env, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        mpii_info_set(env, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        mpii_info_set(env, "wdir", buf);
}

static void info_setup(void)
{
    if (info_ready)
        return;
    info_ready = 1;
    util_htab_init(&info_tab, sizeof(info_obj), 2); /* NULL, ENV */
    info_env_fill(MPI_INFO_ENV, 0, NULL);
}

int mpii_info_init(void)
{
    info_setup();
    info_env_fill(MPI_INFO_ENV, 0, NULL); /* now with maxprocs and thread_level */
    return MPI_SUCCESS;
}

MPI_Info mpii_info_env(int argc, char **argv)
{
    MPI_Info h = mpii_info_new();
    info_env_fill(h, argc, argv);
    return h;
}
