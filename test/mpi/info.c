/* Info objects: create/set/get/get_valuelen/get_nkeys/get_nthkey/delete/
 * dup/free, Info_get_string (MPI 4), MPI_INFO_ENV, error classes for a
 * missing key. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Info info, dup, env;
    char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    int flag, nkeys, i, len, rc;

    mtest_init(&argc, &argv);
    MPI_Info_create(&info);
    MPI_Info_get_nkeys(info, &nkeys);
    mtest_check_int("nkeys of a new info", nkeys, 0);
    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "two words");
    MPI_Info_set(info, "gamma", "3");
    MPI_Info_set(info, "alpha", "one");       /* replaces */
    MPI_Info_get_nkeys(info, &nkeys);
    mtest_check_int("nkeys after 4 sets of 3 keys", nkeys, 3);

    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag);
    mtest_check(flag && strcmp(value, "one") == 0, "alpha = '%s' (flag %d)", value, flag);
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    mtest_check(flag && len == 9, "valuelen(beta) = %d (flag %d)", len, flag);
    MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL, value, &flag);
    mtest_check_int("get of a missing key", flag, 0);

    /* nthkey: the keys in order of first insertion. */
    for (i = 0; i < 3; i++) {
        static const char *want[] = {"alpha", "beta", "gamma"};
        MPI_Info_get_nthkey(info, i, key);
        mtest_check(strcmp(key, want[i]) == 0, "nthkey(%d) = '%s'", i, key);
    }

    MPI_Info_dup(info, &dup);
    MPI_Info_delete(info, "beta");
    MPI_Info_get_nkeys(info, &nkeys);
    mtest_check_int("nkeys after delete", nkeys, 2);
    MPI_Info_get(dup, "beta", MPI_MAX_INFO_VAL, value, &flag);
    mtest_check(flag && strcmp(value, "two words") == 0, "dup lost 'beta' ('%s')", value);
    MPI_Info_get_nkeys(dup, &nkeys);
    mtest_check_int("nkeys of the dup", nkeys, 3);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Info_delete(info, "beta");
    mtest_check_class("delete of a missing key", rc, MPI_ERR_INFO_NOKEY);

#if MPI_VERSION >= 4
    {
        int buflen = 0;
        MPI_Info_get_string(dup, "beta", &buflen, value, &flag);
        mtest_check(flag && buflen == 10, "get_string length query: flag %d buflen %d", flag,
                    buflen);
        buflen = 4;
        MPI_Info_get_string(dup, "beta", &buflen, value, &flag);
        mtest_check(flag && buflen == 10 && strcmp(value, "two") == 0,
                    "get_string into 4 bytes: '%s' buflen %d", value, buflen);
        buflen = sizeof(value);
        MPI_Info_get_string(dup, "beta", &buflen, value, &flag);
        mtest_check(flag && strcmp(value, "two words") == 0, "get_string gave '%s'", value);
        buflen = sizeof(value);
        MPI_Info_get_string(dup, "nope", &buflen, value, &flag);
        mtest_check_int("get_string of a missing key", flag, 0);
    }
#endif

    MPI_Info_free(&info);
    mtest_check(info == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");
    MPI_Info_free(&dup);

    /* MPI_INFO_ENV exists and can be read and dup'd; values are strings. */
    env = MPI_INFO_ENV;
    MPI_Info_get_nkeys(env, &nkeys);
    mtest_check(nkeys >= 0, "MPI_INFO_ENV nkeys %d", nkeys);
    for (i = 0; i < nkeys; i++) {
        MPI_Info_get_nthkey(env, i, key);
        MPI_Info_get_valuelen(env, key, &len, &flag);
        mtest_check(flag && len >= 0 && len <= MPI_MAX_INFO_VAL, "ENV key '%s' valuelen %d",
                    key, len);
    }
    MPI_Info_get(env, "command", MPI_MAX_INFO_VAL, value, &flag);
    if (flag)
        mtest_check(strstr(value, "info") != NULL, "ENV command is '%s'", value);
    MPI_Info_dup(env, &dup);
    MPI_Info_free(&dup);
    return mtest_finalize();
}
