/* Shared-memory segments handed over by the assist daemon (mpirun --isolate shm), shared by
 * the library (src/util/shm_seg.c) and the daemon (tools/mpirun/ad_seg.c); docs/launcher.md
 * "--isolate shm".
 *
 * A rank with no /dev/shm of its own asks its daemon on its endpoint channel (the
 * SOCK_SEQPACKET socketpair of DCFA_SOCK_EP_FD) to create, open or remove a segment by the
 * name it would have had in /dev/shm. Each message is one seg_msg; a GRANT carries the
 * segment, a sealed memfd, as SCM_RIGHTS. The daemon tells these messages from the sock
 * fabric's (sock_wire.h) by magic and size. */
#ifndef DCFA_UTIL_SEG_WIRE_H
#define DCFA_UTIL_SEG_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define SEG_MAGIC   0x47455344u /* "DSEG" */
#define SEG_VERSION 1
enum seg_type {
    SEG_CREATE = 1, /* rank -> daemon: a new segment of `size` bytes named `name`, please */
    SEG_OPEN = 2,   /* rank -> daemon: the existing segment `name` of `size` bytes */
    SEG_REMOVE = 3, /* rank -> daemon: drop the name (mappings stay valid) */
    SEG_GRANT = 4,  /* daemon -> rank: here it is (SCM_RIGHTS: a memfd of `size` bytes) */
    SEG_REFUSE = 5, /* daemon -> rank: no (status, text); no descriptor */
    SEG_DONE = 6,   /* daemon -> rank: REMOVE done (status 0, or -ENOENT: no such name) */
};

#define SEG_JOB_MAX  40
#define SEG_NAME_MAX 96
#define SEG_TEXT_MAX 160
typedef struct seg_msg {
    uint32_t magic;  /* SEG_MAGIC */
    uint8_t version; /* SEG_VERSION */
    uint8_t type;    /* enum seg_type */
    uint16_t zero;
    uint32_t seq;            /* request: the rank's number for it; answers: echoed */
    int32_t rank;            /* request: the asker's own rank; answers: echoed */
    uint64_t token;          /* request: the asker's own endpoint token (DCFA_SOCK_TOKEN) */
    uint64_t size;           /* CREATE, OPEN: the segment's bytes; GRANT: its bytes */
    char job[SEG_JOB_MAX];   /* request: the asker's job id, NUL-ended */
    char name[SEG_NAME_MAX]; /* "/dcfa-<job>-...", NUL-ended; answers: echoed */
    int32_t status;          /* REFUSE, DONE: 0 or a negative errno */
    uint32_t zero2;
    char text[SEG_TEXT_MAX]; /* REFUSE: why, naming the request, NUL-ended */
} seg_msg;
_Static_assert(sizeof(seg_msg) == 336, "segment message is 336 bytes");
_Static_assert(offsetof(seg_msg, job) == 32 && offsetof(seg_msg, name) == 72 &&
                   offsetof(seg_msg, status) == 168 && offsetof(seg_msg, text) == 176,
               "segment message layout");

#endif
