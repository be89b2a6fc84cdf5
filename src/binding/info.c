/* Info bindings (MPI 4.1 chapter 10). Keys are 1..MPI_MAX_INFO_KEY-1
 * characters and values 1..MPI_MAX_INFO_VAL-1, so that both always fit a
 * buffer of the MPI_MAX_* size with the terminating NUL. */
#include "mpi/mpii.h"
#include "mpi/info/info.h"
#include "binding/impl.h"

#include <string.h>

static int info_check(const char *fn, MPI_Info info, int writable)
{
    if (!mpii_info_exists(info))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO, fn, "info: invalid info object");
    if (writable && info == MPI_INFO_ENV)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO, fn,
                        "info: MPI_INFO_ENV cannot be modified");
    return MPI_SUCCESS;
}

static int info_key(const char *fn, const char *key)
{
    if (!key)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_KEY, fn, "key: NULL pointer");
    size_t n = strnlen(key, MPI_MAX_INFO_KEY);
    if (n == 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_KEY, fn, "key: empty");
    if (n >= MPI_MAX_INFO_KEY)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_KEY, fn,
                        "key: longer than MPI_MAX_INFO_KEY-1 characters");
    return MPI_SUCCESS;
}

int b_Info_create(MPI_Info *info)
{
    if (!info)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Info_create", "info: NULL pointer");
    *info = mpii_info_new();
    return MPI_SUCCESS;
}

int b_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    if (!info)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Info_create_env", "info: NULL pointer");
    *info = mpii_info_env(argc, argv);
    return MPI_SUCCESS;
}

int b_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char fn[] = "MPI_Info_set";
    int rc = info_check(fn, info, 1);
    if (rc == MPI_SUCCESS)
        rc = info_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!value)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_VALUE, fn, "value: NULL pointer");
    size_t n = strnlen(value, MPI_MAX_INFO_VAL);
    if (n == 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_VALUE, fn, "value of key '%s': empty", key);
    if (n >= MPI_MAX_INFO_VAL)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_VALUE, fn,
                        "value of key '%s': longer than MPI_MAX_INFO_VAL-1 characters", key);
    mpii_info_set(info, key, value);
    return MPI_SUCCESS;
}

int b_Info_delete(MPI_Info info, const char *key)
{
    static const char fn[] = "MPI_Info_delete";
    int rc = info_check(fn, info, 1);
    if (rc == MPI_SUCCESS)
        rc = info_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mpii_info_delete(info, key) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO_NOKEY, fn, "key '%s' is not set", key);
    return MPI_SUCCESS;
}

int b_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get";
    int rc = info_check(fn, info, 0);
    if (rc == MPI_SUCCESS)
        rc = info_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (valuelen < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "valuelen: negative");
    if (!flag || !value)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "value/flag: NULL pointer");
    const char *v = mpii_info_lookup(info, key);
    *flag = v != NULL;
    if (v) {
        /* at most valuelen characters, then the NUL (the buffer has valuelen+1) */
        size_t n = strnlen(v, (size_t)valuelen);
        memcpy(value, v, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}

int b_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char fn[] = "MPI_Info_get_valuelen";
    int rc = info_check(fn, info, 0);
    if (rc == MPI_SUCCESS)
        rc = info_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag || !valuelen)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "valuelen/flag: NULL pointer");
    const char *v = mpii_info_lookup(info, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int b_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get_string";
    int rc = info_check(fn, info, 0);
    if (rc == MPI_SUCCESS)
        rc = info_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag || !buflen || *buflen < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn,
                        "buflen/flag: NULL pointer or negative buflen");
    const char *v = mpii_info_lookup(info, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    size_t len = strlen(v);
    if (*buflen > 0) {
        if (!value)
            return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "value: NULL pointer");
        size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
        memcpy(value, v, n);
        value[n] = 0;
    }
    *buflen = (int)len + 1;
    return MPI_SUCCESS;
}

int b_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char fn[] = "MPI_Info_get_nkeys";
    int rc = info_check(fn, info, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!nkeys)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "nkeys: NULL pointer");
    *nkeys = mpii_info_nkeys(info);
    return MPI_SUCCESS;
}

int b_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char fn[] = "MPI_Info_get_nthkey";
    int rc = info_check(fn, info, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!key)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "key: NULL pointer");
    const char *k = mpii_info_nthkey(info, n);
    if (!k)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn,
                        "n=%d is not in 0..nkeys-1 (the info has %d keys)", n,
                        mpii_info_nkeys(info));
    strcpy(key, k);
    return MPI_SUCCESS;
}

int b_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char fn[] = "MPI_Info_dup";
    int rc = info_check(fn, info, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!newinfo)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "newinfo: NULL pointer");
    *newinfo = mpii_info_dup(info);
    return MPI_SUCCESS;
}

int b_Info_free(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_free";
    if (!info)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "info: NULL pointer");
    int rc = info_check(fn, *info, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_info_free(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* MPI 4.1 section 11.4: the hardware resources this process can name; the
 * one level DCFA-MPI knows of is the node (shared memory) */
int b_Get_hw_resource_info(MPI_Info *hw_info)
{
    if (!hw_info)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Get_hw_resource_info",
                        "hw_info: NULL pointer");
    *hw_info = mpii_info_new();
    mpii_info_set(*hw_info, "mpi_hw_resource_type", "mpi_shared_memory");
    return MPI_SUCCESS;
}
