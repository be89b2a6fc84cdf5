/* TEMPORARY until assist_spawn lands in assist.h */
#ifndef DPM_TMP_H
#define DPM_TMP_H
#include <stddef.h>
typedef struct assist_spawn_cmd {
    const char *command;
    char **argv;
    int maxprocs;
    int ninfo;
    const char *const *info_keys;
    const char *const *info_vals;
} assist_spawn_cmd;
int assist_spawn(int ncmds, const assist_spawn_cmd *cmds, int npreput,
                 const char *const *keys, const char *const *vals,
                 int *errcodes, char *errmsg, size_t errlen);
int assist_name_publish(const char *service, const char *port);
int assist_name_unpublish(const char *service);
int assist_name_lookup(const char *service, char *port, int maxlen);
#endif
