/* Every tunable, declared once: environment name, type, default, help.
 * Read at MPI_Init, listed by `mpiinfo`, used by tests to force protocols. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

util_config util_cfg;

const util_tunable util_tunables[] = {
    {"DCFA_EAGER_LIMIT", UTIL_T_SIZE, &util_cfg.eager_limit, "16384", NULL,
     "largest message (header included) sent eagerly through the receive ring; larger ones use "
     "rendezvous",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_MAX_CREDIT", UTIL_T_INT, &util_cfg.max_credit, "-1", NULL,
     "blocks in each connection's receive ring (MaxCredit); rounded up to a power of two, and to "
     "at least twice the blocks of the largest packet; -1 (auto): 512, and on shm larger where few "
     "processes share the node (DCFA_SHM_RINGS, DCFA_SHM_RING_MAX)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_SHM_RINGS", UTIL_T_SIZE, &util_cfg.shm_rings, "1048576", NULL,
     "with DCFA_MAX_CREDIT auto: bytes of receive rings a process spreads over the other processes "
     "of its node (all jobs); a shm connection's ring doubles from 512 blocks while it fits this "
     "divided by their count and DCFA_SHM_RING_MAX; each connection uses the smaller of its two "
     "ends' sizes (docs/protocol.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_SHM_RING_MAX", UTIL_T_SIZE, &util_cfg.shm_ring_max, "524288", NULL,
     "with DCFA_MAX_CREDIT auto: the largest receive ring of a shm connection, in bytes (0: 512 "
     "blocks whatever the node)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_BLOCK_SIZE", UTIL_T_SIZE, &util_cfg.block_size, "64", NULL,
     "bytes in one ring block, the unit of credit (rounded up to a power of two, at least 64); a "
     "packet covers as many consecutive blocks as its length needs",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_CREDIT_SYNC_LIMIT", UTIL_T_INT, &util_cfg.credit_sync_limit, "2", NULL,
     "a receiver sends an explicit SYNC when the sender's credit falls below this "
     "(CreditSyncLimit)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_INLINE_LIMIT", UTIL_T_SIZE, &util_cfg.inline_limit, "16", NULL,
     "payload bytes carried inside the packet header's cache line (libfabric: inject)", 0,
     UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_RNDV_MODE", UTIL_T_ENUM, &util_cfg.rndv_mode, "auto", "auto,read,write",
     "rendezvous: auto (receiver-first when allowed), read (always sender-first: RTS, receiver "
     "reads), write (receiver-first whenever allowed)",
     0, UTIL_LVL_DEV, UTIL_CAT_PROTOCOL},
    {"DCFA_CMA", UTIL_T_BOOL, &util_cfg.cma, "1", NULL,
     "single-copy rendezvous through process_vm_readv/writev; 0 forces the bounce-buffer pipeline",
     0, UTIL_LVL_USER, UTIL_CAT_PROTOCOL},
    {"DCFA_CMA_MIN", UTIL_T_INT, &util_cfg.cma_min, "-1", NULL,
     "rendezvous messages below this many bytes to a peer on this node move through the sender's "
     "staging pool (two copies, pipelined) rather than single-copy (while the receiver has no "
     "rendezvous sends of its own under way, unless the sender's copies into its pool are "
     "streamed, DCFA_STAGE_NT); the sender decides (RTS flag COPY). This one applies to a message "
     "alone (no other rendezvous of the sender under way, its pool's last chunk copied out), "
     "DCFA_CMA_MIN_STREAM to the others; 0: always single-copy; -1 (auto): 0 when the node is "
     "oversubscribed (each chunk needs both processes on a core), else a probe of the machine "
     "decides: 0 where one process_vm_readv of 64 KiB costs under 3.5 memcpys of it, else 1048576 "
     "(mpiinfo shows the probe)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_CMA_MIN_STREAM", UTIL_T_INT, &util_cfg.cma_min_stream, "-1", NULL,
     "DCFA_CMA_MIN for a rendezvous message that follows others of the sender still under way (a "
     "stream: the copies keep both cores busy); -1: DCFA_CMA_MIN when that is set, else 0 when the "
     "node is oversubscribed, else on an Intel CPU the crossover for a message alone (there single "
     "copy won in streams too), else every size where the sender's copy into its pool uses "
     "non-temporal stores (DCFA_STAGE_NT, x86-64), else 1048576",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_CMA_MIN_HOT", UTIL_T_INT, &util_cfg.cma_min_hot, "-1", NULL,
     "DCFA_CMA_MIN for a stream's rendezvous message sent from the same buffer and size as the "
     "sender's previous rendezvous message (a benchmark window reusing one buffer: the data are in "
     "the sender's cache, where one copy beats two), and with traffic both ways for such a message "
     "whose data were likely not written since (a window, or the same fingerprint); -1 (auto): 0 "
     "when the node is oversubscribed, else 262144 (32768 both ways) or the crossover for a "
     "message alone if smaller, and never above the stream's",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_CMA_MIN_BOTH", UTIL_T_INT, &util_cfg.cma_min_both, "-1", NULL,
     "DCFA_CMA_MIN for a rendezvous message alone sent with traffic both ways (the sender has "
     "receives of its own not complete, or one found its message already there: an exchange); "
     "not for the library's collective traffic; -1 (auto): DCFA_CMA_MIN when that is set, else "
     "131072 or the crossover for a message alone if smaller (below it data the sender has just "
     "written move faster through the copies)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_COOP_MIN", UTIL_T_INT, &util_cfg.coop_min, "-1", NULL,
     "a single-copy rendezvous of at least this many bytes between contiguous buffers on shm is "
     "split: the receiver reads the first half while the sender writes the second, two cores "
     "copying (a part the sender has not taken when the receiver is done with its own, the "
     "receiver reads too); not while the receiver has rendezvous sends of its own under way, nor "
     "when the sender had receives posted (traffic both ways); 0: never; -1 (auto): 262144, 0 on "
     "an oversubscribed node (docs/protocol.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_STAGE_CHUNK", UTIL_T_SIZE, &util_cfg.stage_chunk, "65536", NULL,
     "bytes in one chunk of a process's staging pool (rounded up to a multiple of 4096)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_STAGE_CHUNKS", UTIL_T_INT, &util_cfg.stage_chunks, "8", NULL,
     "chunks in a process's staging pool, one pool per process shared by all its peers on the "
     "node, made at its first rendezvous; 0: no pool (the copy path uses the ring)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_STAGE_EAGER", UTIL_T_SIZE, &util_cfg.stage_eager, "65536", NULL,
     "messages above the eager limit and up to this many bytes (at most DCFA_STAGE_CHUNK) to a "
     "peer that has mapped this process's staging pool are copied by the sender into a free chunk "
     "and sent as one eager packet naming it: one copy on each side, no rendezvous round trip, the "
     "send complete at once; while a receive is posted here (traffic both ways: single-copy "
     "measured faster) or no chunk is free they take the rendezvous; 0: never (docs/protocol.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_STAGE_NT", UTIL_T_SIZE, &util_cfg.stage_nt, "4096", NULL,
     "a sender's copy of at least this many bytes into its staging pool (the copy path, staged "
     "eager) uses non-temporal stores (x86-64): the chunk's lines are written whole without first "
     "being fetched from the receiver's cache, where it read them last; 0: never, plain memcpy "
     "(docs/protocol.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_RECV_NT", UTIL_T_SIZE, &util_cfg.recv_nt, "262144", NULL,
     "a receiver copies a message of at least this many bytes out of the sender's staging pool "
     "into its (contiguous) buffer with non-temporal stores (x86-64) while the memory of its "
     "receives under way (a buffer several share counted once) adds up to at least 8 times this: "
     "a window that large does not stay in cache, and the stores "
     "then skip reading each line first; a receive alone (a collective's, reduced at once) keeps "
     "ordinary stores; 0: never (docs/protocol.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_ALLOC_SHM", UTIL_T_SIZE, &util_cfg.alloc_shm, "16384", NULL,
     "an MPI_Alloc_mem block of at least this many bytes (up to 1 GiB, 256 at a time, alignment up "
     "to 4096) is shared memory the peers on the node map once: a rendezvous from or into it is "
     "one plain copy at memory speed, no system call, and one-sided access to it too "
     "(docs/protocol.md, direct copies); 0: every block from the heap",
     0, UTIL_LVL_USER, UTIL_CAT_PROTOCOL},
    {"DCFA_HALF_PACKETS", UTIL_T_BOOL, &util_cfg.half_packets, "1", NULL,
     "an eager message of at most 12 bytes (standard or ready mode) to a peer whose ring is mapped "
     "takes half a ring block, so two share a cache line (wire_half, docs/protocol.md); 0: a block "
     "each",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROTOCOL},
    {"DCFA_SPIN_US", UTIL_T_INT, &util_cfg.spin_us, "-1", NULL,
     "microseconds an idle wait busy-polls before yielding; -1: 2000 when every process of the "
     "node (all jobs, spawned children included) has a core, 0 (the first idle poll yields) "
     "when oversubscribed; 0 as well while the assist daemon makes a connection for the process",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROGRESS},
    {"DCFA_YIELD_US", UTIL_T_INT, &util_cfg.yield_us, "-1", NULL,
     "microseconds it then yields the core before napping in 20 us sleeps; -1: 20000, also "
     "when oversubscribed (docs/architecture.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROGRESS},
    {"DCFA_SLEEP_US", UTIL_T_INT, &util_cfg.sleep_us, "50", NULL,
     "microseconds an idle wait polls before it sleeps in the kernel on its fabrics' "
     "descriptors, where every fabric with connections has them (sock, gw; not shm, which "
     "it then leaves to DCFA_SPIN_US/DCFA_YIELD_US, nor ofi) and no other thread shares the "
     "library; woken by a packet, room to send or after 1 ms; -1: never (docs/architecture.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_PROGRESS},
    {"DCFA_ASYNC_PROGRESS", UTIL_T_BOOL, &util_cfg.async_progress, "0", NULL,
     "start an assist thread that progresses communication while the application computes", 0,
     UTIL_LVL_USER, UTIL_CAT_PROGRESS},
    {"DCFA_STATS", UTIL_T_BOOL, &util_cfg.stats, "0", NULL,
     "print per-rank protocol counters (packets by type, SYNCs) to stderr at MPI_Finalize",
     UTIL_TF_LIVE, UTIL_LVL_USER, UTIL_CAT_DEBUG},
    {"DCFA_DEBUG", UTIL_T_INT, &util_cfg.debug, "0", NULL, "debug verbosity (0 silent)",
     UTIL_TF_LIVE, UTIL_LVL_USER, UTIL_CAT_DEBUG},
    {"DCFA_COLL_BARRIER", UTIL_T_ENUM, &util_cfg.coll_barrier, "auto",
     "auto,dissemination,linear,shm",
     "barrier algorithm: dissemination (ceil(log2 n) rounds), linear (gather to rank 0 and "
     "release) or shm (flags in the node segment); auto: shm when DCFA_COLL_SHM allows, else "
     "dissemination",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_BCAST", UTIL_T_ENUM, &util_cfg.coll_bcast, "auto",
     "auto,binomial,scatter_allgather,linear,shm",
     "broadcast algorithm; auto: shm while the message fits the node segment, else binomial below "
     "DCFA_COLL_BCAST_LONG bytes, scatter + ring allgather above",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_REDUCE", UTIL_T_ENUM, &util_cfg.coll_reduce, "auto", "auto,binomial,linear,shm",
     "reduce algorithm: binomial tree (rank order kept for non-commutative ops), linear at the "
     "root, or shm (each rank folds a slice in the node segment); auto: shm when it fits, else "
     "binomial",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLREDUCE", UTIL_T_ENUM, &util_cfg.coll_allreduce, "auto",
     "auto,recursive_doubling,rabenseifner,ring,reduce_bcast,shm",
     "allreduce algorithm; auto: shm when the vector fits DCFA_COLL_SHM_SLOT, else recursive "
     "doubling below DCFA_COLL_ALLREDUCE_SHORT bytes, Rabenseifner (reduce-scatter + allgather) up "
     "to DCFA_COLL_ALLREDUCE_LONG, ring above; non-commutative ops: reduce_bcast",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_GATHER", UTIL_T_ENUM, &util_cfg.coll_gather, "auto", "auto,binomial,linear",
     "gather and scatter algorithm: binomial tree or linear at the root",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLGATHER", UTIL_T_ENUM, &util_cfg.coll_allgather, "auto",
     "auto,ring,recursive_doubling,bruck",
     "allgather algorithm; auto: recursive doubling (power-of-two sizes) or Bruck below "
     "DCFA_COLL_ALLGATHER_SHORT total bytes, ring above",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLTOALL", UTIL_T_ENUM, &util_cfg.coll_alltoall, "auto",
     "auto,bruck,pairwise,linear",
     "alltoall algorithm; auto: Bruck below DCFA_COLL_ALLTOALL_SHORT bytes per block on 32 ranks "
     "or more, else linear (all at once) up to 32 KiB blocks, pairwise exchange above",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_REDUCE_SCATTER", UTIL_T_ENUM, &util_cfg.coll_reduce_scatter, "auto",
     "auto,reduce_scatterv,pairwise",
     "reduce_scatter algorithm; auto: pairwise exchange of blocks for commutative ops from "
     "DCFA_COLL_REDUCE_SCATTER_LONG bytes, else reduce to rank 0 + scatterv",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_SCAN", UTIL_T_ENUM, &util_cfg.coll_scan, "auto", "auto,recursive_doubling,linear",
     "scan and exscan algorithm: recursive doubling or a chain in rank order",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_BCAST_LONG", UTIL_T_SIZE, &util_cfg.coll_bcast_long, "67108864", NULL,
     "bcast messages of at least this many bytes use scatter + allgather (with 3 or more ranks); "
     "on one node the binomial tree moves less data and won at every size measured",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLREDUCE_SHORT", UTIL_T_SIZE, &util_cfg.coll_allreduce_short, "4096", NULL,
     "allreduce below this many bytes uses recursive doubling", UTIL_TF_AGREE | UTIL_TF_LIVE,
     UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLREDUCE_LONG", UTIL_T_SIZE, &util_cfg.coll_allreduce_long, "1048576", NULL,
     "allreduce of at least this many bytes uses the ring algorithm", UTIL_TF_AGREE | UTIL_TF_LIVE,
     UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLGATHER_SHORT", UTIL_T_SIZE, &util_cfg.coll_allgather_short, "1048576", NULL,
     "allgather below this many bytes in total uses recursive doubling or Bruck, above it the ring",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_ALLTOALL_SHORT", UTIL_T_SIZE, &util_cfg.coll_alltoall_short, "256", NULL,
     "alltoall with blocks below this many bytes uses Bruck's algorithm (on 32 ranks or more)",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_SHM", UTIL_T_BOOL, &util_cfg.coll_shm, "1", NULL,
     "node-level barrier, bcast, reduce and allreduce (and small allgather and alltoall) through "
     "a shared-memory segment per communicator (made on first use)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_MODULE", UTIL_T_BOOL, &util_cfg.coll_module, "1", NULL,
     "barrier, bcast, reduce and allreduce (commutative operations) over ranks in several modules "
     "(networks joined by gateway daemons) cross between modules once per module and direction: "
     "a tree within each module, one message between modules (docs/collectives.md)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_MODULES", UTIL_T_STR, &util_cfg.coll_modules, "", NULL,
     "a test of the module-aware collectives on one host: each world process's module id, "
     "comma-separated (e.g. 0,0,1,1), or mod:K (world rank modulo K); a job with gateways finds "
     "its modules itself",
     UTIL_TF_AGREE, UTIL_LVL_TEST, UTIL_CAT_COLL},
    {"DCFA_COLL_SHM_SLOT", UTIL_T_SIZE, &util_cfg.coll_shm_slot, "32768", NULL,
     "bytes per rank in the node segment: the largest reduce/allreduce vector it takes (bcast: "
     "(ranks + 1) times this)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_SHM_FLAT", UTIL_T_SIZE, &util_cfg.coll_shm_flat, "1024", NULL,
     "reduce/allreduce vectors of at most this many bytes meet in the node segment in one phase: "
     "every rank (reduce: the root) folds all slots, in rank order, into its own buffer",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_COLL_REDUCE_SCATTER_LONG", UTIL_T_SIZE, &util_cfg.coll_reduce_scatter_long, "262144",
     NULL,
     "reduce_scatter of a vector of at least this many bytes (commutative op) uses the pairwise "
     "exchange",
     UTIL_TF_AGREE | UTIL_TF_LIVE, UTIL_LVL_TUNING, UTIL_CAT_COLL},
    {"DCFA_SPAWN_TIMEOUT", UTIL_T_INT, &util_cfg.spawn_timeout, "60", NULL,
     "seconds MPI_Comm_spawn waits for the started processes to connect back before it fails with "
     "MPI_ERR_SPAWN (under Slurm also for Slurm's answer to the spawn)",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_CTX_WAIT", UTIL_T_INT, &util_cfg.ctx_wait, "60", NULL,
     "seconds a message for a context (communicator) this process does not know may wait for it to "
     "be created; then it is reported as an error naming the sender",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_IO_CB_BUFFER", UTIL_T_SIZE, &util_cfg.io_cb_buffer, "16777216", NULL,
     "MPI-IO two-phase collective buffering: bytes an aggregator writes or reads per cycle "
     "(default of the cb_buffer_size hint)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_IO},
    {"DCFA_IO_CB_NODES", UTIL_T_INT, &util_cfg.io_cb_nodes, "0", NULL,
     "MPI-IO aggregators of collective access (default of the cb_nodes hint); 0: one per node",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_IO},
    {"DCFA_IO_CB", UTIL_T_ENUM, &util_cfg.io_cb, "auto", "auto,enable,disable",
     "MPI-IO collective buffering (romio_cb_read/romio_cb_write): auto aggregates when the ranks' "
     "file ranges interleave",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_IO},
    {"DCFA_IO_DS", UTIL_T_ENUM, &util_cfg.io_ds, "auto", "auto,enable,disable",
     "MPI-IO data sieving of independent non-contiguous access (romio_ds_read/romio_ds_write): "
     "auto sieves when the pieces fill at least 1/8 of the span",
     0, UTIL_LVL_TUNING, UTIL_CAT_IO},
    {"DCFA_IO_IND_BUFFER", UTIL_T_SIZE, &util_cfg.io_ind_buffer, "4194304", NULL,
     "MPI-IO independent access: staging and data sieving buffer (default of "
     "ind_rd_buffer_size/ind_wr_buffer_size)",
     0, UTIL_LVL_TUNING, UTIL_CAT_IO},
    {"DCFA_RMA_MODE", UTIL_T_ENUM, &util_cfg.rma_mode, "auto", "auto,am",
     "RMA: auto (targets on this node directly: shared segment or CMA, no target CPU; others by "
     "messages) or am (every operation as a message served by the target)",
     0, UTIL_LVL_DEV, UTIL_CAT_RMA},
    {"DCFA_RMA_BATCH", UTIL_T_SIZE, &util_cfg.rma_batch, "16384", NULL,
     "RMA message mode: operations to a target are sent as one batch of up to this many bytes at "
     "flush/unlock/fence/complete (0: each operation at once)",
     0, UTIL_LVL_TUNING, UTIL_CAT_RMA},
    {"DCFA_RMA_INLINE", UTIL_T_SIZE, &util_cfg.rma_inline, "4096", NULL,
     "RMA message mode: operation data up to this size is copied into the batch; larger data goes "
     "as its own message from the user's buffer",
     0, UTIL_LVL_TUNING, UTIL_CAT_RMA},
    {"DCFA_RMA_ASSIST", UTIL_T_BOOL, &util_cfg.rma_assist, "1", NULL,
     "RMA message mode: start the assist thread to serve windows while their process computes "
     "outside MPI (passive-target progress)",
     0, UTIL_LVL_DEV, UTIL_CAT_RMA},
    {"DCFA_FABRICS", UTIL_T_STR, &util_cfg.fabrics, "auto", NULL,
     "fabrics to open, highest priority first per connection: auto (shm, plus ofi when the job may "
     "span nodes - sock instead where the daemons hand over connections and libfabric has no "
     "hardware, DCFA_OFI_AUTO - sock instead of ofi for ranks under DCFA_ISOLATE, and gw when "
     "mpirun --gateways "
     "set DCFA_GATEWAYS) or a comma list such as ofi, shm,ofi or sock",
     0, UTIL_LVL_USER, UTIL_CAT_FABRIC},
    {"DCFA_GATEWAYS", UTIL_T_STR, &util_cfg.gateways, "", NULL,
     "set by mpirun --gateways for the ranks: the job's gateway daemons, "
     "'host:port:address/prefix,...' joined by ';'; the gw fabric opens when it is set "
     "(docs/gateway.md)",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_MODULE", UTIL_T_INT, &util_cfg.module, "-1", NULL,
     "the module (network side) of this process for MPIX_COMM_TYPE_MODULE: an id >= 0 puts it "
     "with the processes of the same id; -1: processes whose hosts share a network are one module "
     "(docs/gateway.md)",
     0, UTIL_LVL_USER, UTIL_CAT_FABRIC},
    {"DCFA_GATEWAY_KEY", UTIL_T_STR, &util_cfg.gateway_key, "", NULL,
     "set by mpirun --gateways for its daemons and the ranks: the job's 128-bit key (32 hex "
     "digits) that a process's HELLO to a gateway daemon proves it has (docs/gateway.md)",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_NET_EXCLUDE", UTIL_T_STR, &util_cfg.net_exclude, "", NULL,
     "interfaces and networks (eth9,10.77.9.0/24) that carry no MPI data: left out of a "
     "process's networks (its card, the gateways' networks, the reach of a pair, port names), "
     "e.g. a management network (docs/gateway.md)",
     0, UTIL_LVL_USER, UTIL_CAT_FABRIC},
    {"DCFA_GATEWAY_ROUTES", UTIL_T_STR, &util_cfg.gateway_routes, "", NULL,
     "set by mpirun --gateway-routes for the ranks: the route file's rules 'SIDE SIDE GATEWAY' "
     "joined by ';', which override the rule (a + b) % gateways (docs/gateway.md)",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_SOCK_CREDIT", UTIL_T_SIZE, &util_cfg.sock_credit, "1048576", NULL,
     "sock fabric: bytes a sender may have in flight per connection (its credit window, rounded "
     "up to a power of two of ring blocks): the kernel's socket buffers hold what the fabric's "
     "own buffers (128 KiB each way) do not",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_SOCK_EAGER_LIMIT", UTIL_T_SIZE, &util_cfg.sock_eager_limit, "262208", NULL,
     "largest message (header included) sent eagerly to a peer over sock; larger ones use "
     "rendezvous; 0: DCFA_EAGER_LIMIT. 256 KiB of payload: over a stream socket a rendezvous "
     "costs more than the copies it saves up to there (docs/fabric.md)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_SOCK_RMA", UTIL_T_BOOL, &util_cfg.sock_rma, "1", NULL,
     "sock fabric: one-sided access emulated on the stream (WRITE, READQ, READR frames), so that "
     "a rendezvous moves its data from the sender's buffer into the receiver's with no copy "
     "through the connection's buffers; 0: the data travel as packets (docs/fabric.md)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_SOCK_CONNECT", UTIL_T_ENUM, &util_cfg.sock_connect, "auto", "auto,daemon,self",
     "sock fabric: who makes its connections: daemon (the assist daemon hands over connected "
     "sockets, DCFA_SOCK_EP_FD), self (a listening socket on 127.0.0.1 of this process, one node "
     "only: for tests), auto (daemon when the daemon offers it, else self)",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_OFI_PROVIDER", UTIL_T_STR, &util_cfg.ofi_provider, "", NULL,
     "libfabric provider for the ofi fabric, '+' standing for ';' (tcp+ofi_rxm); empty: "
     "libfabric's choice (FI_PROVIDER honoured)",
     0, UTIL_LVL_USER, UTIL_CAT_FABRIC},
    {"DCFA_OFI_IFACE", UTIL_T_STR, &util_cfg.ofi_iface, "", NULL,
     "network interface (libfabric domain) of the ofi fabric, e.g. lo; empty: lo when every rank "
     "is on this node, else libfabric's choice",
     0, UTIL_LVL_USER, UTIL_CAT_FABRIC},
    {"DCFA_OFI_SPLIT", UTIL_T_BOOL, &util_cfg.ofi_split, "0", NULL,
     "ofi: rendezvous reads and writes go out of an endpoint of their own to the peer's bulk "
     "endpoint, so ring packets and read requests never queue behind another transfer's data (not "
     "with FI_MR_ENDPOINT providers); off by default: over tcp between hosts it measured slower "
     "both ways (docs/fabric.md)",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_OFI_LATE", UTIL_T_BOOL, &util_cfg.ofi_late, "1", NULL,
     "a job of our mpirun across hosts opens the ofi fabric (libfabric: about 300 ms here) in a "
     "thread of its own started by MPI_Init, which returns without waiting; the address goes to "
     "the peers through mpirun's name service, and the first contact with a process on another "
     "host waits for the thread; 0: opened inside MPI_Init (docs/fabric.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_NET_TIMEOUT", UTIL_T_INT, &util_cfg.net_timeout, "60", NULL,
     "seconds a TCP connection to another host (sock's, a gateway's, a relay's) may go without "
     "an answer from the peer's host before it fails with an error naming the peer: keepalive "
     "probes while it idles, TCP_USER_TIMEOUT while data waits for acknowledgement; a host or "
     "link that goes down then ends the job instead of hanging it; 0: no bound (the kernel's "
     "retransmissions, about 15 minutes, and none at all for an idle connection)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_AUTO", UTIL_T_INT, &util_cfg.ofi_auto, "-1", NULL,
     "whether DCFA_FABRICS=auto opens ofi (libfabric) for a job of our mpirun across hosts, "
     "where the daemons hand over TCP connections (the sock fabric) too: -1 where the node has "
     "hardware a libfabric provider drives (an RDMA device in /sys/class/infiniband or "
     "/sys/class/cxi, Omni-Path's /dev/hfi1_0) or FI_PROVIDER / DCFA_OFI_PROVIDER names one; "
     "else libfabric would only add its TCP over the same kernel, and its open (about 300-500 ms "
     "with Debian's libfabric) is spared: sock carries every pair; 1: always; 0: never "
     "(docs/fabric.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_LATE_SOCK", UTIL_T_BOOL, &util_cfg.ofi_late_sock, "1", NULL,
     "with DCFA_OFI_LATE, MPI_Init opens the sock fabric too (the connections the daemons make), "
     "and a first connection to a process on another host made while ofi is not open at either "
     "end goes over sock instead of waiting for it (about 2 ms against 300-500; between ranks of "
     "job 0: a spawned job's wait); later ones go "
     "over ofi; both ends agree through mpirun's name service; 0: every one waits for ofi "
     "(docs/fabric.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_LATE_DELAY", UTIL_T_INT, &util_cfg.ofi_late_delay, "0", NULL,
     "a test of DCFA_OFI_LATE: the thread that opens ofi waits this many ms first, so that a "
     "test sees MPI_Init return with libfabric not loaded and a first contact wait for it",
     0, UTIL_LVL_TEST, UTIL_CAT_FABRIC},
    {"DCFA_RING_START", UTIL_T_INT, &util_cfg.ring_start, "0", NULL,
     "a test of the 32-bit ring positions: every connection's first packet goes this many ring "
     "blocks (rounded up to whole rings) before the positions wrap; 0: positions start at 0",
     UTIL_TF_AGREE, UTIL_LVL_TEST, UTIL_CAT_PROTOCOL},
    {"DCFA_OFI_MAX_CREDIT", UTIL_T_INT, &util_cfg.ofi_max_credit, "2048", NULL,
     "blocks in each ofi connection's receive ring (and its staging ring): DCFA_MAX_CREDIT's ring "
     "doubled until it has at least this many; across a network a ring of 32 KiB held too few 8-16 "
     "KiB messages to keep the link busy (docs/fabric.md)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_GW_EAGER_LIMIT", UTIL_T_SIZE, &util_cfg.gw_eager_limit, "262208", NULL,
     "largest message (header included) sent eagerly to a peer through a gateway daemon, and the "
     "largest packet of the gw fabric; 0: DCFA_EAGER_LIMIT. A rendezvous through a gateway costs "
     "two hops each way (256 KiB of payload: 128-256 KiB one-way in half the time of 64 KiB "
     "packets); the gateway holds up to DCFA_GW_TOKENS packets of this size per process "
     "(docs/gateway.md)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_EAGER_LIMIT", UTIL_T_SIZE, &util_cfg.ofi_eager_limit, "65600", NULL,
     "largest message (header included) sent eagerly to a peer over ofi; larger ones use "
     "rendezvous; 0: DCFA_EAGER_LIMIT. Across a network a rendezvous costs a round trip that "
     "eager packets up to 64 KiB do not pay (docs/fabric.md)",
     UTIL_TF_AGREE, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_TAIL", UTIL_T_BOOL, &util_cfg.ofi_tail, "1", NULL,
     "ofi: packets go into a peer's ring as one write that carries its own tail marker, with no "
     "completion on either side, where the provider applies a write's bytes in order within the "
     "receiver's progress (tcp); 0: every ring write carries remote CQ data (docs/fabric.md)",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_OFI_SRQ", UTIL_T_BOOL, &util_cfg.ofi_srq, "1", NULL,
     "ofi: packets of every peer land in receive buffers the process shares (a shared receive "
     "queue: messages into multi-receive buffers, sent from a pool of send buffers shared by all "
     "connections), so a peer costs a few hundred bytes instead of two rings; 0: a receive and a "
     "staging ring per connection, written one-sidedly (docs/fabric.md)",
     UTIL_TF_AGREE, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_OFI_SRQ_BUFS", UTIL_T_INT, &util_cfg.ofi_srq_bufs, "8", NULL,
     "ofi shared receive queue: receive buffers kept posted (each reposted once every packet in it "
     "is consumed; when all are full the provider holds arriving packets back)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_SRQ_BUF", UTIL_T_SIZE, &util_cfg.ofi_srq_buf, "262144", NULL,
     "ofi shared receive queue: bytes of each receive buffer, which takes packets one after the "
     "other (FI_MULTI_RECV; at least two of the largest packet); 0: buffers of one packet each, "
     "for providers without multi-receive buffers",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_TX_SLOTS", UTIL_T_INT, &util_cfg.ofi_tx_slots, "64", NULL,
     "ofi shared receive queue: send buffers of the largest packet's size, shared by all "
     "connections (a packet that the provider copies at once, inject, frees its buffer "
     "immediately; with none free, packets wait in the connection's backlog)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_LANES", UTIL_T_INT, &util_cfg.ofi_lanes, "16", NULL,
     "ofi shared receive queue: this many busy peers get a receive ring of their own (a lane, "
     "DCFA_OFI_LANE_BLOCKS blocks + one largest packet), written one-sidedly with tail-marked "
     "writes, where the provider allows them (tcp); 0: every packet goes through the shared queue",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_LANE_BLOCKS", UTIL_T_INT, &util_cfg.ofi_lane_blocks, "512", NULL,
     "ofi shared receive queue: blocks of a lane (rounded down to a power of two, at most the "
     "credit window DCFA_OFI_MAX_CREDIT): a packet goes into the lane when it ends within this "
     "many blocks of what the receiver last said it consumed, else through the shared queue; 512 "
     "blocks of 64 bytes + a 16 KiB packet: 48 KiB per busy peer",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_LANE_AFTER", UTIL_T_INT, &util_cfg.ofi_lane_after, "64", NULL,
     "ofi shared receive queue: packets a peer sends through the shared queue before it is offered "
     "a lane (a busy peer)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_OFI_WAKE", UTIL_T_INT, &util_cfg.ofi_wake, "1", NULL,
     "ofi shared receive queue: progress looks only at connections the fabric names as having "
     "received a packet (and at lanes with a packet at their next position); 0: at every "
     "connection on every pass",
     0, UTIL_LVL_DEV, UTIL_CAT_FABRIC},
    {"DCFA_MR_CACHE", UTIL_T_INT, &util_cfg.mr_cache, "128", NULL,
     "memory registrations a fabric keeps cached (least recently used dropped first); 0 registers "
     "for each transfer",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
};
const int util_ntunables = (int)(sizeof util_tunables / sizeof util_tunables[0]);

/* The other DCFA_* variables: read by mpirun, the assist daemon or start-up code of their
 * own (ptr NULL), listed here so that mpiinfo and docs know every one */
