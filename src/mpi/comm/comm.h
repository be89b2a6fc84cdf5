/* Communicators (src/mpi/comm): construction and destruction behind the
 * MPI_Comm_* bindings, and context-id allocation.
 *
 * Context ids come in pairs: a communicator owns ctx (point-to-point) and
 * ctx + 1 (the library's collective traffic). Pair p is ctx 2p. Each process
 * keeps a bitmap of the pairs it has free (MPII_CTX_PAIRS of them; pair 0 is
 * MPI_COMM_WORLD, pair 1 MPI_COMM_SELF). A new communicator's pair is agreed
 * by the processes that will be in it plus, at most, the other processes of
 * the parent: they AND what they offer (allreduce, or a leader exchange for
 * inter-communicators) and everybody takes the lowest pair offered
 * everywhere, in rounds until there is one (the offers and why concurrent
 * agreements in threads neither collide nor wait for ever: ctx.c).
 * Only members of the new communicator mark the pair used.
 *
 * Why this is safe when communicators are built concurrently in disjoint
 * subsets (MPI_Comm_create_group, MPI_Comm_split): a pair is only ever taken
 * after every member of the new communicator reported it free, so no process
 * holds two live communicators with the same pair; two communicators that
 * share a pair have disjoint members, so a message (which only travels
 * between members of one communicator) can never match the other one. Each
 * agreement runs on its parent's collective context (or, for
 * MPI_Comm_create_group, on the parent's collective context with a tag
 * derived from the user's tag and reserved for construction), so concurrent
 * agreements between disjoint process sets never see each other's messages. */
#ifndef DCFA_MPI_COMM_H
#define DCFA_MPI_COMM_H

#include "mpi/mpii.h"

#define MPII_TAG_UB ((1 << 30) - 1) /* MPI_TAG_UB: core accepts tags 0..2^30-1 */

/* ---- context-id bitmaps and the agreement rule (ctx.c, pure logic) --------------- */
#define MPII_CTX_PAIRS 2048
#define MPII_CTX_WORDS (MPII_CTX_PAIRS / 32)
/* a contribution to one round of an agreement: the offered pairs, then a
 * flags word (MPII_CTXAG_FULL: this process offered every pair it has free) */
#define MPII_CTXAG_W (MPII_CTX_WORDS + 1)
#define MPII_CTXAG_FULL 1u
/* pairs the first round of an agreement offers (see mpii_ctxag_offer) */
#define MPII_CTXAG_WINDOW 32

/* An agreement in flight in this process (one per communicator being built) */
typedef struct mpii_ctxag {
    struct mpii_ctxag *next;
    uint64_t key;                   /* the same in every participant; orders agreements */
    int joined;                     /* a round completed: every participant is in it */
    int offered;                    /* a contribution is out (its bits are held) */
    unsigned mine[MPII_CTX_WORDS];  /* the pairs of that contribution */
} mpii_ctxag;

typedef struct mpii_ctx_space {
    unsigned free[MPII_CTX_WORDS]; /* bit set: pair free */
    unsigned held[MPII_CTX_WORDS]; /* offered by a contribution whose round is not over */
    mpii_ctxag *running;           /* agreements in flight */
} mpii_ctx_space;
extern mpii_ctx_space mpii_ctx_st; /* this process */

void mpii_ctx_space_init(mpii_ctx_space *s); /* all free except pairs 0 and 1 */
/* the n lowest pairs free in mask (an AND of bitmaps) into pairs[]; UTIL_ENOENT if fewer */
int mpii_ctx_pick(const unsigned *mask, int n, int *pairs);
int mpii_ctx_take(mpii_ctx_space *s, int pair); /* UTIL_EINVAL if already taken */
void mpii_ctx_release(mpii_ctx_space *s, uint32_t ctx);
static inline uint32_t mpii_ctx_of_pair(int pair) { return (uint32_t)pair * 2u; }

/* The agreement, in rounds: every participant calls offer, the contributions
 * are ANDed (allreduce, or gathered and sent back), every participant calls
 * decide with the AND. decide answers UTIL_OK with n pairs (the caller takes
 * them, in the members of the new communicator, before it next waits),
 * UTIL_EAGAIN for another round, or UTIL_ENOENT when no pair is free
 * everywhere. All participants see the same AND, so they agree on that.
 * mpii_ctxag_end drops an agreement after an error. See ctx.c for why no
 * pair is chosen twice and no agreement waits for ever. */
