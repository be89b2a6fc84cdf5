/* MPI_Add_error_class / MPI_Add_error_code / MPI_Add_error_string:
 * new classes and codes map back, their strings are returned,
 * MPI_LASTUSEDCODE grows, and a user handler receives the new code. */
#include "mtest.h"

static int seen_code = -1;

static void handler(MPI_Comm *comm, int *code, ...)
{
    seen_code = *code;
}

int main(int argc, char **argv)
{
    int newclass, newcode, code2, cls, len, flag, *lastused;
    char str[MPI_MAX_ERROR_STRING];
    MPI_Errhandler eh;

    mtest_init(&argc, &argv);
    mtest_check_rc("Add_error_class", MPI_Add_error_class(&newclass));
    mtest_check(newclass > MPI_ERR_LASTCODE || newclass > MPI_ERR_SERVICE,
                "new class %d collides with predefined ones", newclass);
    mtest_check_rc("Add_error_code", MPI_Add_error_code(newclass, &newcode));
    mtest_check_rc("Add_error_code (second)", MPI_Add_error_code(newclass, &code2));
    mtest_check(newcode != code2, "two added codes are equal (%d)", newcode);
    MPI_Error_class(newcode, &cls);
    mtest_check_int("class of the added code", cls, newclass);
    MPI_Error_class(code2, &cls);
    mtest_check_int("class of the second added code", cls, newclass);
    MPI_Error_class(newclass, &cls);
    mtest_check_int("class of the added class", cls, newclass);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag);
    if (mtest_check(flag, "MPI_LASTUSEDCODE attribute missing")) {
        /* MPICH encodes added codes above MPI_LASTUSEDCODE, so only the
         * class is compared. */
        mtest_check(*lastused >= newclass, "MPI_LASTUSEDCODE %d below the added class %d",
                    *lastused, newclass);
    }

    MPI_Add_error_string(newclass, "test class text");
    MPI_Add_error_string(newcode, "test code text");
    MPI_Error_string(newclass, str, &len);
    mtest_check(strcmp(str, "test class text") == 0, "added class string is '%s'", str);
    mtest_check_int("added class string length", len, 15);
    MPI_Error_string(newcode, str, &len);
    mtest_check(strcmp(str, "test code text") == 0, "added code string is '%s'", str);
    /* Replacing a string is allowed. */
    MPI_Add_error_string(newcode, "replaced");
    MPI_Error_string(newcode, str, &len);
    mtest_check(strcmp(str, "replaced") == 0, "replaced code string is '%s'", str);

    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, code2);
    mtest_check_int("handler got the added code", seen_code, code2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    return mtest_finalize();
}
