/* Dynamic processes (src/mpi/comm/dpm.c; docs/dpm.md). Collective as the MPI
 * calls are; MPI_SUCCESS or an error class (the reason logged). */
#ifndef DCFA_MPI_DPM_H
#define DCFA_MPI_DPM_H

#include "mpi/mpii.h"

int mpii_port_open(char *name);             /* name: MPI_MAX_PORT_NAME bytes */
int mpii_port_close(const char *name);      /* MPI_ERR_PORT if not open here */
int mpii_comm_accept(const char *port, MPI_Info info, mpii_comm *c, int root, mpii_comm **out);
int mpii_comm_connect(const char *port, MPI_Info info, mpii_comm *c, int root, mpii_comm **out);
int mpii_comm_join(int fd, mpii_comm **out);
int mpii_comm_spawn(int count, char *cmds[], char **argvs[], const int maxprocs[],
                    const MPI_Info infos[], int root, mpii_comm *c, mpii_comm **out,
                    int errcodes[]);
int mpii_comm_disconnect(mpii_comm *c);
/* the name service: 0, or a negative errno (-EEXIST published already, -ENOENT not
 * published; port: MPI_MAX_PORT_NAME bytes) */
int mpii_name_publish(const char *service, const char *port);
int mpii_name_unpublish(const char *service);
int mpii_name_lookup(const char *service, char *port);
MPI_Comm mpii_comm_parent(void);            /* MPI_COMM_NULL when not spawned */
int mpii_dpm_init(void);                    /* end of MPI_Init: a spawned process connects */
void mpii_dpm_dump(void);                   /* the hang report: what a root waits for */
void mpii_dpm_ports_unlink(void); /* MPI_Abort: remove the socket files of open Unix ports */
/* the roots of an inter-communicator under construction swap bytes over a connected socket
 * (progressing the library while they wait) */
int mpii_sock_swap(int fd, const void *s, size_t slen, void *r, size_t rlen);

#endif