static const util_tunable util_other_vars[] = {
    {"DCFA_RSH", UTIL_T_STR, NULL, "ssh", NULL,
     "mpirun: the remote shell command that starts the assist daemon on another host (words split "
     "at blanks; docs/launcher.md)",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_BIND_TO", UTIL_T_STR, NULL, "", NULL,
     "mpirun: the --bind-to of a run that gives none (core, hwthread, socket, numa or none; "
     "empty: the default of docs/launcher.md)",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_LAUNCH_TIMEOUT", UTIL_T_INT, NULL, "60", NULL,
     "mpirun: seconds a remote daemon has to start and report back before the job ends with a "
     "message naming its host",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_TREE_FANOUT", UTIL_T_INT, NULL, "2", NULL,
     "mpirun: children of each daemon in the tree that starts the hosts' daemons (1-1024)", 0,
     UTIL_LVL_TUNING, UTIL_CAT_LAUNCH},
    {"DCFA_UNIVERSE_SIZE", UTIL_T_INT, NULL, "0", NULL,
     "MPI_UNIVERSE_SIZE of jobs mpirun (-usize wins) or a singleton's daemon starts (1-1000000); "
     "0: the slots of -hosts/-hostfile, else the online CPUs",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_OVERSUBSCRIBE", UTIL_T_BOOL, NULL, "1", NULL,
     "0: a spawn that would run more processes (all jobs) than the universe size fails, as "
     "--no-oversubscribe",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_NOINIT_GRACE", UTIL_T_STR, NULL, "1", NULL,
     "mpirun and the assist daemon: seconds (decimals allowed) after a process exits 0 without "
     "MPI_Init before the job ends if another of its processes is in MPI (they would wait for it "
     "for ever)",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_SINGLETON", UTIL_T_BOOL, NULL, "0", NULL,
     "1: MPI_Init runs the process as a singleton even when another MPI's launcher (Open MPI's "
     "mpirun, PMIx, srun without --mpi=pmi2) started it; 0: it says so in one line and exits 1",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_GATEWAY_HOSTS", UTIL_T_STR, NULL, "", NULL,
     "set by mpirun --gateways for its daemons: the hosts that run a gateway daemon for the job", 0,
     UTIL_LVL_DEV, UTIL_CAT_LAUNCH},
    {"DCFA_TCP_CONGESTION", UTIL_T_STR, NULL, "", NULL,
     "the congestion control of every TCP connection that carries MPI data (sock's across "
     "hosts, a gateway's, the gateway daemon's), e.g. cubic; empty: the system's "
     "(net.ipv4.tcp_congestion_control). Where the system's is bbr, cubic gave streams 2-3x "
     "across the veth test hosts and a 64 KiB ping-pong 1.6x the time (docs/bench.md)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_GW_TOKENS", UTIL_T_INT, NULL, "16", NULL,
     "gateway daemon: packets each process may have in the gateway at once (per-hop tokens; the "
     "gateway's buffers are at most this many packets per process)",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_GW_NICE", UTIL_T_INT, NULL, "-10", NULL,
     "gateway daemon: its nice value (-20 to 19), set where allowed (root, CAP_SYS_NICE; else it "
     "keeps its daemon's): a frame waits while the gateway is not on a core, so on a host it "
     "shares with polling processes it goes first",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_GW_HELLO_TIMEOUT", UTIL_T_STR, NULL, "10", NULL,
     "gateway daemon: seconds (0.1-3600) a new connection has to say HELLO or PROXY with the "
     "job's key after its CHALLENGE before the gateway closes it",
     0, UTIL_LVL_TUNING, UTIL_CAT_FABRIC},
    {"DCFA_NAMESERVER", UTIL_T_STR, NULL, "", NULL,
     "host:port of a name server (mpirun --nameserver) for MPI_Publish_name/MPI_Lookup_name across "
     "jobs and singletons; empty: mpirun's own table",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_NAMESERVER_SECRET", UTIL_T_STR, NULL, "", NULL,
     "a shared secret (at least 16 characters) of mpirun --nameserver and its clients: the "
     "server admits other users and hosts that send it, and needs it to listen on an address "
     "other than loopback; clients send it when set (docs/launcher.md, the trust model)",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_PORT_ADDR", UTIL_T_STR, NULL, "", NULL,
     "the IPv4 address port names (MPI_Open_port) carry; empty: the first address of an interface "
     "that is up and not loopback",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_MPIRUN", UTIL_T_STR, NULL, "", NULL,
     "the mpirun a singleton starts as its assist daemon (spawn, ports, names); empty: the one "
     "installed beside the library, else mpirun on PATH",
     0, UTIL_LVL_USER, UTIL_CAT_DPM},
    {"DCFA_PMI_VERSION", UTIL_T_INT, NULL, "0", NULL,
     "the PMI wire protocol spoken to another process manager (Hydra, Slurm): 1 or 2; 0: PMI-2 "
     "where the launcher offers it (docs/launcher.md)",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_NODE_KEY", UTIL_T_STR, NULL, "", NULL,
     "(test) the node identity processes compare to find their node's peers, instead of hostname, "
     "boot id and /dev/shm's device: tests make one host look like several; under mpirun "
     "--isolate shm the assist daemon sets it to the host's own",
     0, UTIL_LVL_TEST, UTIL_CAT_LAUNCH},
    {"DCFA_JOBID", UTIL_T_STR, NULL, "", NULL,
     "set by the assist daemon: the job's short id, which names its resources", 0,
     UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_NODE_NPROCS", UTIL_T_INT, NULL, "0", NULL,
     "set by the assist daemon: processes of every job it runs on this node (oversubscription)", 0,
     UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_PROCESS_MAPPING", UTIL_T_STR, NULL, "", NULL,
     "set by the assist daemon: which ranks share a node, so start-up asks it nothing more", 0,
     UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_SOCK_EP_FD", UTIL_T_INT, NULL, "-1", NULL,
     "set by the assist daemon: the rank's end of its endpoint channel, over which the daemon "
     "hands "
     "over connected sockets (sock fabric, docs/fabric.md)",
     0, UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_SOCK_TOKEN", UTIL_T_STR, NULL, "", NULL,
     "set by the assist daemon: the rank's endpoint token (16 hex digits), which its sock card "
     "carries and the daemon checks in every request for a connection to it",
     0, UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_SOCK_NODE", UTIL_T_INT, NULL, "0", NULL,
     "set by the assist daemon across hosts: its node in mpirun's tree, which the rank's sock "
     "card carries (a hint where the rank runs, for a daemon that does not know where a spawned "
     "job runs; docs/launcher.md, Endpoints across hosts)",
     0, UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_SOCK_DADDR", UTIL_T_STR, NULL, "", NULL,
     "set by the assist daemon when it has a data port (across hosts, or any --isolate job): "
     "'<port>:<networks>', which the rank's sock card carries so that the daemon of another "
     "mpirun on another host can connect to it (docs/launcher.md, Endpoints between two "
     "mpiruns)",
     0, UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
    {"DCFA_ISOLATE", UTIL_T_STR, NULL, "", NULL,
     "confine each rank (mpirun --isolate, which sets it): net = a network namespace with only "
     "loopback, seccomp = a filter denying socket() but AF_UNIX, shm = an empty read-only "
     "/dev/shm, shared segments from the assist daemon; combinable (net,seccomp,shm); its "
     "connections the sockets the assist daemon hands over; the fabric auto choice "
     "then opens sock instead of ofi (docs/launcher.md)",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_RELAY", UTIL_T_BOOL, NULL, "0", NULL,
     "the assist daemon forwards the bytes of the sockets it hands over (mpirun --relay, which "
     "sets it): two socket pairs joined by the daemon instead of one, the host-offload baseline "
     "(docs/launcher.md)",
     0, UTIL_LVL_USER, UTIL_CAT_LAUNCH},
    {"DCFA_UNIVERSE_HOSTS", UTIL_T_INT, NULL, "0", NULL,
     "set by mpirun: the hosts of the job's universe (above 1, the ofi fabric is opened for "
     "spawned jobs)",
     0, UTIL_LVL_LAUNCHER, UTIL_CAT_LAUNCH},
};
const int util_nvars = (int)(sizeof util_tunables / sizeof util_tunables[0] +
                             sizeof util_other_vars / sizeof util_other_vars[0]);

const util_tunable *util_var(int i)
{
    if (i < 0 || i >= util_nvars)
        return NULL;
    return i < util_ntunables ? &util_tunables[i] : &util_other_vars[i - util_ntunables];
}

const char *const util_tunable_level_names[UTIL_NLVL] = {"user", "tuning", "developer", "test",
                                                         "launcher"};
const char *const util_tunable_cat_names[UTIL_NCAT][2] = {
    {"dcfa_protocol", "point-to-point protocols: eager limit, receive ring and credits, "
                      "rendezvous, staging, and their packet counters"},
    {"dcfa_progress", "how waiting ranks poll, yield and nap, and the assist thread"},
    {"dcfa_collectives", "collective algorithm choices and thresholds"},
    {"dcfa_fabric", "which fabrics open and the ofi fabric's resources"},
    {"dcfa_rma", "one-sided communication: modes, batching, the assist thread"},
    {"dcfa_io", "MPI-IO: collective buffering and data sieving defaults"},
    {"dcfa_dpm", "dynamic processes: spawn, ports, names, the universe"},
    {"dcfa_launcher", "mpirun and the assist daemon"},
    {"dcfa_debug", "diagnostics"},
};

const util_tunable *util_tunable_find(const char *name)
{
    for (int i = 0; i < util_nvars; i++)
        if (!strcmp(util_var(i)->name, name))
            return util_var(i);
    return NULL;
}
/* set through MPI_T before the library started: util_tunables_load keeps them */
static unsigned char util_tunable_fixed[sizeof util_tunables / sizeof util_tunables[0]];

void util_tunable_fix(int i)
{
    if (i >= 0 && i < util_ntunables)
        util_tunable_fixed[i] = 1;
}

static int util_tunable_parse(const util_tunable *t, const char *s)
{
    char *end = NULL;
    switch (t->type) {
    case UTIL_T_SIZE: {
        unsigned long long v = strtoull(s, &end, 0);
        if (end == s)
            return UTIL_EINVAL;
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        else if (*end == 'g' || *end == 'G')
            v <<= 30, end++;
        if (*end)
            return UTIL_EINVAL;
        *(size_t *)t->ptr = (size_t)v;
        return UTIL_OK;
    }
    case UTIL_T_INT: {
        long v = strtol(s, &end, 0);
        if (end == s || *end)
            return UTIL_EINVAL;
        *(int *)t->ptr = (int)v;
        return UTIL_OK;
    }
    case UTIL_T_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on"))
            *(int *)t->ptr = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
            *(int *)t->ptr = 0;
        else
            return UTIL_EINVAL;
        return UTIL_OK;
    case UTIL_T_STR:
        *(const char **)t->ptr = s;
        return UTIL_OK;
    case UTIL_T_ENUM: {
        int idx = 0;
        const char *p = t->choices;
        size_t n = strlen(s);
        while (p && *p) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (len == n && !strncasecmp(p, s, n)) {
                *(int *)t->ptr = idx;
                return UTIL_OK;
            }
            idx++;
            p = comma ? comma + 1 : NULL;
        }
        return UTIL_EINVAL;
    }
    }
    return UTIL_EINVAL;
}

