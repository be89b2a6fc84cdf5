/* Dynamic process bindings (MPI 4.1 chapter 11): argument checks, then
 * src/mpi/comm/dpm.c. */
#include "mpi/mpii.h"
#include "mpi/comm/comm.h"
#include "mpi/comm/dpm.h"
#include "mpi/errhan/errhan.h"
#include "mpi/info/info.h"
#include "binding/impl.h"

#include <errno.h>
#include <string.h>

#define NOOBJ MPII_OBJ_NONE, 0

static int dpm_comm(const char *fn, const char *arg, MPI_Comm h, int intra, mpii_comm **out)
{
    *out = mpii_comm_get(h);
    if (!*out)
        return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_COMM, fn, "%s: invalid communicator%s", arg,
                        h == MPI_COMM_NULL ? " (MPI_COMM_NULL)" : "");
    if (intra && (*out)->is_inter)
        return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_COMM, fn,
                        "%s: an inter-communicator, where an intra-communicator is required", arg);
    return MPI_SUCCESS;
}

static int dpm_root(const char *fn, MPI_Comm h, const mpii_comm *c, int root)
{
    if (root < 0 || root >= c->size)
        return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_ROOT, fn, "root=%d is not a rank of comm (size %d)",
                        root, c->size);
    return MPI_SUCCESS;
}

static int dpm_info(const char *fn, MPI_Comm h, MPI_Info info)
{
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_INFO, fn, "info: not a valid info object");
    return MPI_SUCCESS;
}

static int dpm_fail(const char *fn, MPI_Comm h, int rc, const char *what)
{
    return mpii_err(MPII_OBJ_COMM, h, rc, fn, "%s", what);
}

/* ---- ports ---------------------------------------------------------------------------- */

int b_Open_port(MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Open_port";
    if (!port_name)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "port_name: NULL pointer");
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(NOOBJ, MPI_ERR_INFO, fn, "info: not a valid info object");
    int rc = mpii_port_open(port_name);
    if (rc != MPI_SUCCESS)
        return mpii_err(NOOBJ, rc, fn, "cannot open a port");
    return MPI_SUCCESS;
}

int b_Close_port(const char *port_name)
{
    static const char fn[] = "MPI_Close_port";
    if (!port_name)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "port_name: NULL pointer");
    if (mpii_port_close(port_name) != MPI_SUCCESS)
        return mpii_err(NOOBJ, MPI_ERR_PORT, fn, "port_name '%.200s' is not a port this process opened",
                        port_name);
    return MPI_SUCCESS;
}

static int dpm_accept_connect(const char *fn, int accept, const char *port_name, MPI_Info info,
                              int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    mpii_comm *c, *n = NULL;
    int rc = dpm_comm(fn, "comm", comm, 1, &c);
    if (rc == MPI_SUCCESS && !newcomm)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "newcomm: NULL pointer");
    if (rc == MPI_SUCCESS)
        rc = dpm_root(fn, comm, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    /* port_name and info matter at the root only */
    if (c->rank == root && !port_name)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "port_name: NULL pointer at the root");
    if (c->rank == root && (rc = dpm_info(fn, comm, info)) != MPI_SUCCESS)
        return rc;
    rc = accept ? mpii_comm_accept(port_name, info, c, root, &n)
                : mpii_comm_connect(port_name, info, c, root, &n);
    if (rc != MPI_SUCCESS)
        return dpm_fail(fn, comm, rc, accept ? "no connection was accepted" : "could not connect");
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

int b_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return dpm_accept_connect("MPI_Comm_accept", 1, port_name, info, root, comm, newcomm);
}

int b_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return dpm_accept_connect("MPI_Comm_connect", 0, port_name, info, root, comm, newcomm);
}

int b_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fn[] = "MPI_Comm_join";
    mpii_comm *n = NULL;
    if (!intercomm)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "intercomm: NULL pointer");
    if (fd < 0)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "fd=%d is not a socket", fd);
    int rc = mpii_comm_join(fd, &n);
    if (rc != MPI_SUCCESS)
        return mpii_err(NOOBJ, rc, fn, "could not join over socket %d", fd);
    *intercomm = n->handle;
    return MPI_SUCCESS;
}

