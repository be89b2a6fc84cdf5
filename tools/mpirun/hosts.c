/* mpirun: host lists (-hosts a,b:2), host files and rank placement by block;
 * the universe size they imply. See docs/launcher.md ("Several hosts"). */
#include "mpirun.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MPIRUN_HOST_NAME_MAX 255
#define MPIRUN_CTX(o)        ((o)->host_ctx != NULL ? (o)->host_ctx : "")
#define MPIRUN_SLOTS_MAX     4096

/* A host name: letters, digits, '.', '-', '_'; not starting with '-'. */
static int mpirun_host_name_ok(const char *s, size_t len)
{
    if (len == 0 || len > MPIRUN_HOST_NAME_MAX || s[0] == '-')
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-' && s[i] != '_')
            return 0;
    return 1;
}

static int mpirun_slots_parse(const char *s, int *out)
{
    char *end;
    long v;

    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > MPIRUN_SLOTS_MAX)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

/* Adds name (len bytes) with slots (explicit: written as :N or slots=N); a name seen
 * before gets the slots added. */
static int mpirun_host_add(struct mpirun_opts *o, const char *name, size_t len, int slots,
                           int explicit)
{
    struct mpirun_host *h;

    o->slots_given |= explicit;
    for (int i = 0; i < o->nhosts; i++) {
        if (strlen(o->hosts[i].name) == len && strncmp(o->hosts[i].name, name, len) == 0) {
            o->hosts[i].slots += slots;
            if (o->hosts[i].slots > MPIRUN_SLOTS_MAX)
                o->hosts[i].slots = MPIRUN_SLOTS_MAX;
            return 0;
        }
    }
    h = realloc(o->hosts, (size_t)(o->nhosts + 1) * sizeof(*h));
    if (h == NULL)
        return -ENOMEM;
    o->hosts = h;
    h = &o->hosts[o->nhosts];
    h->name = strndup(name, len);
    if (h->name == NULL)
        return -ENOMEM;
    h->slots = slots;
    o->nhosts++;
    return 0;
}

/* "name" or "name:slots" -> added, or -EINVAL (no message). */
static int mpirun_host_entry(struct mpirun_opts *o, const char *entry)
{
    const char *colon = strchr(entry, ':');
    size_t len = colon != NULL ? (size_t)(colon - entry) : strlen(entry);
    int slots = 1;

    if (!mpirun_host_name_ok(entry, len))
        return -EINVAL;
    if (colon != NULL && mpirun_slots_parse(colon + 1, &slots) != 0)
        return -EINVAL;
    return mpirun_host_add(o, entry, len, slots, colon != NULL);
}

int mpirun_hosts_add_list(struct mpirun_opts *o, const char *list)
{
    char *copy, *save = NULL;
    int rc = 0;

    if (*list == '\0' || list[0] == ',' || list[strlen(list) - 1] == ',' ||
        strstr(list, ",,") != NULL) {
        fprintf(stderr, "mpirun: %sbad host list '%s' (an empty entry)\n", MPIRUN_CTX(o), list);
        return -EINVAL;
    }
    copy = strdup(list);
    if (copy == NULL)
        return -ENOMEM;
    for (char *e = strtok_r(copy, ",", &save); rc == 0 && e != NULL;
         e = strtok_r(NULL, ",", &save)) {
        rc = mpirun_host_entry(o, e);
        if (rc == -EINVAL)
            fprintf(stderr,
                    "mpirun: %sbad host '%s' in host list '%s' (expected name or name:slots)\n",
                    MPIRUN_CTX(o), e, list);
    }
    free(copy);
    return rc;
}

