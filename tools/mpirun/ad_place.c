/* ad_place: placement: which host runs each process (mpirun's block placement continued by
 * spawns, info host/hosts), the node of every rank from the node keys, the children a job
 * reaches, and host names compared. */
#include "ad_place.h"
#include "ad_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Root: the host (index) a spawn's info names: an entry of mpirun's host
 * list, else the one whose daemon has that host name ("localhost": the
 * name of mpirun's host); -1 if none. */
static int ad_host_index(struct ad_tree *t, const char *name)
{
    char me[256] = "";

    for (int h = 0; h < t->nhosts; h++)
        if (strcmp(t->hosts[h], name) == 0)
            return h;
    if (strcmp(name, "localhost") == 0 && gethostname(me, sizeof(me) - 1) == 0)
        name = me;
    for (int h = 0; h < t->nhosts; h++)
        if (ad_same_host(t->hosts[h], name) || ad_same_host(t->hostname[h], name))
            return h;
    return -1;
}

/* Root: the next free slot of mpirun's host list (its block placement,
 * continued after job 0 and the spawns before). */
int ad_place_next(struct ad_tree *t)
{
    const struct mpirun_opts *o = t->opts;
    int h = t->place_host;
    int per = o->ppn > 0 ? o->ppn : o->hosts[h].slots;

    if (++t->place_used >= per) {
        t->place_used = 0;
        t->place_host = (h + 1) % (t->nhosts - o->ngateways); /* gateways: no ranks */
    }
    return h;
}

/* Root: the host of every process of the request (host_of[total]): info
 * host/hosts ("a,b:2": by blocks of their slots, pass after pass), else the
 * next free slots. 0, or -1 with the failure in res. */
int ad_place(struct ad_tree *t, const struct ad_spawn_req *req, int *host_of,
             struct ad_spawn_result *res)
{
    int r = 0;

    for (int i = 0; i < req->ncmds; i++) {
        const struct ad_spawn_cmd *c = &req->cmds[i];
        const char *list = NULL;
        int idx[64], slots[64], n = 0;
        for (int k = 0; k < c->ninfo; k++)
            if (strcmp(c->info_keys[k], "host") == 0 || strcmp(c->info_keys[k], "hosts") == 0)
                list = c->info_vals[k];
        for (const char *h = list; h != NULL && *h != '\0';) {
            size_t len = strcspn(h, ","), nlen = strcspn(h, ",:");
            char name[256];
            long sl = 1;
            if (nlen < len) {
                char *end;
                sl = strtol(h + nlen + 1, &end, 10);
                if (end != h + len || sl < 1)
                    sl = -1;
            }
            snprintf(name, sizeof(name), "%.*s", (int)(nlen < sizeof(name) ? nlen : 255), h);
            if (n == 64 || sl < 1 || (idx[n] = ad_host_index(t, name)) < 0) {
                struct ad_buf all = {0};
                for (int k = 0; k < t->nhosts; k++) {
                    if (k > 0)
                        ad_buf_add(&all, ",", 1);
                    ad_buf_add(&all, t->hosts[k], strlen(t->hosts[k]));
                }
                ad_buf_add(&all, "", 1);
                res->rc = n == 64 || sl < 1 ? -EINVAL : -EHOSTUNREACH;
                res->errcmd = i;
                if (n == 64)
                    snprintf(res->msg, sizeof(res->msg),
                             "spawn: info host lists more than 64 hosts");
                else if (sl < 1)
                    snprintf(res->msg, sizeof(res->msg), "spawn: bad info host entry '%.*s'",
                             (int)(len < 200 ? len : 200), h);
                else
                    snprintf(res->msg, sizeof(res->msg),
                             "spawn: info host '%.200s' is not one of mpirun's hosts (%.300s)",
                             name, all.data != NULL ? all.data : "");
                ad_buf_free(&all);
                return -1;
            }
            slots[n++] = (int)sl;
            h += len;
            if (*h == ',')
                h++;
        }
        for (int k = 0, h = 0, used = 0; k < c->maxprocs; k++, r++) {
            if (n == 0) {
                host_of[r] = ad_place_next(t);
                continue;
            }
            host_of[r] = idx[h];
            if (++used == slots[h]) {
                used = 0;
                h = (h + 1) % n;
            }
        }
    }
    return 0;
}

/* The part of a job whose rank r runs on host host_of[r] (node host + 1). */
struct ad_jtree *ad_jtree_new(struct ad_tree *t, const int *host_of, int size)
{
    struct ad_jtree *jt = calloc(1, sizeof(*jt));

    if (jt == NULL || (jt->kid_has = calloc((size_t)t->nkids + 1, 1)) == NULL) {
        free(jt);
        return NULL;
    }
    jt->res.errcmd = -1;
    for (int r = 0; r < size; r++) {
        struct ad_link *l = ad_tree_kid_toward(t, host_of[r] + 1);
        if (l != NULL && !jt->kid_has[l - t->kids]) {
            jt->kid_has[l - t->kids] = 1;
            jt->kids_with++;
        }
    }
    return jt;
}

int ad_tree_rank_node(struct ad_daemon *d, const struct ad_job *job, int rank)
{
    struct ad_tree *t = ad_t(d);

    if (t == NULL || job->num != 0 || rank < 0 || rank >= t->size)
        return -1;
    return t->host_of[rank] + 1;
}

/* The node of every rank from the subtree's (node, key) entries and the
 * DCFA_NODE_KEY a rank's environment sets (root only). */
int ad_tree_node_of(struct ad_tree *t, int *node_of)
{
    extern char **environ;
    char(*keys)[UTIL_NODE_KEY_CAP] = calloc((size_t)t->size, sizeof(*keys));
    int nkeys = 0, r = 0;

    t->hostkey = calloc((size_t)t->nhosts, sizeof(*t->hostkey));
    t->hostname = calloc((size_t)t->nhosts, sizeof(*t->hostname));
    t->hostgw = calloc((size_t)t->nhosts, sizeof(*t->hostgw));
    if (t->hostkey == NULL || t->hostname == NULL || t->hostgw == NULL || keys == NULL) {
        free(keys);
        return -ENOMEM;
    }
    for (int i = 0; i < t->nkids; i++) {
        struct ad_cursor c = {t->kids[i].ready.data, t->kids[i].ready.data + t->kids[i].ready.len,
                              0};
        while (c.p < c.end && !c.bad) {
            long node = ad_take_int(&c, 1, t->nhosts);
            const char *key = ad_take(&c);
            const char *name = ad_take(&c);
            const char *gw = ad_take(&c);
            if (!c.bad) {
                snprintf(t->hostkey[node - 1], UTIL_NODE_KEY_CAP, "%s", key);
                snprintf(t->hostname[node - 1], sizeof(t->hostname[0]), "%s", name);
                snprintf(t->hostgw[node - 1], sizeof(t->hostgw[0]), "%s", gw);
            }
        }
    }
    for (int a = 0; a < t->opts->napps; a++) {
        const struct mpirun_app *app = &t->opts->apps[a];
        char *const *envs[3] = {environ, t->opts->genv, app->env};
        int nenvs[3] = {-1, t->opts->ngenv, app->nenv};
        char forced[UTIL_NODE_KEY_CAP] = "";
        int has = 0;
        for (int l = 0; l < 3; l++)
            for (int i = 0; envs[l] != NULL && (nenvs[l] < 0 ? envs[l][i] != NULL : i < nenvs[l]);
                 i++)
                if (strncmp(envs[l][i], "DCFA_NODE_KEY=", 14) == 0 && envs[l][i][14] != '\0')
                    has = 1;
        if (has)
            ad_node_key(forced, sizeof(forced), envs, nenvs, 3);
        for (int i = 0; i < app->nprocs; i++, r++) {
            const char *key = has ? forced : t->hostkey[t->host_of[r]];
            int id = 0;
            while (id < nkeys && strcmp(keys[id], key) != 0)
                id++;
            if (id == nkeys)
                snprintf(keys[nkeys++], UTIL_NODE_KEY_CAP, "%s", key);
            node_of[r] = id;
        }
    }
    free(keys);
    return 0;
}

int ad_same_host(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");

    if (strcmp(a, b) == 0)
        return 1;
    return la == lb && strncmp(a, b, la) == 0 && (a[la] == '\0' || b[lb] == '\0');
}
