/* MPI_Comm_set_name / MPI_Comm_get_name: predefined names, a new name, a
 * renamed communicator, an unnamed dup (empty name), the longest name. */
#include "mtest.h"

int main(int argc, char **argv)
{
    char name[MPI_MAX_OBJECT_NAME], longname[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Comm dup;

    mtest_init(&argc, &argv);
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    mtest_check(strcmp(name, "MPI_COMM_WORLD") == 0, "WORLD is named '%s'", name);
    mtest_check_int("length of WORLD name", len, (int)strlen("MPI_COMM_WORLD"));
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    mtest_check(strcmp(name, "MPI_COMM_SELF") == 0, "SELF is named '%s'", name);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "my communicator");
    MPI_Comm_get_name(dup, name, &len);
    mtest_check(strcmp(name, "my communicator") == 0, "dup is named '%s'", name);
    mtest_check_int("name length", len, 15);
    MPI_Comm_set_name(dup, "renamed");
    MPI_Comm_get_name(dup, name, &len);
    mtest_check(strcmp(name, "renamed") == 0, "renamed dup is named '%s'", name);

    memset(longname, 'n', sizeof(longname));
    longname[MPI_MAX_OBJECT_NAME - 1] = '\0';
    MPI_Comm_set_name(dup, longname);
    MPI_Comm_get_name(dup, name, &len);
    mtest_check(strcmp(name, longname) == 0, "longest name not kept");
    mtest_check_int("longest name length", len, MPI_MAX_OBJECT_NAME - 1);
    MPI_Comm_free(&dup);

    /* Renaming WORLD is allowed; the dup of a new comm starts unnamed. */
    MPI_Comm_set_name(MPI_COMM_WORLD, "world renamed");
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    mtest_check(strcmp(name, "world renamed") == 0, "renamed WORLD is named '%s'", name);
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &dup);
    MPI_Comm_get_name(dup, name, &len);
    mtest_check(len == 0 && name[0] == '\0', "new comm has a name '%s'", name);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