/* One host file line without its comment: "name", "name:N" or "name slots=N". */
static int mpirun_hostfile_line(struct mpirun_opts *o, char *line)
{
    char *save = NULL;
    char *name = strtok_r(line, " \t\r", &save);
    char *extra = strtok_r(NULL, " \t\r", &save);
    int slots = 1;

    if (name == NULL)
        return 0; /* blank */
    if (strtok_r(NULL, " \t\r", &save) != NULL)
        return -EINVAL;
    if (extra != NULL) {
        if (strchr(name, ':') != NULL || strncmp(extra, "slots=", 6) != 0 ||
            mpirun_slots_parse(extra + 6, &slots) != 0)
            return -EINVAL;
        if (!mpirun_host_name_ok(name, strlen(name)))
            return -EINVAL;
        return mpirun_host_add(o, name, strlen(name), slots, 1);
    }
    return mpirun_host_entry(o, name);
}

/* The message of a bad host file: to stderr (after o's context), or to err[cap] when
 * given. */
static void mpirun_hosts_err(const struct mpirun_opts *o, char *err, size_t cap, const char *fmt,
                             ...) __attribute__((format(printf, 4, 5)));

static void mpirun_hosts_err(const struct mpirun_opts *o, char *err, size_t cap, const char *fmt,
                             ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (err != NULL) {
        vsnprintf(err, cap, fmt, ap);
    } else {
        fprintf(stderr, "mpirun: %s", MPIRUN_CTX(o));
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
}

int mpirun_hosts_read_file_err(struct mpirun_opts *o, const char *path, char *err, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int lineno = 0, rc = 0, before = o->nhosts;

    if (f == NULL) {
        mpirun_hosts_err(o, err, cap, "cannot read host file '%s': %s", path, strerror(errno));
        return -EINVAL;
    }
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        size_t len = strlen(line);
        char shown[128];
        lineno++;
        if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
            mpirun_hosts_err(o, err, cap, "host file '%s' line %d: line too long", path, lineno);
            rc = -EINVAL;
            break;
        }
        line[strcspn(line, "\n")] = '\0';
        snprintf(shown, sizeof(shown), "%.127s", line);
        line[strcspn(line, "#")] = '\0';
        rc = mpirun_hostfile_line(o, line);
        if (rc == -EINVAL)
            mpirun_hosts_err(o, err, cap,
                             "host file '%s' line %d: bad entry '%s' (expected name, name:slots or "
                             "name slots=N)",
                             path, lineno, shown);
    }
    if (rc == 0 && ferror(f)) {
        mpirun_hosts_err(o, err, cap, "cannot read host file '%s': %s", path, strerror(errno));
        rc = -EINVAL;
    }
    fclose(f);
    if (rc == 0 && o->nhosts == before) {
        mpirun_hosts_err(o, err, cap, "host file '%s' names no host", path);
        rc = -EINVAL;
    }
    return rc;
}

int mpirun_hosts_read_file(struct mpirun_opts *o, const char *path)
{
    return mpirun_hosts_read_file_err(o, path, NULL, 0);
}

void mpirun_hosts_free(struct mpirun_opts *o)
{
    for (int i = 0; i < o->nhosts; i++)
        free(o->hosts[i].name);
    free(o->hosts);
    o->hosts = NULL;
    o->nhosts = 0;
}

int mpirun_hosts_default_size(const struct mpirun_opts *o)
{
    long n = 0;

    if (o->nhosts == 0)
        return 0;
    if (o->ppn > 0)
        n = (long)o->ppn * (o->nhosts - o->ngateways); /* every rank host: global and own */
    else
        for (int i = 0; i < o->nhosts - o->ngateways; i++)
            n += o->hosts[i].slots;
    return n > INT_MAX ? INT_MAX : (int)n;
}