static void util_net_say_log(const char *line) { util_log("%s", line); }

int util_tunables_load(void)
{
    int rc = UTIL_OK;
    util_net_say = util_net_say_log;
    for (int i = 0; i < util_ntunables; i++) {
        const util_tunable *t = &util_tunables[i];
        if (util_tunable_fixed[i])
            continue;
        (void)util_tunable_parse(t, t->defval);
        const char *env = getenv(t->name);
        if (env && *env && util_tunable_parse(t, env) != UTIL_OK) {
            util_log("invalid value '%s' for %s (%s%s%s); using the default %s", env, t->name,
                     t->type == UTIL_T_ENUM ? "one of " : "a number",
                     t->type == UTIL_T_ENUM ? t->choices : "", "", t->defval);
            rc = UTIL_EINVAL;
        }
    }
    /* keep the protocol parameters consistent */
    if (util_cfg.max_credit < 0)
        util_cfg.max_credit = -1;   /* auto */
    else if (util_cfg.max_credit < 4)
        util_cfg.max_credit = 4;
    /* a sender stops with one credit left (kept for SYNC): the receiver must answer
     * before that, so the limit is at least 2 */
    if (util_cfg.credit_sync_limit < 2)
        util_cfg.credit_sync_limit = 2;
    if (util_cfg.max_credit > 0 && util_cfg.credit_sync_limit > util_cfg.max_credit - 2)
        util_cfg.credit_sync_limit = util_cfg.max_credit - 2;
    util_cfg.stage_chunk = (util_cfg.stage_chunk + 4095) & ~(size_t)4095;
    if (util_cfg.stage_chunk == 0)
        util_cfg.stage_chunk = 4096;
    if (util_cfg.stage_chunks < 0)
        util_cfg.stage_chunks = 0;
    if (util_cfg.stage_chunks > 1024)
        util_cfg.stage_chunks = 1024;
    return rc;
}

