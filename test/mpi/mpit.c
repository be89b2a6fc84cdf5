/*
 * The MPI_T tool interface: control variables for the DCFA_* tunables (read
 * and written before MPI_Init, the written value in force after it, writes
 * refused after it), enumerations, categories covering every variable once,
 * the protocol counters as performance variables (the rendezvous counters
 * move when the eager limit written through MPI_T makes an 8000-byte message
 * go by rendezvous), and an event interface that has no events.
 */
#include "mtest.h"

#define MSG 8000

static int t_check(const char *what, int rc, int want)
{
    return mtest_check(rc == want, "%s: returned %d, expected %d", what, rc, want);
}

static unsigned long long pvar(MPI_T_pvar_session s, const char *name)
{
    int idx = -1, count;
    unsigned long long v = 0;
    MPI_T_pvar_handle h;
    if (!t_check(name, MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_SUCCESS))
        return 0;
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    MPI_T_pvar_read(s, h, &v);
    MPI_T_pvar_handle_free(s, &h);
    return v;
}

/* every packet of the rendezvous protocols, both directions */
static unsigned long long rndv_count(MPI_T_pvar_session s)
{
    static const char *const names[] = {"dcfa_rts_sent",  "dcfa_rts_received",  "dcfa_rtr_sent",
                                        "dcfa_rtr_received", "dcfa_done_sent", "dcfa_done_received"};
    unsigned long long n = 0;
    for (int i = 0; i < 6; i++)
        n += pvar(s, names[i]);
    return n;
}