void mpirun_hosts_place(const struct mpirun_opts *o, int size, int *host_of)
{
    int gh = 0, gused = 0, r = 0;

    for (int a = 0; a < o->napps && r < size; a++) {
        const struct mpirun_app *app = &o->apps[a];
        int own = app->nhosts > 0, oh = 0, oused = 0;
        int *h = own ? &oh : &gh, *used = own ? &oused : &gused;
        for (int k = 0; k < app->nprocs && r < size; k++, r++) {
            int per = o->ppn > 0 ? o->ppn : own ? app->hosts[*h].slots : o->hosts[*h].slots;
            host_of[r] = own ? app->host_idx[*h] : *h;
            if (++*used == per) {
                *used = 0;
                *h = (*h + 1) % (own ? app->nhosts : o->nglobal); /* gateways: no ranks */
            }
        }
    }
}

/* The slots of a program's own list (-ppn x hosts, else the sum of the slots). */
static long mpirun_app_slots(const struct mpirun_opts *o, const struct mpirun_app *app)
{
    long n = 0;

    if (o->ppn > 0)
        return (long)o->ppn * app->nhosts;
    for (int k = 0; k < app->nhosts; k++)
        n += app->hosts[k].slots;
    return n;
}

int mpirun_hosts_programs(struct mpirun_opts *o)
{
    o->nglobal = o->nhosts;
    for (int a = 1; a < o->napps; a++) {
        struct mpirun_app *app = &o->apps[a];
        if (app->nhosts == 0)
            continue;
        if (o->nglobal == 0) {
            fprintf(stderr,
                    "mpirun: %s of program %d: program 1 has no hosts (give -hosts or -hostfile "
                    "before the first program too)\n",
                    app->host_opt, a + 1);
            return -EINVAL;
        }
        if ((app->host_idx = calloc((size_t)app->nhosts, sizeof(int))) == NULL)
            return -ENOMEM;
        for (int k = 0; k < app->nhosts; k++) {
            const struct mpirun_host *ph = &app->hosts[k];
            int i = 0;
            while (i < o->nhosts && strcmp(o->hosts[i].name, ph->name) != 0)
                i++;
            if (i == o->nhosts) {
                int rc = mpirun_host_add(o, ph->name, strlen(ph->name), ph->slots, 0);
                if (rc != 0)
                    return rc;
            } else if (i >= o->nglobal && ph->slots > o->hosts[i].slots) {
                o->hosts[i].slots = ph->slots; /* spawns' slots: the most a program gave */
            }
            app->host_idx[k] = i;
        }
        long slots = mpirun_app_slots(o, app);
        if (!app->nprocs_given && slots > MPIRUN_SLOTS_MAX) {
            fprintf(stderr,
                    "mpirun: %s of program %d: its hosts offer more than 4096 ranks: give -n\n",
                    app->host_opt, a + 1);
            return -EINVAL;
        } else if (!app->nprocs_given) {
            app->nprocs = (int)slots; /* as many as its hosts offer */
        } else if (app->slots_given && o->ppn == 0 && app->nprocs > slots) {
            fprintf(stderr,
                    "mpirun: %s of program %d: -n %d does not fit on '%s' (%ld slots; give "
                    "fewer ranks, more slots or -ppn)\n",
                    app->host_opt, a + 1, app->nprocs, app->host_arg, slots);
            return -EINVAL;
        }
    }
    return 0;
}

int mpirun_hosts_blame(const struct mpirun_opts *o, const char *msg)
{
    static const char *const starts[] = {"mpirun: cannot start the assist daemon on host '",
                                         "mpirun: no answer from the assist daemon on host '"};
    const char *host = NULL;
    size_t len;

    for (int i = 0; i < 2 && host == NULL; i++)
        if (strncmp(msg, starts[i], strlen(starts[i])) == 0)
            host = msg + strlen(starts[i]);
    if (host == NULL)
        return 0;
    len = strcspn(host, "'");
    for (int a = 1; a < o->napps; a++)
        for (int k = 0; k < o->apps[a].nhosts; k++)
            if (strlen(o->apps[a].hosts[k].name) == len &&
                strncmp(o->apps[a].hosts[k].name, host, len) == 0) {
                fprintf(stderr, "mpirun: %s of program %d: host '%.*s' cannot be reached\n",
                        o->apps[a].host_opt, a + 1, (int)len, host);
                return 1;
            }
    return 0;
}