void mpii_ctxag_begin(mpii_ctx_space *s, mpii_ctxag *a, uint64_t key);
void mpii_ctxag_offer(mpii_ctx_space *s, mpii_ctxag *a, unsigned out[MPII_CTXAG_W]);
int mpii_ctxag_decide(mpii_ctx_space *s, mpii_ctxag *a, const unsigned all[MPII_CTXAG_W], int n,
                      int *pairs);
void mpii_ctxag_end(mpii_ctx_space *s, mpii_ctxag *a);
/* an offer would be empty now (a one-process agreement then waits instead of looping) */
int mpii_ctxag_would_wait(const mpii_ctx_space *s, const mpii_ctxag *a);

/* an agreement's key on parent c (counts c's agreements: call it once per agreement) */
uint64_t mpii_comm_ctx_key(mpii_comm *c);

/* ---- communicator objects ------------------------------------------------------------ */
void mpii_comm_ref(mpii_comm *c);
/* runs the attribute delete callbacks then drops the user's reference; an
 * error from a callback is returned and the communicator stays */
int mpii_comm_free(mpii_comm *c);
/* drop a library reference (no attribute callbacks) */
void mpii_comm_release(mpii_comm *c);
/* a new communicator over c's group(s) on the given pairs, taken here; no
 * attributes, info or name (MPI_Comm_idup's completion) */
mpii_comm *mpii_comm_build_dup(mpii_comm *c, int pair, int local_pair);

/* Constructors: MPI_SUCCESS or an error class; *out is NULL where the
 * standard gives MPI_COMM_NULL. Collective as the MPI call is. */
int mpii_comm_dup(mpii_comm *c, MPI_Info info, int use_info, mpii_comm **out);
/* a duplicate of intra-communicator c for the library's own traffic (RMA
 * windows): new contexts, same group and error handler, no attributes, info,
 * name or topology (no user callback runs); collective over c */
int mpii_comm_dup_internal(mpii_comm *c, mpii_comm **out);
/* MPI_Comm_idup(_with_info): attributes and info are copied now, *newcomm
 * is set when the request completes (idup.c) */
int mpii_comm_idup(mpii_comm *c, MPI_Info info, int use_info, MPI_Comm *newcomm,
                   MPI_Request *req);
int mpii_comm_split(mpii_comm *c, int color, int key, mpii_comm **out);
int mpii_comm_split_type(mpii_comm *c, int type, int key, MPI_Info info, mpii_comm **out);
/* my module's color in intra-communicator c (module.c, MPIX_COMM_TYPE_MODULE): the lowest
 * rank of my module; node_color: the lowest rank of my node in c. Collective over c. */
int mpii_comm_module_color(mpii_comm *c, int node_color, int *color);
/* the module color of each of the world's processes 0..n-1 (colors[n]) from their cards'
 * "host:" and "net:" entries, as mpii_comm_module_color finds them without DCFA_MODULE: the
 * same table on every process, with no communication (the key/value store's cards) */
int mpii_module_colors_from_cards(int n, int *colors);
int mpii_comm_create(mpii_comm *c, mpii_group *g, mpii_comm **out);
int mpii_comm_create_group(mpii_comm *c, mpii_group *g, int tag, mpii_comm **out);
int mpii_intercomm_create(mpii_comm *local, int local_leader, mpii_comm *peer, int remote_leader,
                          int tag, mpii_comm **out);
/* MPI_Comm_create_from_group / MPI_Intercomm_create_from_groups: every
 * process must be in MPI_COMM_WORLD (true until dynamic processes exist) */
int mpii_comm_create_from_group(mpii_group *g, const char *stringtag, mpii_comm **out);
int mpii_intercomm_from_groups(mpii_group *local, int local_leader, mpii_group *remote,
                               int remote_leader, const char *stringtag, mpii_comm **out);
int mpii_intercomm_merge(mpii_comm *inter, int high, mpii_comm **out);
/* an inter-communicator between local's group and the group whose root holds the other end
 * of socket fd (at local's rank root; ignored elsewhere): src/mpi/comm/dpm.c */
int mpii_intercomm_join(mpii_comm *local, int root, int fd, mpii_comm **out);
int mpii_comm_compare(mpii_comm *a, mpii_comm *b);
int mpii_comm_set_info(mpii_comm *c, MPI_Info info);

#endif
