/* Communicator attributes with callbacks: create_keyval with copy and delete
 * functions, set/get/delete_attr; Comm_dup calls copy (which may decline),
 * Comm_free and delete_attr and re-setting call delete; predefined
 * MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN; free_keyval. */
#include "mtest.h"

static int copies, deletes, last_deleted;
static int extra_tag = 99;

static int copy_fn(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    int *src = in;
    copies++;
    if (*(int *)extra != 99)
        return MPI_ERR_OTHER;
    if (*src < 0) {                    /* negative values are not copied */
        *flag = 0;
        return MPI_SUCCESS;
    }
    *(void **)out = src + 1;           /* the next slot of the caller's array */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    deletes++;
    last_deleted = *(int *)val;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int key, key_null, key_dup, flag, *got;
    int vals[4] = {10, 11, 12, 13}, neg = -5;
    MPI_Comm dup, dup2;

    mtest_init(&argc, &argv);
    mtest_check_rc("Comm_create_keyval",
                   MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra_tag));
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_null, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    flag = -1;
    MPI_Comm_get_attr(dup, key, &got, &flag);
    mtest_check_int("get_attr before set", flag, 0);

    MPI_Comm_set_attr(dup, key, &vals[0]);
    MPI_Comm_set_attr(dup, key_null, &vals[2]);
    MPI_Comm_set_attr(dup, key_dup, &vals[3]);
    MPI_Comm_get_attr(dup, key, &got, &flag);
    mtest_check(flag && got == &vals[0], "get_attr returned another value");

    /* Dup: copy_fn called once, the copy holds the next slot; the NULL_COPY
     * attribute is absent and the DUP_FN attribute has the same pointer. */
    MPI_Comm_dup(dup, &dup2);
    mtest_check_int("copy callbacks on dup", copies, 1);
    MPI_Comm_get_attr(dup2, key, &got, &flag);
    mtest_check(flag && got == &vals[1], "copied attribute wrong (flag %d)", flag);
    MPI_Comm_get_attr(dup2, key_null, &got, &flag);
    mtest_check_int("NULL_COPY_FN attribute on the dup", flag, 0);
    MPI_Comm_get_attr(dup2, key_dup, &got, &flag);
    mtest_check(flag && got == &vals[3], "DUP_FN attribute not copied as is");

    /* Re-setting calls delete on the old value. */
    MPI_Comm_set_attr(dup, key, &vals[2]);
    mtest_check_int("deletes after overwrite", deletes, 1);
    mtest_check_int("overwritten value deleted", last_deleted, 10);

    /* delete_attr calls delete. */
    MPI_Comm_delete_attr(dup, key);
    mtest_check_int("deletes after delete_attr", deletes, 2);
    mtest_check_int("deleted value", last_deleted, 12);
    MPI_Comm_get_attr(dup, key, &got, &flag);
    mtest_check_int("get_attr after delete_attr", flag, 0);

    /* copy_fn may decline: flag 0 means no attribute on the new comm. */
    MPI_Comm_set_attr(dup, key, &neg);
    {
        MPI_Comm dup3;
        MPI_Comm_dup(dup, &dup3);
        mtest_check_int("copy callbacks", copies, 2);
        MPI_Comm_get_attr(dup3, key, &got, &flag);
        mtest_check_int("declined copy leaves no attribute", flag, 0);
        MPI_Comm_free(&dup3);
        mtest_check_int("no delete for a declined copy", deletes, 2);
    }

    /* Free of the keyval: handle invalid, attributes still deleted on free. */
    MPI_Comm_free_keyval(&key);
    mtest_check(key == MPI_KEYVAL_INVALID, "free_keyval did not set MPI_KEYVAL_INVALID");
    MPI_Comm_free(&dup2);
    mtest_check_int("deletes after freeing dup2", deletes, 3);
    mtest_check_int("dup2's value deleted", last_deleted, 11);
    MPI_Comm_free(&dup);
    mtest_check_int("deletes after freeing dup", deletes, 4);
    mtest_check_int("dup's value deleted", last_deleted, -5);

    MPI_Comm_free_keyval(&key_null);
    MPI_Comm_free_keyval(&key_dup);

    /* Attributes on WORLD too. */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &key, &extra_tag);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &vals[1]);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag);
    mtest_check(flag && *got == 11, "attribute on WORLD");
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    mtest_check_int("deletes after WORLD delete_attr", deletes, 5);
    MPI_Comm_free_keyval(&key);
    return mtest_finalize();
}
