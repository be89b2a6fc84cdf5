/* One-sided communication (src/mpi/osc): windows, epochs and RMA operations
 * behind the MPI_Win_* / MPI_Put ... bindings. See docs/rma.md.
 *
 * Every target of a window is reached one of two ways, chosen per pair at
 * window creation:
 *   direct  the target is on this node: its window is either in the node
 *           segment every rank maps (MPI_Win_allocate, _allocate_shared) and
 *           is read and written with loads and stores, or in the target's
 *           own memory (MPI_Win_create, dynamic) and is reached with
 *           core_rma_read/write (cross-memory attach). Locks, the
 *           accumulate lock and the PSCW counters live in the node segment.
 *           No operation needs the target's CPU.
 *   am      operations travel as messages on the window's private
 *           communicator and the target's progress engine (or its assist
 *           thread) applies them (another node; DCFA_RMA_MODE=am; no CMA).
 *
 * The bindings check arguments that need no window state (handles, counts,
 * datatypes); the calls below check the rest (epochs, ranges) and return
 * MPI_SUCCESS or an error class after raising it through mpii_err. */
#ifndef DCFA_MPI_OSC_H
#define DCFA_MPI_OSC_H

#include "mpi/mpii.h"
#include "core/core.h"

typedef struct osc_win osc_win;

/* ---- windows (win.c) --------------------------------------------------------------------- */
extern util_htab osc_win_tab;
extern int osc_win_inited;
/* NULL if not a live window handle; inline: every RMA call looks its window up */
static inline osc_win *osc_win_get(MPI_Win h)
{
    if (!osc_win_inited || MPII_HANDLE_KIND(h) != MPII_KIND_WIN)
        return NULL;
    osc_win *w = (osc_win *)util_htab_get(&osc_win_tab, MPII_HANDLE_INDEX(h));
    return w && *(const MPI_Win *)w == h ? w : NULL; /* the handle is the first member */
}
MPI_Win osc_win_handle(const osc_win *w);
/* base: the user's memory (create); for allocate flavours *base_out gets the new memory */
int osc_win_create(const char *fn, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit,
                   MPI_Info info, mpii_comm *c, void *base_out, MPI_Win *out);
int osc_win_free(const char *fn, osc_win *w);
int osc_win_attach(const char *fn, osc_win *w, void *base, MPI_Aint size);
int osc_win_detach(const char *fn, osc_win *w, const void *base);
/* MPI_Win_shared_query: rank MPI_PROC_NULL = the first rank with memory */
int osc_win_shared_query(const char *fn, osc_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                         void *baseptr);
int osc_win_set_info(const char *fn, osc_win *w, MPI_Info info);
MPI_Info osc_win_get_info(osc_win *w); /* a new info object */
mpii_group *osc_win_group(osc_win *w); /* borrowed */
int osc_win_size(osc_win *w);          /* ranks in the window */
MPI_Errhandler osc_win_errhandler(osc_win *w);
void osc_win_set_errhandler(osc_win *w, MPI_Errhandler eh); /* takes a reference */
/* the value of a predefined window attribute (MPI_WIN_BASE .. MPI_WIN_MODEL) */
void *osc_win_predef_attr(osc_win *w, int keyval);
mpii_attr **osc_win_attrs(osc_win *w);
char *osc_win_name(osc_win *w); /* MPI_MAX_OBJECT_NAME bytes */
/* "window 'name'" or "window 0x08000003": for error messages */
const char *osc_win_label(osc_win *w);
/* the handler of a window handle for mpii_err; MPI_ERRHANDLER_NULL if not a window */
MPI_Errhandler osc_errhandler_of(int handle);
void osc_finalize(void);     /* frees windows the program left behind */
void osc_dump_pending(void); /* the hang report: open epochs and message-mode work per window */
/* what mpiinfo says about passive-target progress */
const char *osc_progress_claim(void);

/* ---- operations (ops.c) ----------------------------------------------------------------- */
enum osc_kind { OSC_PUT = 1, OSC_GET, OSC_ACC, OSC_GACC, OSC_FOP, OSC_CAS };
typedef struct osc_args {
    int kind;
    const void *obuf; /* origin data (put, acc; fop: 1 element; cas: the new value) */
    MPI_Aint ocount;
    MPI_Datatype odt;
    void *rbuf; /* get: origin buffer; gacc/fop/cas: result */
    MPI_Aint rcount;
    MPI_Datatype rdt;
    const void *cbuf; /* cas: compare value */
    int target;
    MPI_Aint disp;
    MPI_Aint tcount;
    MPI_Datatype tdt;
    MPI_Op op; /* acc kinds (put: MPI_REPLACE) */
} osc_args;
/* req != NULL: request-based form (MPI_Rput ...), *req set to a request that
 * completes at local completion (get kinds: when the data is in) */
int osc_rma(const char *fn, osc_win *w, const osc_args *a, MPI_Request *req);

/* ---- synchronisation (sync.c) ------------------------------------------------------------- */
int osc_fence(const char *fn, osc_win *w, int assert);
int osc_post(const char *fn, osc_win *w, mpii_group *g, int assert);
int osc_start(const char *fn, osc_win *w, mpii_group *g, int assert);
int osc_complete(const char *fn, osc_win *w);
int osc_wait(const char *fn, osc_win *w, int *flag); /* flag != NULL: MPI_Win_test */
int osc_lock(const char *fn, osc_win *w, int type, int rank, int assert);
int osc_unlock(const char *fn, osc_win *w, int rank);
int osc_lock_all(const char *fn, osc_win *w, int assert);
int osc_unlock_all(const char *fn, osc_win *w);
/* rank OSC_ALL: every target; local: only local completion */
#define OSC_ALL (-1000)
int osc_flush(const char *fn, osc_win *w, int rank, int local);
int osc_sync(const char *fn, osc_win *w);

#endif