int main(int argc, char **argv)
{
    int provided, ncvar, idx, len, verb, bind, scope, rank, size, count, n;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle ch;
    char name[256], desc[1024];
    unsigned long limit = 0;

    /* ---- before MPI_Init ---- */
    t_check("cvar_get_num before MPI_T_init", MPI_T_cvar_get_num(&ncvar), MPI_T_ERR_NOT_INITIALIZED);
    t_check("MPI_T_init_thread", MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    MPI_T_cvar_get_num(&ncvar);
    mtest_check(ncvar >= 30, "only %d control variables", ncvar);
    t_check("cvar_get_index(DCFA_EAGER_LIMIT)", MPI_T_cvar_get_index("DCFA_EAGER_LIMIT", &idx),
            MPI_SUCCESS);
    t_check("cvar_get_index(no such)", MPI_T_cvar_get_index("DCFA_NO_SUCH", &n),
            MPI_T_ERR_INVALID_NAME);
    len = 0;
    MPI_T_cvar_get_info(idx, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    int want_len = (int)strlen("DCFA_EAGER_LIMIT") + 1;
    mtest_check(len == want_len, "name length asked: %d, expected %d", len, want_len);
    len = sizeof name;
    int dlen = sizeof desc;
    MPI_T_cvar_get_info(idx, name, &len, &verb, &dt, &en, desc, &dlen, &bind, &scope);
    mtest_check(!strcmp(name, "DCFA_EAGER_LIMIT") && len == want_len && dt == MPI_UNSIGNED_LONG &&
                    en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT && strlen(desc) > 20,
                "cvar_get_info: name '%s' len %d type %d enum %p bind %d desc '%s'", name, len, dt,
                (void *)en, bind, desc);
    len = 5; /* a short buffer: truncated, terminated */
    MPI_T_cvar_get_info(idx, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    mtest_check(!strcmp(name, "DCFA") && len == 5, "short buffer: '%s' %d", name, len);
    MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count);
    MPI_T_cvar_read(ch, &limit);
    const char *env = getenv("DCFA_EAGER_LIMIT");
    unsigned long want = env ? strtoul(env, NULL, 0) : 16384;
    mtest_check(limit == want, "DCFA_EAGER_LIMIT before MPI_Init: %lu, expected %lu", limit, want);
    limit = 4096;
    t_check("cvar_write before MPI_Init", MPI_T_cvar_write(ch, &limit), MPI_SUCCESS);
    /* scope and verbosity from the registry: the ring's geometry must agree between
     * processes; how long a rank spins is its own; a user's setting, a tuner's, a test's */
    mtest_check(scope == MPI_T_SCOPE_ALL_EQ && verb == MPI_T_VERBOSITY_TUNER_BASIC,
                "DCFA_EAGER_LIMIT before MPI_Init: scope %d verbosity %d", scope, verb);
    static const struct {
        const char *name, *cat;
        int scope, verbosity;
    } want_meta[] = {
        {"DCFA_SPIN_US", "dcfa_progress", MPI_T_SCOPE_LOCAL, MPI_T_VERBOSITY_TUNER_BASIC},
        {"DCFA_FABRICS", "dcfa_fabric", MPI_T_SCOPE_LOCAL, MPI_T_VERBOSITY_USER_BASIC},
        {"DCFA_STAGE_CHUNK", "dcfa_protocol", MPI_T_SCOPE_ALL_EQ, MPI_T_VERBOSITY_TUNER_BASIC},
        {"DCFA_RING_START", "dcfa_protocol", MPI_T_SCOPE_ALL_EQ, MPI_T_VERBOSITY_MPIDEV_DETAIL},
        {"DCFA_IO_DS", "dcfa_io", MPI_T_SCOPE_LOCAL, MPI_T_VERBOSITY_TUNER_BASIC},
        {"DCFA_CTX_WAIT", "dcfa_dpm", MPI_T_SCOPE_LOCAL, MPI_T_VERBOSITY_USER_BASIC},
    };
    for (size_t w = 0; w < sizeof want_meta / sizeof want_meta[0]; w++) {
        int wi = -1, wscope = -1, wverb = -1, wcat = -1, cvars[256], nv = 0;
        MPI_T_cvar_get_index(want_meta[w].name, &wi);
        MPI_T_cvar_get_info(wi, NULL, NULL, &wverb, NULL, NULL, NULL, NULL, NULL, &wscope);
        MPI_T_category_get_index(want_meta[w].cat, &wcat);
        MPI_T_category_get_info(wcat, NULL, NULL, NULL, NULL, &nv, NULL, NULL);
        MPI_T_category_get_cvars(wcat, nv < 256 ? nv : 256, cvars);
        int in_cat = 0;
        for (int k = 0; k < nv && k < 256; k++)
            in_cat |= cvars[k] == wi;
        mtest_check(wi >= 0 && wscope == want_meta[w].scope && wverb == want_meta[w].verbosity &&
                        in_cat,
                    "%s: scope %d verbosity %d, in %s: %d", want_meta[w].name, wscope, wverb,
                    want_meta[w].cat, in_cat);
    }
    /* the launcher's variables are in the registry but are no control variables */
    t_check("cvar_get_index(DCFA_RSH)", MPI_T_cvar_get_index("DCFA_RSH", &n),
            MPI_T_ERR_INVALID_NAME);

    /* an enumeration: DCFA_RNDV_MODE is auto, read or write */
    MPI_T_cvar_get_index("DCFA_RNDV_MODE", &n);
    MPI_T_cvar_get_info(n, NULL, NULL, NULL, &dt, &en, NULL, NULL, NULL, NULL);
    int items = 0, v = -1;
    mtest_check(dt == MPI_INT && en != MPI_T_ENUM_NULL, "DCFA_RNDV_MODE: type %d enum %p", dt,
                (void *)en);
    if (en != MPI_T_ENUM_NULL) {
        MPI_T_enum_get_info(en, &items, NULL, NULL);
        len = sizeof name;
        MPI_T_enum_get_item(en, 1, &v, name, &len);
        mtest_check(items == 3 && v == 1 && !strcmp(name, "read"), "enum: %d items, item 1 = %d '%s'",
                    items, v, name);
        t_check("enum_get_item(3)", MPI_T_enum_get_item(en, 3, &v, name, &len),
                MPI_T_ERR_INVALID_ITEM);
    }

    /* categories: every control variable in exactly one */
    int ncat = 0, total = 0;
    MPI_T_category_get_num(&ncat);
    int *seen = calloc((size_t)ncvar, sizeof *seen);
    for (int c = 0; c < ncat; c++) {
        int nc = 0, np = 0, nsub = -1, ne = -1;
        MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, &nsub);
        MPI_T_category_get_num_events(c, &ne);
        mtest_check(nsub == 0 && ne == 0, "category %d: %d subcategories, %d events", c, nsub, ne);
        int *ix = malloc((size_t)(nc + 1) * sizeof *ix);
        MPI_T_category_get_cvars(c, nc, ix);
        for (int i = 0; i < nc; i++)
            if (ix[i] >= 0 && ix[i] < ncvar)
                seen[ix[i]]++;
        total += nc;
        free(ix);
    }
    for (int i = 0; i < ncvar; i++)
        mtest_check(seen[i] == 1, "control variable %d is in %d categories", i, seen[i]);
    mtest_check(total == ncvar, "categories hold %d control variables of %d", total, ncvar);
    free(seen);

    /* ---- the library runs with the value written ---- */
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    limit = 0;
    MPI_T_cvar_read(ch, &limit);
    mtest_check(limit == 4096, "DCFA_EAGER_LIMIT after MPI_Init: %lu, expected 4096", limit);
    t_check("cvar_write after MPI_Init", MPI_T_cvar_write(ch, &limit), MPI_T_ERR_CVAR_SET_NOT_NOW);
    MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope);
    mtest_check(scope == MPI_T_SCOPE_READONLY, "DCFA_EAGER_LIMIT scope after MPI_Init: %d", scope);
    MPI_T_cvar_handle_free(&ch);
    /* a collective algorithm choice can change while the library runs */
    int alg = -1, two = 2, before_alg = -1;
    MPI_T_cvar_get_index("DCFA_COLL_BCAST", &n);
    MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope);
    mtest_check(scope == MPI_T_SCOPE_ALL_EQ, "DCFA_COLL_BCAST scope: %d", scope);
    MPI_T_cvar_handle_alloc(n, NULL, &ch, &count);
    MPI_T_cvar_read(ch, &before_alg);
    t_check("DCFA_COLL_BCAST write after MPI_Init", MPI_T_cvar_write(ch, &two), MPI_SUCCESS);
    MPI_T_cvar_read(ch, &alg);
    mtest_check(alg == 2, "DCFA_COLL_BCAST read back %d, expected 2", alg);
    int bval = rank == 0 ? 77 : 0;
    MPI_Bcast(&bval, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mtest_check(bval == 77, "bcast with the algorithm written: %d", bval);
    MPI_T_cvar_write(ch, &before_alg);
    MPI_T_cvar_handle_free(&ch);

    MPI_T_pvar_session s;
    MPI_T_pvar_session_create(&s);
    int npvar = 0;
    MPI_T_pvar_get_num(&npvar);
    mtest_check(npvar >= 10, "only %d performance variables", npvar);
    if (size >= 2 && rank < 2) {
        static char buf[MSG];
        /* an RTR may already have come in during the bcast above, so DONE counts too */
        unsigned long long before = rndv_count(s);
        mtest_fill(buf, MSG, 0, 4);
        if (rank == 0)
            MPI_Send(buf, MSG, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, MSG, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_verify("message", buf, MSG, 0, 4);
        unsigned long long after = rndv_count(s);
        mtest_check(after > before, "an %d-byte message with a 4096-byte eager limit moved no "
                    "rendezvous counter (%llu -> %llu)", MSG, before, after);
    }
    /* the counters are continuous and read-only */
    MPI_T_pvar_handle h;
    unsigned long long val = 0;
    MPI_T_pvar_handle_alloc(s, 0, NULL, &h, &count);
    t_check("pvar_start", MPI_T_pvar_start(s, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
    t_check("pvar_write", MPI_T_pvar_write(s, h, &val), MPI_T_ERR_PVAR_NO_WRITE);
    t_check("pvar_reset", MPI_T_pvar_reset(s, h), MPI_T_ERR_PVAR_NO_WRITE);
    t_check("pvar_get_info(npvar)",
            MPI_T_pvar_get_info(npvar, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                NULL, NULL),
            MPI_T_ERR_INVALID_INDEX);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);

    /* no events */
    int nev = -1, nsrc = -1;
    MPI_T_event_get_num(&nev);
    MPI_T_source_get_num(&nsrc);
    mtest_check(nev == 0 && nsrc == 0, "%d events, %d sources", nev, nsrc);
    t_check("event_get_index", MPI_T_event_get_index("x", &n), MPI_T_ERR_INVALID_NAME);

    t_check("MPI_T_finalize", MPI_T_finalize(), MPI_SUCCESS);
    t_check("cvar_get_num after MPI_T_finalize", MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    return mtest_finalize();
}