int util_tunable_format(const util_tunable *t, char *buf, size_t len)
{
    switch (t->type) {
    case UTIL_T_SIZE:
        return snprintf(buf, len, "%zu", *(size_t *)t->ptr);
    case UTIL_T_INT:
    case UTIL_T_BOOL:
        return snprintf(buf, len, "%d", *(int *)t->ptr);
    case UTIL_T_STR:
        return snprintf(buf, len, "%s", *(const char *const *)t->ptr);
    case UTIL_T_ENUM: {
        int idx = *(int *)t->ptr;
        const char *p = t->choices;
        for (int k = 0; k < idx && p; k++) {
            p = strchr(p, ',');
            if (p)
                p++;
        }
        if (!p)
            return snprintf(buf, len, "%d", idx);
        const char *comma = strchr(p, ',');
        int n = comma ? (int)(comma - p) : (int)strlen(p);
        return snprintf(buf, len, "%.*s", n, p);
    }
    }
    return 0;
}

/* ---- settings every process must share ------------------------------------------ */

int util_tunables_agree_format(const char *version, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%s/", version);
    for (int i = 0; i < util_ntunables && n < len; i++) {
        if (!(util_tunables[i].flags & UTIL_TF_AGREE))
            continue;
        char val[64];
        util_tunable_format(&util_tunables[i], val, sizeof val);
        n += (size_t)snprintf(buf + n, len - n, "%s%s", buf[n - 1] == '/' ? "" : ",", val);
    }
    return n < len ? UTIL_OK : UTIL_ENOMEM;
}