int b_Comm_disconnect(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_disconnect";
    mpii_comm *c;
    if (!comm)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "comm: NULL pointer");
    int rc = dpm_comm(fn, "comm", *comm, 0, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpii_err(MPII_OBJ_COMM, *comm, MPI_ERR_COMM, fn, "comm: %s cannot be disconnected",
                        *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    rc = mpii_comm_disconnect(c);
    if (rc != MPI_SUCCESS)
        return dpm_fail(fn, *comm, rc, "disconnect failed");
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int b_Comm_get_parent(MPI_Comm *parent)
{
    if (!parent)
        return mpii_err(NOOBJ, MPI_ERR_ARG, "MPI_Comm_get_parent", "parent: NULL pointer");
    *parent = mpii_comm_parent();
    return MPI_SUCCESS;
}

/* ---- spawn ---------------------------------------------------------------------------- */

static int dpm_spawn(const char *fn, int count, char *cmds[], char **argvs[], const int maxprocs[],
                     const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                     int errcodes[])
{
    mpii_comm *c, *n = NULL;
    int rc = dpm_comm(fn, "comm", comm, 1, &c);
    if (rc == MPI_SUCCESS && !intercomm)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "intercomm: NULL pointer");
    if (rc == MPI_SUCCESS)
        rc = dpm_root(fn, comm, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == root) {   /* the rest is significant at the root only */
        if (count <= 0)
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "count=%d must be positive", count);
        if (!cmds || !maxprocs)
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: NULL pointer",
                            !cmds ? "command" : "maxprocs");
        for (int i = 0; i < count; i++) {
            if (!cmds[i] || !*cmds[i])
                return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "command %d is empty", i);
            if (maxprocs[i] < 0)
                return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "maxprocs=%d (command %d) is negative",
                                maxprocs[i], i);
            if (infos && (rc = dpm_info(fn, comm, infos[i])) != MPI_SUCCESS)
                return rc;
        }
    }
    rc = mpii_comm_spawn(count, cmds, argvs, maxprocs, infos, root, c, &n, errcodes);
    if (rc != MPI_SUCCESS)
        return dpm_fail(fn, comm, rc, "the processes could not be spawned");
    *intercomm = n->handle;
    return MPI_SUCCESS;
}

int b_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                 MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv};
    return dpm_spawn("MPI_Comm_spawn", 1, cmds, argvs, &maxprocs, &info, root, comm, intercomm,
                     array_of_errcodes);
}

int b_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                          const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                          MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    return dpm_spawn("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv,
                     array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes);
}

/* ---- the name service ----------------------------------------------------------------- */

static int dpm_name_args(const char *fn, const char *service, MPI_Info info, const void *port)
{
    if (!service || !*service)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "service_name: %s", service ? "empty" : "NULL pointer");
    if (!port)
        return mpii_err(NOOBJ, MPI_ERR_ARG, fn, "port_name: NULL pointer");
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(NOOBJ, MPI_ERR_INFO, fn, "info: not a valid info object");
    return MPI_SUCCESS;
}

int b_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Publish_name";
    int rc = dpm_name_args(fn, service_name, info, port_name);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_name_publish(service_name, port_name);
    if (rc == -EEXIST)
        return mpii_err(NOOBJ, MPI_ERR_SERVICE, fn, "service_name '%.200s' is published already",
                        service_name);
    if (rc != 0)
        return mpii_err(NOOBJ, MPI_ERR_SERVICE, fn, "the name service did not publish '%.200s': %s",
                        service_name, strerror(-rc));
    return MPI_SUCCESS;
}

int b_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Unpublish_name";
    int rc = dpm_name_args(fn, service_name, info, port_name);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_name_unpublish(service_name);
    if (rc != 0)
        return mpii_err(NOOBJ, MPI_ERR_SERVICE, fn, "service_name '%.200s' %s", service_name,
                        rc == -ENOENT ? "is not published" : strerror(-rc));
    return MPI_SUCCESS;
}

int b_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Lookup_name";
    int rc = dpm_name_args(fn, service_name, info, port_name);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_name_lookup(service_name, port_name);
    if (rc != 0)
        return mpii_err(NOOBJ, MPI_ERR_NAME, fn, "service_name '%.200s' %s", service_name,
                        rc == -ENOENT ? "is not published" : strerror(-rc));
    return MPI_SUCCESS;
}
