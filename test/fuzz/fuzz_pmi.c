/* libFuzzer target: the PMI wire parser, both sides.
 *  - the helpers of src/assist/pmi_wire.h (shared by the library's client and
 *    the daemon) on the input taken as one line, with the keys the two sides
 *    look up;
 *  - the assist daemon's PMI-1 command parser (tools/mpirun/ad_pmi.c), fed the
 *    input as what a rank writes on its command channel (a socketpair), in
 *    pieces whose sizes come from the input, as reads may split it. Replies
 *    are read back and dropped; a protocol error ends "the job"
 *    (ad_daemon_end), which the harness notes and resets.
 *
 * Built by test/fuzz/run.sh with the daemon's sources (not main.c); without
 * -DFUZZ_LIBFUZZER it runs the files named on its command line (the
 * regression corpus, test/fuzz/corpus-pmi/, run by ctest). */
#include "ad.h"
#include "ad_pmi.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct ad_daemon d;
static struct ad_job job;
static struct ad_proc proc;
static struct ad_job *jobs[1] = {&job};
static int rank_end = -1; /* the rank's end of the channel */

static void channel_open(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    proc.pmi_fd = sv[0];
    rank_end = sv[1];
}

static void drain(void)
{
    char buf[8192];
    while (read(rank_end, buf, sizeof buf) > 0)
        ;
}

static void init_once(void)
{
    static int inited;
    if (inited)
        return;
    inited = 1;
    d.sigfd = -1;
    d.stdin_pipe = -1;
    d.jobs = jobs;
    d.njobs = 1;
    job.size = 1;
    job.procs = &proc;
    snprintf(job.jobid, sizeof job.jobid, "fuzz");
    snprintf(job.kvsname, sizeof job.kvsname, "kvs_fuzz");
    proc.rank = 0;
    proc.pid = 0; /* nobody to signal when the "job" ends */
    proc.out.fd = proc.err.fd = -1;
    channel_open();
}

static void wire_helpers(const uint8_t *data, size_t size)
{
    static const char *keys[] = {"cmd",      "rc",        "key",  "value", "kvsname", "pmi_version",
                                 "exitcode", "error_msg", "size", "rank",  "appnum",  ""};
    char line[ASSIST_WIRE_LINE_MAX + 1], out[ASSIST_VALUE_MAX + 1];
    size_t n = size < ASSIST_WIRE_LINE_MAX ? size : ASSIST_WIRE_LINE_MAX;
    memcpy(line, data, n);
    line[n] = 0;
    size_t len;
    long v;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (assist_wire_find(line, keys[k], &len) && len > n)
            abort(); /* a value cannot be longer than the line */
        (void)assist_wire_get(line, keys[k], out, sizeof out);
        (void)assist_wire_get(line, keys[k], out, 4);
        (void)assist_wire_get_int(line, keys[k], &v);
    }
    (void)assist_wire_is(line, "put");
    (void)assist_wire_is(line, "");
    (void)assist_wire_key_ok(line, ASSIST_KEY_MAX);
    (void)assist_wire_value_ok(line, ASSIST_VALUE_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    wire_helpers(data, size);
    if (ad_kvs_init(&job.kvs) != 0)
        abort();
    if (proc.pmi_fd < 0)
        channel_open();
    /* byte 0: the size of the pieces the stream is written in (1..256; at most 256 pieces,
     * so that long inputs stay fast) */
    size_t piece = size ? (size_t)data[0] + 1 : 1, at = size ? 1 : 0;
    if (size / piece > 256)
        piece = size / 256;
    while (at < size && proc.pmi_fd >= 0) {
        size_t n = size - at < piece ? size - at : piece;
        ssize_t w = write(rank_end, data + at, n);
        if (w > 0)
            at += (size_t)w;
        while (proc.pmi_fd >= 0 && ad_pmi_input(&d, &job, &proc) > 0)
            drain();
        drain();
        if (w <= 0 && errno != EAGAIN && errno != EINTR)
            break;
    }
    /* end of the rank's output: the daemon reads EOF and closes the channel */
    close(rank_end);
    rank_end = -1;
    while (proc.pmi_fd >= 0 && ad_pmi_input(&d, &job, &proc) > 0)
        ;
    if (proc.pmi_fd >= 0)
        close(proc.pmi_fd);
    proc.pmi_fd = -1;
    proc.pmi_inlen = 0;
    proc.pmi_inited = proc.pmi_finalized = proc.in_barrier = 0;
    job.barrier_count = 0;
    ad_kvs_destroy(&job.kvs);
    memset(&job.kvs, 0, sizeof job.kvs);
    d.ended = 0;
    d.phase = AD_RUN;
    d.phase_deadline = 0;
    return 0;
}

#ifndef FUZZ_LIBFUZZER
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        printf("ok %s (%zu bytes)\n", argv[i], n);
    }
    return 0;
}
#endif