int mpirun_gateways_add(struct mpirun_opts *o, const char *list)
{
    int first = o->nhosts;
    if (o->nhosts == 0) {
        fprintf(stderr, "mpirun: --gateways needs -hosts or -hostfile (the ranks' hosts)\n");
        return -EINVAL;
    }
    for (const char *s = list; *s;) {
        size_t k = strcspn(s, ",");
        for (int i = 0; i < o->nhosts; i++) {
            if (strlen(o->hosts[i].name) == k && strncmp(o->hosts[i].name, s, k) == 0) {
                fprintf(stderr, "mpirun: gateway '%.*s' is %s\n", (int)k, s,
                        i < first ? "also a host for ranks" : "named twice");
                return -EINVAL;
            }
        }
        if (!mpirun_host_name_ok(s, k)) {
            fprintf(stderr, "mpirun: bad gateway '%.*s' in '%s'\n", (int)k, s, list);
            return -EINVAL;
        }
        int rc = mpirun_host_add(o, s, k, 1, 0);
        if (rc != 0)
            return rc;
        s += k + (s[k] == ',');
    }
    o->ngateways = o->nhosts - first;
    return 0;
}

/* ---- settings from the environment: the universe size, the grace of a rank
 * that never called MPI_Init ------------------------------------------------- */

#define MPIRUN_USIZE_MAX 1000000

int mpirun_env_read(struct mpirun_opts *o)
{
    const char *usize = getenv("DCFA_UNIVERSE_SIZE");
    const char *over = getenv("DCFA_OVERSUBSCRIBE");
    const char *grace = getenv("DCFA_NOINIT_GRACE");
    char *end;
    long v;

    o->noinit_grace = MPIRUN_NOINIT_GRACE;
    if (grace != NULL && *grace != '\0') {
        errno = 0;
        double g = strtod(grace, &end);
        if (errno != 0 || *end != '\0' || !(g >= 0 && g <= 86400)) {
            fprintf(stderr,
                    "mpirun: bad DCFA_NOINIT_GRACE '%s' (seconds, 0 to 86400)\n"
                    "mpirun: see 'mpirun --help'\n",
                    grace);
            return -EINVAL;
        }
        o->noinit_grace = g;
    }

    if (usize != NULL && *usize != '\0') {
        errno = 0;
        v = strtol(usize, &end, 10);
        if (errno != 0 || *end != '\0' || v < 1 || v > MPIRUN_USIZE_MAX) {
            fprintf(stderr,
                    "mpirun: bad DCFA_UNIVERSE_SIZE '%s' (1 to 1000000)\n"
                    "mpirun: see 'mpirun --help'\n",
                    usize);
            return -EINVAL;
        }
        o->universe = (int)v;
    }
    if (over != NULL && *over != '\0') {
        if (strcmp(over, "0") != 0 && strcmp(over, "1") != 0) {
            fprintf(stderr, "mpirun: bad DCFA_OVERSUBSCRIBE '%s' (0 or 1)\nmpirun: see 'mpirun --help'\n",
                    over);
            return -EINVAL;
        }
        o->no_oversubscribe = *over == '0';
    }
    return 0;
}

void mpirun_default_universe(struct mpirun_opts *o)
{
    long size = 0, cpus = sysconf(_SC_NPROCESSORS_ONLN);

    if (o->universe != 0)
        return;
    for (int a = 0; a < o->napps; a++)
        size += o->apps[a].nprocs;
    if (o->nhosts > 0 && mpirun_hosts_default_size(o) > size)
        size = mpirun_hosts_default_size(o);
    else if (o->nhosts == 0 && cpus > size)
        size = cpus;
    o->universe = size > MPIRUN_USIZE_MAX ? MPIRUN_USIZE_MAX : (int)size;
}