/* the next comma-separated field of *s into out[len]; 0 at the end */
static int util_agree_field(const char **s, char *out, size_t len)
{
    if (!*s)
        return 0;
    const char *comma = strchr(*s, ',');
    size_t n = comma ? (size_t)(comma - *s) : strlen(*s);
    snprintf(out, len, "%.*s", (int)n, *s);
    *s = comma ? comma + 1 : NULL;
    return 1;
}

int util_tunables_agree_compare(const char *a, int ra, const char *b, int rb, char *msg,
                                size_t len)
{
    const char *va = strchr(a, '/'), *vb = strchr(b, '/');
    size_t n = 0;
    int diffs = 0;
    msg[0] = 0;
    if (!va || !vb || va - a != vb - b || strncmp(a, b, (size_t)(va - a)) != 0) {
        snprintf(msg, len, "rank %d runs DCFA-MPI %.*s but rank %d runs %.*s", ra,
                 va ? (int)(va - a) : 0, a, rb, vb ? (int)(vb - b) : 0, b);
        return 1;
    }
    va++;
    vb++;
    for (int i = 0; i < util_ntunables; i++) {
        if (!(util_tunables[i].flags & UTIL_TF_AGREE))
            continue;
        char fa[64] = "", fb[64] = "";
        util_agree_field(&va, fa, sizeof fa);
        util_agree_field(&vb, fb, sizeof fb);
        if (strcmp(fa, fb) == 0)
            continue;
        diffs++;
        if (n < len)
            n += (size_t)snprintf(msg + n, len - n, "%s%s is %s on rank %d but %s on rank %d",
                                  n ? "; " : "", util_tunables[i].name, fa, ra, fb, rb);
    }
    return diffs;
}
