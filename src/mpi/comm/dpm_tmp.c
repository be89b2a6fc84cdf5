/* TEMPORARY weak stubs */
#include "mpi/comm/dpm_tmp.h"
#include <errno.h>
__attribute__((weak)) int assist_spawn(int ncmds, const assist_spawn_cmd *cmds, int npreput,
                 const char *const *keys, const char *const *vals,
                 int *errcodes, char *errmsg, size_t errlen) { return -ENOSYS; }
__attribute__((weak)) int assist_name_publish(const char *service, const char *port) { return -ENOSYS; }
__attribute__((weak)) int assist_name_unpublish(const char *service) { return -ENOSYS; }
__attribute__((weak)) int assist_name_lookup(const char *service, char *port, int maxlen) { return -ENOSYS; }
