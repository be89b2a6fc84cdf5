#!/usr/bin/env python3
"""Generate the Fortran bindings of DCFA-MPI from the tables of the C API.

Inputs (the same as tools/gen_api.py)
  src/binding/api.txt     the C prototypes (parameter names carry the meaning
                          the Fortran side needs: see classify())
  src/include/dtypes.def  through include/mpi.h: every integer and handle
  include/mpi.h           constant (#define MPI_X value) becomes a Fortran one

Outputs (build time, into OUT)
  mpif.h       the include file: constants, sentinel COMMON blocks, EXTERNAL
               declarations of the functions (fixed and free source form)
  mpi.f90      module mpi: the same constants, explicit interfaces of every
               routine (choice buffers: TYPE(*), DIMENSION(*) without
               argument checks), MPI_SIZEOF
  mpi_f08.f90  module mpi_f08: handle types, MPI_Status, constants, generic
               interfaces (MPI_X and its large-count MPI_X_c form), PMPI_X
  f77.c        for every routine X of mpif.h / use mpi: mpi_x_ and pmpi_x_
               (gfortran's names and conventions: every argument by
               reference, CHARACTER lengths appended), calling MPI_X / PMPI_X.
               mpi_f08 routines without a choice buffer use these too (a
               TYPE(MPI_Comm) is one INTEGER, passed by reference).
  f08.c        for every routine with a choice buffer: MPI_X_f08ts and
               PMPI_X_f08ts, BIND(C) with ISO_Fortran_binding descriptors, so
               non-contiguous array sections arrive as what they are.

The C side of the routines that need more than argument conversion (spawn,
keyval creation with Fortran callbacks, generalized requests) is written by
hand in src/binding/fortran/fort_special.c; the helpers the generated code
calls are in src/binding/fortran/fort.h.

Usage
  tools/gen_fortran.py --out DIR
Plain python3, no third-party modules.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_api  # noqa: E402

ROOT = gen_api.ROOT
MPI_H = gen_api.MPI_H


class GenError(Exception):
    pass


# ---- which routines Fortran sees ------------------------------------------------

# C-only conversions and the tool interface (MPI_T has no Fortran binding).
def c_only(fn):
    s = fn.short
    return (s.startswith("T_") or s.endswith("_c2f") or s.endswith("_f2c") or
            s in ("Status_c2f", "Status_f2c", "Status_c2f08", "Status_f082c"))


F08_ONLY = {"Status_f2f08", "Status_f082f"}

# Routines whose C side is written by hand (src/binding/fortran/fort_special.c).
SPECIAL = {"Comm_spawn", "Comm_spawn_multiple", "Comm_create_keyval", "Type_create_keyval",
           "Win_create_keyval", "Keyval_create", "Grequest_start", "Register_datarep",
           "Register_datarep_c"}

LOGICAL_NAMES = {"flag", "commute", "reorder", "weighted", "periods", "remain_dims", "high"}

CHOICE_NAMES = {"buf", "sendbuf", "recvbuf", "inbuf", "outbuf", "inoutbuf", "buffer",
                "origin_addr", "result_addr", "compare_addr", "location", "base"}

HANDLE_TYPES = {"MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Op", "MPI_Request",
                "MPI_Errhandler", "MPI_Info", "MPI_Win", "MPI_File", "MPI_Message",
                "MPI_Session"}

BIG_KIND = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Count": "MPI_COUNT_KIND",
            "MPI_Offset": "MPI_OFFSET_KIND"}

# Output strings: the C buffer to give (the constants of mpi.h include the NUL).
STR_OUT_SIZE = {"comm_name": "MPI_MAX_OBJECT_NAME", "type_name": "MPI_MAX_OBJECT_NAME",
                "win_name": "MPI_MAX_OBJECT_NAME", "port_name": "MPI_MAX_PORT_NAME",
                "string": "MPI_MAX_ERROR_STRING", "name": "MPI_MAX_PROCESSOR_NAME",
                "version": "MPI_MAX_LIBRARY_VERSION_STRING", "key": "(MPI_MAX_INFO_KEY + 1)",
                "datarep": "MPI_MAX_DATAREP_STRING"}
# Input strings whose leading blanks go too (info keys and values, ports, services).
STR_TRIM_BOTH = {"key", "value", "port_name", "service_name"}

# Routines whose buffer only gives an address (kept by the library, or compared).
ADDR_ONLY = {"Get_address", "Address", "Free_mem", "Win_create", "Win_create_c", "Win_attach",
             "Win_detach", "Buffer_attach", "Buffer_attach_c", "Comm_attach_buffer",
             "Comm_attach_buffer_c", "Session_attach_buffer", "Session_attach_buffer_c"}

# Buffers that hold more than (count, datatype) (per-rank blocks of a collective).
MULTI_BUF = {("Gather", "recvbuf"), ("Scatter", "sendbuf"), ("Allgather", "recvbuf"),
             ("Alltoall", "sendbuf"), ("Alltoall", "recvbuf"),
             ("Neighbor_allgather", "recvbuf"), ("Neighbor_alltoall", "sendbuf"),
             ("Neighbor_alltoall", "recvbuf"), ("Reduce_scatter_block", "sendbuf"),
             ("Psend_init", "buf"), ("Precv_init", "buf")}

# count, datatype parameter names of a buffer, tried in order
TRIPLES = {"buf": [("count", "datatype")], "buffer": [("count", "datatype")],
           "sendbuf": [("sendcount", "sendtype"), ("count", "datatype")],
           "recvbuf": [("recvcount", "recvtype"), ("count", "datatype")],
           "origin_addr": [("origin_count", "origin_datatype")],
           "result_addr": [("result_count", "result_datatype")],
           "inbuf": [("incount", "datatype"), ("count", "datatype")],
           "outbuf": [("outcount", "datatype")],
           "inoutbuf": [("count", "datatype")]}

RMA_NONBLOCKING = {"Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op",
                   "Compare_and_swap"}


def base_name(short):
    s = short
    if s.endswith("_c"):
        s = s[:-2]
    if s.endswith("_init"):
        s = s[:-5]
    if s.startswith("I") and not s.startswith("Info") and not s.startswith("Intercomm"):
        s = s[1:]
    return s


class FArg:
    """One argument of the Fortran routine (kind decides everything else)."""

    def __init__(self, p, kind, **kw):
        self.p = p
        self.name = p.name if p is not None else "ierror"
        self.kind = kind
        self.intent = kw.get("intent", "in")
        self.handle = kw.get("handle")        # MPI_Comm ... for handle kinds
        self.bigkind = kw.get("bigkind")      # MPI_ADDRESS_KIND ... for big kinds
        self.size = kw.get("size")            # str_out buffer size, array length
        self.triple = kw.get("triple")        # (count param, datatype param) of a buffer
        self.bufclass = kw.get("bufclass")    # addr | simple | multi
        self.fnonblock = False                # set for the buffers of nonblocking routines


class FFunc:
    def __init__(self, fn, removed):
        self.fn = fn
        self.removed = removed
        self.args = []
        self.special = fn.short in SPECIAL
        self.in_f77 = not fn.short.endswith("_c") and fn.short not in F08_ONLY
        self.in_f08 = not removed
        self.has_choice = False
        self.has_proc = False
        self.nonblocking = False

    @property
    def fname(self):
        return self.fn.name


def is_nonblocking(fn):
    if any(p.type == "MPI_Request *" for p in fn.params):
        return True
    if fn.short.endswith("_begin"):
        return True
    return base_name(fn.short) in RMA_NONBLOCKING


def buffer_triple(fn, p):
    """(count parameter or None, datatype parameter) of choice buffer p, or None
    when the buffer is not one (count, datatype) (count arrays, bytes)."""
    names = [q.name for q in fn.params]
    for c, d in TRIPLES.get(p.name, []):
        if c in names and d in names:
            if fn.params[names.index(c)].type not in ("int", "MPI_Count"):
                return None           # a count array: v/w collectives
            return (c, d)
    if base_name(fn.short) in ("Fetch_and_op", "Compare_and_swap"):
        return (None, "datatype")
    return None


def classify(fn, removed):
    """The Fortran arguments of fn (ierror last, if it returns an error code)."""
    ff = FFunc(fn, removed)
    ff.nonblocking = is_nonblocking(fn)
    names = [p.name for p in fn.params]
    short = fn.short
    choice_params = [p for p in fn.params if p.type in ("void *", "const void *") and
                     p.name in CHOICE_NAMES]
    for p in fn.params:
        t, n = p.type, p.name
        a = None
        if t == "...":
            continue
        if short in ("Init", "Init_thread") and n in ("argc", "argv"):
            a = FArg(p, "omit", size="NULL")
        elif short == "Info_create_env" and n in ("argc", "argv"):
            a = FArg(p, "omit", size="0" if n == "argc" else "NULL")
        elif t in ("int", "const int"):
            a = FArg(p, "log_in" if n in LOGICAL_NAMES else "int_in")
        elif t == "int *" and n == "index" and "any" in short.lower():
            a = FArg(p, "index_out", intent="out")     # Waitany ...: 1-based in Fortran
        elif t == "int *":
            if n in LOGICAL_NAMES:
                a = FArg(p, "log_out", intent="out")
            else:
                inout = n in ("position", "pset_len", "buflen", "comm_keyval", "type_keyval",
                              "win_keyval", "keyval") and not short.endswith("create_keyval") \
                    and short != "Keyval_create"
                a = FArg(p, "int_out", intent="inout" if inout else "out")
        elif t in ("const int []", "int []"):
            if n in ("periods", "remain_dims"):
                if t == "int []":
                    a = FArg(p, "log_arr_out", intent="out", size="maxdims")
                else:
                    a = FArg(p, "log_arr_in")
            elif n in ("sourceweights", "destweights", "weights"):
                a = FArg(p, "weights" if t.startswith("const") else "int_arr",
                         intent="in" if t.startswith("const") else "out")
            elif n == "array_of_indices":
                a = FArg(p, "indices_out", intent="out")   # Waitsome ...: 1-based
            elif n == "array_of_errcodes":
                a = FArg(p, "errcodes", intent="out")
            else:
                a = FArg(p, "int_arr", intent="in" if t.startswith("const") else
                         ("inout" if n == "dims" else "out"))
        elif t == "int [][3]":
            a = FArg(p, "ranges")
        elif t in HANDLE_TYPES:
            a = FArg(p, "handle_in", handle=t)
        elif t.endswith(" *") and t[:-2] in HANDLE_TYPES:
            h = t[:-2]
            out = n.startswith("new") or n in ("comm_cart", "comm_graph", "comm_dist_graph",
                                               "intercomm", "errhandler", "group", "info_used",
                                               "hw_info", "parent", "pair_type", "session",
                                               "etype", "filetype") or \
                (n == "request" and short not in ("Wait", "Test", "Request_free", "Cancel",
                                                  "Start")) or \
                (n in ("info", "fh", "win", "datatype", "op", "comm", "message") and
                 not any(w in short for w in ("free", "Free", "close", "disconnect",
                                             "commit", "Mrecv", "Imrecv")))
            a = FArg(p, "handle_out", handle=h, intent="out" if out else "inout")
        elif t.rstrip(" []").replace("const ", "") in HANDLE_TYPES and t.endswith("[]"):
            h = t.replace("const ", "").rstrip(" []")
            a = FArg(p, "handle_arr", handle=h,
                     intent="in" if t.startswith("const") or short == "Type_get_contents" and False
                     else ("inout" if h == "MPI_Request" else "out"))
        elif t in BIG_KIND:
            if removed and t == "MPI_Aint":
                a = FArg(p, "aint_as_int_in")
            else:
                a = FArg(p, "big_in", bigkind=BIG_KIND[t])
        elif t.endswith(" *") and t[:-2] in BIG_KIND:
            if removed and t == "MPI_Aint *":
                a = FArg(p, "aint_as_int_out", intent="out")
            else:
                a = FArg(p, "big_out", bigkind=BIG_KIND[t[:-2]],
                         intent="inout" if n == "position" else "out")
        elif t.replace("const ", "").rstrip(" []") in BIG_KIND and t.endswith("[]"):
            bt = t.replace("const ", "").rstrip(" []")
            if removed and bt == "MPI_Aint":
                a = FArg(p, "aint_as_int_arr")
            else:
                a = FArg(p, "big_arr", bigkind=BIG_KIND[bt],
                         intent="in" if t.startswith("const") else "out")
        elif t in ("void *", "const void *"):
            if n in CHOICE_NAMES:
                ff.has_choice = True
                if short in ADDR_ONLY or short.endswith("_end"):
                    cls, triple = "addr", None
                else:
                    triple = buffer_triple(fn, p)
                    shared = triple is not None and triple[0] is not None and any(
                        buffer_triple(fn, q) == triple for q in choice_params if q is not p)
                    multi = (base_name(short), n) in MULTI_BUF
                    cls = "simple" if triple is not None and not multi and not shared else "multi"
                a = FArg(p, "choice", intent="in" if t.startswith("const") else "inout",
                         triple=triple, bufclass=cls)
            elif n == "attribute_val":
                if "get_attr" in short or short == "Attr_get":
                    a = FArg(p, "attr_out_int" if short == "Attr_get" else "attr_out",
                             intent="out")
                else:
                    a = FArg(p, "attr_in_int" if short == "Attr_put" else "attr_in")
            elif n == "extra_state":
                a = FArg(p, "extra_int" if short == "Keyval_create" else "extra")
            elif n == "baseptr":
                a = FArg(p, "ptr_out", intent="out")
            elif n == "buffer_addr":
                a = FArg(p, "detach_addr", intent="out")
            else:
                raise GenError("%s: no Fortran meaning for void * parameter '%s'" % (fn.name, n))
        elif t == "MPI_Status *":
            a = FArg(p, "status", intent="inout" if short.startswith("Status_") else "out")
        elif t == "const MPI_Status *":
            a = FArg(p, "status", intent="in")
        elif t == "MPI_Status []":
            cnt = "incount" if "incount" in names else "count"
            a = FArg(p, "statuses", intent="out", size=cnt)
        elif t in ("const MPI_Fint *", "MPI_Fint *") and n == "f_status":
            a = FArg(p, "status", intent="in" if t.startswith("const") else "out")
        elif t in ("const MPI_F08_status *", "MPI_F08_status *"):
            a = FArg(p, "status08", intent="in" if t.startswith("const") else "out")
        elif t in ("const char *", "const char []"):
            a = FArg(p, "str_in")
        elif t == "char *":
            if short == "Info_get" and n == "value":
                a = FArg(p, "str_out", intent="out", size="valuelen")
            elif short in ("Info_get_string", "Session_get_nth_pset"):
                a = FArg(p, "str_out", intent="out",
                         size="buflen" if short == "Info_get_string" else "pset_len")
            elif n in STR_OUT_SIZE:
                a = FArg(p, "str_out", intent="out", size=STR_OUT_SIZE[n])
            else:
                raise GenError("%s: no size for output string '%s'" % (fn.name, n))
        elif t in ("char * []", "char ** []"):
            a = FArg(p, "str_arr")
        elif t.endswith("_function *") or t.endswith("_function_c *"):
            ff.has_proc = True
            a = FArg(p, "proc", handle=t[:-2])
        else:
            raise GenError("%s: no Fortran meaning for parameter '%s %s'" % (fn.name, t, n))
        ff.args.append(a)
    if fn.ret == "int":
        ff.args.append(FArg(None, "ierror", intent="out"))
    elif fn.ret not in ("double", "MPI_Aint"):
        raise GenError("%s: return type %s" % (fn.name, fn.ret))
    return ff


def read_funcs():
    funcs = gen_api.read_api()
    removed_from = None
    with open(gen_api.API_TXT) as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("## Removed"):
                removed_from = lineno
    out = []
    for fn in funcs:
        if c_only(fn):
            continue
        out.append(classify(fn, removed_from is not None and fn.lineno > removed_from))
    return out


# ---- constants ------------------------------------------------------------------

def read_constants():
    """[(name, value, handle type or None)] of the integer and handle #defines of mpi.h."""
    with open(MPI_H) as f:
        text = f.read()
    consts = []
    seen = {}
    for m in re.finditer(r"^#define\s+(MPI_\w+)\s+(.+?)\s*(?:/\*.*)?$", text, re.M):
        name, val = m.group(1), m.group(2).strip()
        if name.startswith("MPI_T_") or name.startswith("MPI_F_"):
            continue
        mv = re.match(r"^\(?\s*(-?\d+)\s*\)?$", val)
        mh = re.match(r"^\(\((MPI_\w+)\)(0x[0-9a-fA-F]+)\)$", val)
        mx = re.match(r"^(0x[0-9a-fA-F]+)$", val)
        if mv:
            consts.append((name, int(mv.group(1)), None))
        elif mx:
            consts.append((name, int(mx.group(1), 16), None))
        elif mh:
            consts.append((name, int(mh.group(2), 16), mh.group(1)))
        elif re.match(r"^MPI_\w+$", val) and val in seen:
            consts.append((name, seen[val][1], seen[val][2]))
        else:
            continue
        seen[name] = consts[-1]
    lower = {}
    for c in consts:
        if c[0].lower() in lower:
            raise GenError("mpi.h: %s and %s are one name in Fortran" % (c[0], lower[c[0].lower()]))
        lower[c[0].lower()] = c[0]
    return consts


def c_int_const(name):
    with open(MPI_H) as f:
        m = re.search(r"^#define\s+%s\s+\(?(-?\d+)\)?" % name, f.read(), re.M)
    if not m:
        raise GenError("mpi.h: no #define %s" % name)
    return int(m.group(1))


# Sentinels: COMMON blocks whose storage the library defines (fort_sentinel.c);
# (Fortran name, type, dimensions, common block)
SENTINELS = [
    ("MPI_BOTTOM", "INTEGER", "", "dcfa_f_bottom"),
    ("MPI_IN_PLACE", "INTEGER", "", "dcfa_f_in_place"),
    ("MPI_BUFFER_AUTOMATIC", "INTEGER", "", "dcfa_f_buffer_automatic"),
    ("MPI_STATUS_IGNORE", "INTEGER", "(MPI_STATUS_SIZE)", "dcfa_f_status_ignore"),
    ("MPI_STATUSES_IGNORE", "INTEGER", "(MPI_STATUS_SIZE,1)", "dcfa_f_statuses_ignore"),
    ("MPI_ERRCODES_IGNORE", "INTEGER", "(1)", "dcfa_f_errcodes_ignore"),
    ("MPI_UNWEIGHTED", "INTEGER", "(1)", "dcfa_f_unweighted"),
    ("MPI_WEIGHTS_EMPTY", "INTEGER", "(1)", "dcfa_f_weights_empty"),
    ("MPI_ARGV_NULL", "CHARACTER*1", "(1)", "dcfa_f_argv_null"),
    ("MPI_ARGVS_NULL", "CHARACTER*1", "(1,1)", "dcfa_f_argvs_null"),
]

# The predefined callbacks (Fortran-callable, fort_special.c), with the
# abstract interface of mpi_f08 they satisfy.
PREDEF_PROCS = [
    ("MPI_COMM_NULL_COPY_FN", "MPI_Comm_copy_attr_function"),
    ("MPI_COMM_DUP_FN", "MPI_Comm_copy_attr_function"),
    ("MPI_COMM_NULL_DELETE_FN", "MPI_Comm_delete_attr_function"),
    ("MPI_TYPE_NULL_COPY_FN", "MPI_Type_copy_attr_function"),
    ("MPI_TYPE_DUP_FN", "MPI_Type_copy_attr_function"),
    ("MPI_TYPE_NULL_DELETE_FN", "MPI_Type_delete_attr_function"),
    ("MPI_WIN_NULL_COPY_FN", "MPI_Win_copy_attr_function"),
    ("MPI_WIN_DUP_FN", "MPI_Win_copy_attr_function"),
    ("MPI_WIN_NULL_DELETE_FN", "MPI_Win_delete_attr_function"),
    ("MPI_NULL_COPY_FN", "MPI_Copy_function"),
    ("MPI_DUP_FN", "MPI_Copy_function"),
    ("MPI_NULL_DELETE_FN", "MPI_Delete_function"),
    ("MPI_CONVERSION_FN_NULL", "MPI_Datarep_conversion_function"),
    ("MPI_CONVERSION_FN_NULL_C", "MPI_Datarep_conversion_function_c"),
]


# constants of mpi.h that Fortran declares with another kind than INTEGER
CONST_KIND = {"MPI_DISPLACEMENT_CURRENT": "MPI_OFFSET_KIND"}


def fortran_specials():
    """Constants only Fortran has: (name, Fortran type, value)."""
    ssize = c_int_const("MPI_F_STATUS_SIZE")
    return [
        # the combiners of the MPI-1 Fortran MPI_TYPE_HVECTOR ... with INTEGER
        # displacements (never returned: those calls make the MPI_Aint forms)
        ("MPI_COMBINER_HVECTOR_INTEGER", "INTEGER", 101),
        ("MPI_COMBINER_HINDEXED_INTEGER", "INTEGER", 102),
        ("MPI_COMBINER_STRUCT_INTEGER", "INTEGER", 103),
        ("MPI_ADDRESS_KIND", "INTEGER", 8),
        ("MPI_OFFSET_KIND", "INTEGER", 8),
        ("MPI_COUNT_KIND", "INTEGER", 8),
        ("MPI_INTEGER_KIND", "INTEGER", 4),
        ("MPI_STATUS_SIZE", "INTEGER", ssize),
        ("MPI_SOURCE", "INTEGER", c_int_const("MPI_F_SOURCE") + 1),
        ("MPI_TAG", "INTEGER", c_int_const("MPI_F_TAG") + 1),
        ("MPI_ERROR", "INTEGER", c_int_const("MPI_F_ERROR") + 1),
    ]


# ---- Fortran text -----------------------------------------------------------------

def f77_decl(a, f08=False, choice_rank="(*)"):
    """Declaration lines (without the leading indent) of one argument."""
    k, n = a.kind, a.name
    intent = ", INTENT(%s)" % a.intent.upper()
    hdl = (lambda: "TYPE(%s)" % a.handle) if f08 else (lambda: "INTEGER")
    if k in ("int_in", "int_out", "aint_as_int_in", "aint_as_int_out", "attr_in_int",
             "attr_out_int", "extra_int"):
        return ["INTEGER%s :: %s" % (intent, n)]
    if k in ("log_in", "log_out"):
        return ["LOGICAL%s :: %s" % (intent, n)]
    if k == "index_out":
        return ["INTEGER%s :: %s" % (intent, n)]
    if k in ("int_arr", "weights", "errcodes", "aint_as_int_arr", "indices_out"):
        return ["INTEGER%s :: %s(*)" % (intent, n)]
    if k in ("log_arr_in", "log_arr_out"):
        return ["LOGICAL%s :: %s(*)" % (intent, n)]
    if k == "ranges":
        return ["INTEGER, INTENT(IN) :: %s(3,*)" % n]
    if k == "handle_in" or k == "handle_out":
        return ["%s%s :: %s" % (hdl(), intent, n)]
    if k == "handle_arr":
        return ["%s%s :: %s(*)" % (hdl(), intent, n)]
    if k in ("big_in", "big_out"):
        return ["INTEGER(KIND=%s)%s :: %s" % (a.bigkind, intent, n)]
    if k == "big_arr":
        return ["INTEGER(KIND=%s)%s :: %s(*)" % (a.bigkind, intent, n)]
    if k in ("attr_in", "attr_out", "extra"):
        return ["INTEGER(KIND=MPI_ADDRESS_KIND)%s :: %s" % (intent, n)]
    if k == "choice":
        if f08:
            asy = ", ASYNCHRONOUS" if a.fnonblock else ""
            it = ", INTENT(IN)" if a.intent == "in" else ""
            return ["TYPE(*), DIMENSION(..)%s%s :: %s" % (it, asy, n)]
        it = ", INTENT(IN)" if a.intent == "in" else ""
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n,
                "TYPE(*), DIMENSION(*)%s :: %s" % (it, n)]
    if k == "ptr_out":
        if f08:
            return ["TYPE(C_PTR), INTENT(OUT) :: %s" % n]
        return ["INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(OUT) :: %s" % n]
    if k == "detach_addr":
        if f08:
            return ["TYPE(C_PTR), INTENT(OUT) :: %s" % n]
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n, "TYPE(*), DIMENSION(*) :: %s" % n]
    if k == "status":
        if f08:
            return ["TYPE(MPI_Status)%s :: %s" % (intent, n)]
        return ["INTEGER%s :: %s(MPI_STATUS_SIZE)" % (intent, n)]
    if k == "status08":
        return ["TYPE(MPI_Status)%s :: %s" % (intent, n)]
    if k == "statuses":
        if f08:
            return ["TYPE(MPI_Status)%s :: %s(*)" % (intent, n)]
        return ["INTEGER%s :: %s(MPI_STATUS_SIZE,*)" % (intent, n)]
    if k in ("str_in", "str_out"):
        return ["CHARACTER(LEN=*)%s :: %s" % (intent, n)]
    if k == "str_arr":
        dims = "(count,*)" if n == "array_of_argv" else "(*)"
        return ["CHARACTER(LEN=*), INTENT(IN) :: %s%s" % (n, dims)]
    if k == "proc":
        if f08:
            return ["PROCEDURE(%s) :: %s" % (a.handle, n)]
        return ["EXTERNAL :: %s" % n]
    if k == "ierror":
        if f08:
            return ["INTEGER, OPTIONAL, INTENT(OUT) :: ierror"]
        return ["INTEGER, INTENT(OUT) :: ierror"]
    raise GenError("no Fortran declaration for kind %s" % k)


def fargs(ff):
    return [a for a in ff.args if a.kind != "omit"]


def wrap_f90(line, indent):
    """Free-form continuation lines of at most 100 characters."""
    out = []
    cur = indent + line
    while len(cur) > 100:
        cut = cur.rfind(",", 0, 98)
        if cut <= len(indent) + 4:
            break
        out.append(cur[:cut + 1] + " &")
        cur = indent + "    " + cur[cut + 1:].lstrip()
    out.append(cur)
    return out


def wrap_all(lines):
    """The module text, lines longer than 100 characters continued."""
    out = []
    for l in "\n".join(lines).split("\n"):
        if len(l) <= 100 or l.lstrip().startswith("!"):
            out.append(l)
        else:
            ind = l[:len(l) - len(l.lstrip())]
            out += wrap_f90(l.lstrip(), ind)
    return "\n".join(out) + "\n"


def interface_body(ff, name, f08, bind=None, indent="    "):
    """One interface body (subroutine or function) for module mpi or mpi_f08."""
    args = fargs(ff)
    ret = ff.fn.ret
    names = [a.name for a in args]
    lines = []
    head = "%s(%s)" % (name, ", ".join(names))
    suffix = ' BIND(C, NAME="%s")' % bind if bind else ""
    if ret == "int":
        lines += wrap_f90("SUBROUTINE " + head + suffix, indent)
    else:
        lines += wrap_f90("FUNCTION " + head + " RESULT(res)" + suffix, indent)
    lines.append(indent + "  IMPORT")
    lines.append(indent + "  IMPLICIT NONE")
    for a in args:
        a.fnonblock = ff.nonblocking
        decls = f77_decl(a, f08)
        if not f08 and ff.has_choice and a.kind in ("int_arr", "big_arr", "handle_arr",
                                                     "handle_in"):
            # with MPI_IN_PLACE programs pass a scalar (0, MPI_DATATYPE_NULL) for
            # the count and type arrays they do not use, and an array of types
            # for one type, which MPICH's module (no interfaces for these
            # routines) lets through (its f90/coll/vw_inplacef90, split_typef90)
            decls = ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % a.name] + decls
        for d in decls:
            if d.startswith("!GCC$"):
                lines.append(d)
            else:
                lines.extend(wrap_f90(d, indent + "  "))
    if ret == "double":
        lines.append(indent + "  DOUBLE PRECISION :: res")
    elif ret == "MPI_Aint":
        lines.append(indent + "  INTEGER(KIND=MPI_ADDRESS_KIND) :: res")
    lines.append(indent + ("END SUBROUTINE" if ret == "int" else "END FUNCTION"))
    return lines


def f77_constant_lines(consts, fixed):
    """Declarations of the constants (fixed: mpif.h, columns 7-72)."""
    out = []
    ind = "      " if fixed else "  "
    for name, ftype, val in fortran_specials():
        out.append("%sINTEGER %s" % (ind, name))
        out.append("%sPARAMETER (%s=%d)" % (ind, name, val))
    for name, val, _ in consts:
        kind = "(KIND=%s)" % CONST_KIND[name] if name in CONST_KIND else ""
        out.append("%sINTEGER%s %s" % (ind, kind, name))
        out.append("%sPARAMETER (%s=%d)" % (ind, name, val))
    for name, val in (("MPI_SUBARRAYS_SUPPORTED", ".FALSE."),
                      ("MPI_ASYNC_PROTECTS_NONBLOCKING", ".FALSE.")):
        out.append("%sLOGICAL %s" % (ind, name))
        out.append("%sPARAMETER (%s=%s)" % (ind, name, val))
    for name, ftype, dims, blk in SENTINELS:
        out.append("%s%s %s%s" % (ind, ftype, name, dims))
        out.append("%sCOMMON /%s/ %s" % (ind, blk, name))
    for l in out:
        if fixed and len(l) > 72:
            raise GenError("mpif.h line longer than 72 columns: %s" % l)
    return out


def gen_mpif_h(funcs, consts):
    out = ["! mpif.h of DCFA-MPI, generated by tools/gen_fortran.py from include/mpi.h",
           "! and src/binding/api.txt. Fixed and free source form alike.",
           "!"]
    out += f77_constant_lines(consts, True)
    externals = []
    for ff in funcs:
        if not ff.in_f77:
            continue
        up = ff.fname.upper()
        if ff.fn.ret == "double":
            out.append("      DOUBLE PRECISION %s, P%s" % (up, up))
        else:
            # MPI_AINT_ADD / MPI_AINT_DIFF: programs declare them themselves
            # (INTEGER(KIND=MPI_ADDRESS_KIND), EXTERNAL), which a declaration
            # here would make an error
            continue
        externals.append(up)
        externals.append("P" + up)
    for name, _ in PREDEF_PROCS:
        externals.append(name)
    for e in externals:
        out.append("      EXTERNAL %s" % e)
    return "\n".join(out) + "\n"


def gen_mpi_module(funcs, consts):
    out = ["! module mpi of DCFA-MPI, generated by tools/gen_fortran.py.",
           "MODULE mpi",
           "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR",
           "  IMPLICIT NONE",
           "  PRIVATE :: C_PTR"]
    out += f77_constant_lines(consts, False)
    out.append("  EXTERNAL :: " + ", ".join(n for n, _ in PREDEF_PROCS))
    out.append("")
    dual = {"Alloc_mem", "Win_allocate", "Win_allocate_shared", "Win_shared_query"}
    generic = []
    out.append("  INTERFACE")
    for prof in ("", "P"):
        for ff in funcs:
            if not ff.in_f77 or ff.fn.short in dual:
                continue
            out += interface_body(ff, prof + ff.fname, False)
    out.append("  END INTERFACE")
    # routines that take INTEGER(KIND=MPI_ADDRESS_KIND) or TYPE(C_PTR) for baseptr
    for prof in ("", "P"):
        for ff in funcs:
            if ff.fn.short not in dual:
                continue
            nm = prof + ff.fname
            out.append("  INTERFACE %s" % nm)
            out += interface_body(ff, nm, False)
            for a in ff.args:
                if a.kind == "ptr_out":
                    a.kind = "ptr_out_cptr"
            body = interface_body_cptr(ff, nm + "_cptr", nm.lower() + "_")
            for a in ff.args:
                if a.kind == "ptr_out_cptr":
                    a.kind = "ptr_out"
            out += body
            out.append("  END INTERFACE")
            generic.append(nm)
    out += sizeof_generic(False)
    out.append("CONTAINS")
    out += sizeof_bodies()
    out.append("END MODULE mpi")
    return wrap_all(out)


def interface_body_cptr(ff, name, bind):
    """The TYPE(C_PTR) form of a baseptr routine of module mpi (same C entry)."""
    args = fargs(ff)
    lines = wrap_f90("SUBROUTINE %s(%s) BIND(C, NAME=\"%s\")" %
                     (name, ", ".join(a.name for a in args), bind), "    ")
    lines += ["      IMPORT", "      IMPLICIT NONE"]
    for a in args:
        if a.kind == "ptr_out_cptr":
            lines.append("      TYPE(C_PTR), INTENT(OUT) :: %s" % a.name)
        else:
            for d in f77_decl(a, False):
                lines.append("      " + d)
    lines.append("    END SUBROUTINE")
    return lines


SIZEOF_TYPES = [("INTEGER(KIND=1)", "i1"), ("INTEGER(KIND=2)", "i2"), ("INTEGER(KIND=4)", "i4"),
                ("INTEGER(KIND=8)", "i8"), ("REAL(KIND=4)", "r4"), ("REAL(KIND=8)", "r8"),
                ("REAL(KIND=10)", "r10"), ("REAL(KIND=16)", "r16"), ("COMPLEX(KIND=4)", "c4"),
                ("COMPLEX(KIND=8)", "c8"), ("COMPLEX(KIND=10)", "c10"),
                ("COMPLEX(KIND=16)", "c16"), ("LOGICAL(KIND=1)", "l1"),
                ("LOGICAL(KIND=2)", "l2"), ("LOGICAL(KIND=4)", "l4"), ("LOGICAL(KIND=8)", "l8"),
                ("CHARACTER(LEN=*)", "ch")]


def sizeof_generic(f08):
    out = ["  INTERFACE MPI_SIZEOF"]
    out.append("    MODULE PROCEDURE " + ", ".join("dcfa_sizeof_" + s for _, s in SIZEOF_TYPES))
    out.append("  END INTERFACE")
    out.append("  INTERFACE PMPI_SIZEOF")
    out.append("    MODULE PROCEDURE " + ", ".join("dcfa_sizeof_" + s for _, s in SIZEOF_TYPES))
    out.append("  END INTERFACE")
    out.append("  PRIVATE :: " + ", ".join("dcfa_sizeof_" + s for _, s in SIZEOF_TYPES))
    return out


def sizeof_bodies(f08=False):
    out = []
    opt = ", OPTIONAL" if f08 else ""
    for t, s in SIZEOF_TYPES:
        out.append("  SUBROUTINE dcfa_sizeof_%s(x, size, ierror)" % s)
        out.append("    %s, DIMENSION(..) :: x" % t)
        out.append("    INTEGER, INTENT(OUT) :: size")
        out.append("    INTEGER%s, INTENT(OUT) :: ierror" % opt)
        if s == "ch":
            out.append("    size = LEN(x)")
        else:
            out.append("    size = INT(STORAGE_SIZE(x) / 8)")
        if f08:
            out.append("    IF (PRESENT(ierror)) ierror = 0")
        else:
            out.append("    ierror = 0")
        out.append("  END SUBROUTINE")
    return out


F08_ABSTRACT = """
  ABSTRACT INTERFACE
    SUBROUTINE MPI_User_function(invec, inoutvec, len, datatype)
      IMPORT
      TYPE(C_PTR), VALUE :: invec, inoutvec
      INTEGER :: len
      TYPE(MPI_Datatype) :: datatype
    END SUBROUTINE
    SUBROUTINE MPI_User_function_c(invec, inoutvec, len, datatype)
      IMPORT
      TYPE(C_PTR), VALUE :: invec, inoutvec
      INTEGER(KIND=MPI_COUNT_KIND) :: len
      TYPE(MPI_Datatype) :: datatype
    END SUBROUTINE
%(attr)s    SUBROUTINE MPI_Copy_function(oldcomm, keyval, extra_state, attribute_val_in, &
        attribute_val_out, flag, ierror)
      IMPORT
      INTEGER :: oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, ierror
      LOGICAL :: flag
    END SUBROUTINE
    SUBROUTINE MPI_Delete_function(comm, keyval, attribute_val, extra_state, ierror)
      IMPORT
      INTEGER :: comm, keyval, attribute_val, extra_state, ierror
    END SUBROUTINE
%(errh)s    SUBROUTINE MPI_Grequest_query_function(extra_state, status, ierror)
      IMPORT
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      TYPE(MPI_Status) :: status
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_Grequest_free_function(extra_state, ierror)
      IMPORT
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_Grequest_cancel_function(extra_state, complete, ierror)
      IMPORT
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      LOGICAL :: complete
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_Datarep_extent_function(datatype, extent, extra_state, ierror)
      IMPORT
      TYPE(MPI_Datatype) :: datatype
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extent, extra_state
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_Datarep_conversion_function(userbuf, datatype, count, filebuf, &
        position, extra_state, ierror)
      IMPORT
      TYPE(C_PTR), VALUE :: userbuf, filebuf
      TYPE(MPI_Datatype) :: datatype
      INTEGER :: count, ierror
      INTEGER(KIND=MPI_OFFSET_KIND) :: position
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
    END SUBROUTINE
    SUBROUTINE MPI_Datarep_conversion_function_c(userbuf, datatype, count, filebuf, &
        position, extra_state, ierror)
      IMPORT
      TYPE(C_PTR), VALUE :: userbuf, filebuf
      TYPE(MPI_Datatype) :: datatype
      INTEGER(KIND=MPI_COUNT_KIND) :: count
      INTEGER(KIND=MPI_OFFSET_KIND) :: position
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      INTEGER :: ierror
    END SUBROUTINE
  END INTERFACE
"""

# the callbacks of one shape per object kind: (interface prefix, handle type, argument name)
ATTR_KINDS = [("Comm", "MPI_Comm", "comm"), ("Win", "MPI_Win", "win"),
              ("Type", "MPI_Datatype", "type")]
ERRH_KINDS = [("Comm", "MPI_Comm", "comm"), ("Win", "MPI_Win", "win"),
              ("File", "MPI_File", "file"), ("Session", "MPI_Session", "session")]


def f08_abstract():
    attr = []
    for pre, h, n in ATTR_KINDS:
        obj = "datatype" if n == "type" else n
        attr += ["    SUBROUTINE MPI_%s_copy_attr_function(old%s, %s_keyval, extra_state, &" % (pre, n, n),
                 "        attribute_val_in, attribute_val_out, flag, ierror)",
                 "      IMPORT",
                 "      TYPE(%s) :: old%s" % (h, n),
                 "      INTEGER :: %s_keyval, ierror" % n,
                 "      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
                 "      LOGICAL :: flag",
                 "    END SUBROUTINE",
                 "    SUBROUTINE MPI_%s_delete_attr_function(%s, %s_keyval, attribute_val, &" % (pre, obj, n),
                 "        extra_state, ierror)",
                 "      IMPORT",
                 "      TYPE(%s) :: %s" % (h, obj),
                 "      INTEGER :: %s_keyval, ierror" % n,
                 "      INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val, extra_state",
                 "    END SUBROUTINE"]
    errh = []
    for pre, h, n in ERRH_KINDS:
        errh += ["    SUBROUTINE MPI_%s_errhandler_function(%s, error_code)" % (pre, n),
                 "      IMPORT",
                 "      TYPE(%s) :: %s" % (h, n),
                 "      INTEGER :: error_code",
                 "    END SUBROUTINE"]
    return F08_ABSTRACT % {"attr": "\n".join(attr) + "\n", "errh": "\n".join(errh) + "\n"}


F08_HANDLES = ["MPI_Comm", "MPI_Datatype", "MPI_Errhandler", "MPI_File", "MPI_Group", "MPI_Info",
               "MPI_Message", "MPI_Op", "MPI_Request", "MPI_Session", "MPI_Win"]


def f08_signature(ff):
    """What generic resolution sees: (type, kind, rank) of each non-optional argument."""
    sig = []
    for a in fargs(ff):
        if a.kind == "ierror":
            continue
        d = f77_decl(a, True)[-1]
        d = re.sub(r", INTENT\(\w+\)|, ASYNCHRONOUS", "", d)
        t = d.split("::")[0].strip()
        t = t.replace("MPI_ADDRESS_KIND", "8").replace("MPI_COUNT_KIND", "8") \
             .replace("MPI_OFFSET_KIND", "8")
        if t.startswith("PROCEDURE"):
            t = "PROCEDURE"
        rank = "(*)" in d or "(count,*)" in d or "(3,*)" in d
        sig.append((t, rank))
    return tuple(sig)


def f08_specific(ff, prof):
    """(Fortran name, binding label or None) of the mpi_f08 specific of ff."""
    if ff.has_choice:
        nm = prof + ff.fname + "_f08ts"
        if ff.fname.endswith("_c"):
            nm = prof + ff.fname[:-2] + "_c_f08ts"
        return nm, nm
    # no choice buffer: the routine of mpif.h (mpi_x_ / pmpi_x_), named as it
    return prof + ff.fname, None


def gen_f08_module(funcs, consts):
    out = ["! module mpi_f08 of DCFA-MPI, generated by tools/gen_fortran.py.",
           "MODULE mpi_f08",
           "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR, C_INT, C_LONG_LONG",
           "  IMPLICIT NONE",
           "  PRIVATE :: C_INT, C_LONG_LONG"]
    for h in F08_HANDLES:
        out += ["  TYPE, BIND(C) :: %s" % h, "    INTEGER :: MPI_VAL", "  END TYPE"]
    out += ["  ! the bytes of the C MPI_Status (include/mpi.h)",
            "  TYPE, BIND(C) :: MPI_Status",
            "    INTEGER(C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "    INTEGER(C_INT) :: dcfa_cancelled",
            "    INTEGER(C_LONG_LONG) :: dcfa_count",
            "  END TYPE"]
    for name, ftype, val in fortran_specials():
        if name in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            continue
        out.append("  INTEGER, PARAMETER :: %s = %d" % (name, val))
    for name, val, h in consts:
        if h is not None and h in F08_HANDLES:
            out.append("  TYPE(%s), PARAMETER :: %s = %s(%d)" % (h, name, h, val))
        else:
            kind = "(KIND=%s)" % CONST_KIND[name] if name in CONST_KIND else ""
            out.append("  INTEGER%s, PARAMETER :: %s = %d" % (kind, name, val))
    out.append("  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .TRUE.")
    out.append("  LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .TRUE.")
    for name, ftype, dims, blk in SENTINELS:
        if name == "MPI_STATUS_IGNORE":
            out.append("  TYPE(MPI_Status) :: MPI_STATUS_IGNORE")
        elif name == "MPI_STATUSES_IGNORE":
            out.append("  TYPE(MPI_Status) :: MPI_STATUSES_IGNORE(1)")
        else:
            out.append("  %s :: %s%s" % (ftype, name, dims))
        out.append("  COMMON /%s/ %s" % (blk, name))
    out.append(f08_abstract())
    for name, iface in PREDEF_PROCS:
        out.append("  PROCEDURE(%s) :: %s" % (iface, name))
    # handle comparison
    out.append("  INTERFACE OPERATOR(==)")
    out.append("    MODULE PROCEDURE " + ", ".join("dcfa_eq_" + h[4:].lower() for h in F08_HANDLES))
    out.append("  END INTERFACE")
    out.append("  INTERFACE OPERATOR(/=)")
    out.append("    MODULE PROCEDURE " + ", ".join("dcfa_ne_" + h[4:].lower() for h in F08_HANDLES))
    out.append("  END INTERFACE")
    out.append("  PRIVATE :: " + ", ".join("dcfa_eq_" + h[4:].lower() for h in F08_HANDLES))
    out.append("  PRIVATE :: " + ", ".join("dcfa_ne_" + h[4:].lower() for h in F08_HANDLES))
    # generics: MPI_X holds MPI_X and, when they can be told apart, MPI_X_c
    by_name = {ff.fname: ff for ff in funcs if ff.in_f08}
    for prof in ("", "P"):
        for ff in funcs:
            if not ff.in_f08:
                continue
            if ff.fname.endswith("_c") and ff.fname[:-2] in by_name:
                small = by_name[ff.fname[:-2]]
                if f08_signature(small) != f08_signature(ff):
                    continue          # in the generic of the int form
            gname = prof + ff.fname
            members = [ff]
            big = by_name.get(ff.fname + "_c")
            if big is not None and f08_signature(big) != f08_signature(ff):
                members.append(big)
            out.append("  INTERFACE %s" % gname)
            for m in members:
                sname, label = f08_specific(m, prof)
                out += interface_body(m, sname, True, bind=label)
            out.append("  END INTERFACE")
    out.append("  INTERFACE MPI_F_SYNC_REG")
    out.append("    MODULE PROCEDURE dcfa_f_sync_reg")
    out.append("  END INTERFACE")
    out.append("  PRIVATE :: dcfa_f_sync_reg")
    out += sizeof_generic(True)
    out.append("CONTAINS")
    for h in F08_HANDLES:
        s = h[4:].lower()
        for op, fn in (("==", "eq"), ("/=", "ne")):
            out += ["  ELEMENTAL LOGICAL FUNCTION dcfa_%s_%s(a, b)" % (fn, s),
                    "    TYPE(%s), INTENT(IN) :: a, b" % h,
                    "    dcfa_%s_%s = a%%MPI_VAL %s b%%MPI_VAL" % (fn, s, op),
                    "  END FUNCTION"]
    out += ["  SUBROUTINE dcfa_f_sync_reg(buf)",
            "    TYPE(*), DIMENSION(..), ASYNCHRONOUS :: buf",
            "    INTERFACE",
            "      SUBROUTINE dcfa_f_sync_reg_c(b) BIND(C, NAME=\"dcfa_f_sync_reg\")",
            "        TYPE(*), DIMENSION(..), ASYNCHRONOUS :: b",
            "      END SUBROUTINE",
            "    END INTERFACE",
            "    CALL dcfa_f_sync_reg_c(buf)",
            "  END SUBROUTINE"]
    out += sizeof_bodies(True)
    out.append("END MODULE mpi_f08")
    return wrap_all(out)


# ---- C glue -------------------------------------------------------------------------

class Glue:
    """The pieces of one C entry point: parameters, code before and after the
    call, the call's arguments, the hidden CHARACTER lengths."""

    def __init__(self):
        self.params = []
        self.lens = []
        self.decl = []
        self.pre = []
        self.post = []
        self.cargs = []
        self.cleanup = []
        self.fail_label = False
        self.fix = {}
        self.choices = []       # f08: the choice buffers
        self.choice_decl = []

    def string_param(self, n, f08, ctype):
        """A CHARACTER argument: a descriptor (BIND(C)) or a pointer and a hidden
        length; returns the C expressions "address, length" of its text."""
        if f08:
            self.params.append("CFI_cdesc_t *%s" % n)
            return "(%s *)%s->base_addr, %s->elem_len" % (ctype, n, n)
        self.params.append("%s *%s" % (ctype, n))
        self.lens.append("size_t %s_len" % n)
        return "%s, %s_len" % (n, n)

    def nomem_if(self, cond):
        """After a pre step that allocates: no memory ends the call."""
        self.pre += ["    if (%s) {" % cond, "        rc = MPI_ERR_NO_MEM;", "        goto done;",
                     "    }"]
        self.fail_label = True


def glue_arg(g, a, ff, f08, fn_name_c):
    """Adds to g what argument a needs (f08: the BIND(C) form with descriptors)."""
    k, n = a.kind, a.name
    ctype = a.p.type if a.p is not None else None
    if k == "omit":
        g.cargs.append(a.size)
        return
    if k in ("int_in", "log_in"):
        g.params.append("const MPI_Fint *%s" % n)
        g.cargs.append("*%s" % n if k == "int_in" else "(*%s != 0)" % n)
    elif k == "handle_in":
        g.params.append("const MPI_Fint *%s" % n)
        g.cargs.append("*%s" % n)
    elif k in ("int_out", "handle_out"):
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append(n)
    elif k == "index_out":
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append(n)
        g.post.append("    if (rc == MPI_SUCCESS && *%s >= 0)" % n)
        g.post.append("        (*%s)++;" % n)
    elif k == "indices_out":
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append(n)
        g.post.append("    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)")
        g.post.append("        fort_indices(%s, *outcount);" % n)
    elif k == "log_out":
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append(n)
        g.post.append("    *%s = (*%s != 0);" % (n, n))
    elif k in ("int_arr", "errcodes", "handle_arr"):
        g.params.append("MPI_Fint *%s" % n)
        if k == "errcodes":
            g.cargs.append("fort_errcodes(%s)" % n)
        else:
            g.cargs.append(n)
    elif k == "weights":
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append("fort_weights(%s)" % n)
    elif k == "log_arr_in":
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append(n)
    elif k == "log_arr_out":
        g.params.append("MPI_Fint *%s" % n)
        g.cargs.append(n)
        g.post.append("    if (rc == MPI_SUCCESS)")
        g.post.append("        fort_logicals(%s, *%s);" % (n, a.size))
    elif k == "ranges":
        g.params.append("MPI_Fint (*%s)[3]" % n)
        g.cargs.append(n)
    elif k in ("big_in",):
        g.params.append("const %s *%s" % (ctype, n))
        g.cargs.append("*%s" % n)
    elif k in ("big_out", "big_arr"):
        bt = ctype.replace("const ", "").rstrip(" []*")
        g.params.append("%s *%s" % (bt, n))
        g.cargs.append(n)
    elif k == "aint_as_int_in":
        g.params.append("const MPI_Fint *%s" % n)
        g.cargs.append("(MPI_Aint)*%s" % n)
    elif k == "aint_as_int_out":
        g.params.append("MPI_Fint *%s" % n)
        g.decl.append("    MPI_Aint a_%s = 0;" % n)
        g.cargs.append("&a_%s" % n)
        g.post.append("    if (rc == MPI_SUCCESS)")
        g.post.append("        *%s = (MPI_Fint)a_%s;" % (n, n))
    elif k == "aint_as_int_arr":
        cnt = "count"
        g.params.append("MPI_Fint *%s" % n)
        g.decl.append("    MPI_Aint *a_%s = NULL;" % n)
        g.pre.append("    a_%s = fort_aints(%s, *%s);" % (n, n, cnt))
        g.nomem_if("a_%s == NULL && *%s > 0" % (n, cnt))
        g.cargs.append("a_%s" % n)
        g.cleanup.append("    free(a_%s);" % n)
    elif k == "attr_in":
        g.params.append("const MPI_Aint *%s" % n)
        g.cargs.append("(void *)*%s" % n)
    elif k == "attr_in_int":
        g.params.append("const MPI_Fint *%s" % n)
        g.cargs.append("(void *)(MPI_Aint)*%s" % n)
    elif k in ("attr_out", "attr_out_int"):
        g.params.append("%s *%s" % ("MPI_Aint" if k == "attr_out" else "MPI_Fint", n))
        keyval = [x.name for x in ff.args if x.name.endswith("keyval")][0]
        obj = {"Comm": "FORT_KIND_COMM", "Type": "FORT_KIND_DTYPE", "Win": "FORT_KIND_WIN",
               "Attr": "FORT_KIND_COMM"}[ff.fn.short.split("_")[0]]
        g.decl.append("    void *v_%s = NULL;" % n)
        g.cargs.append("&v_%s" % n)
        g.post.append("    if (rc == MPI_SUCCESS && *flag)")
        g.post.append("        *%s = (%s)fort_attr_out(%s, *%s, v_%s);"
                      % (n, "MPI_Aint" if k == "attr_out" else "MPI_Fint", obj, keyval, n))
    elif k in ("ptr_out",):
        g.params.append("void *%s" % n)
        g.cargs.append(n)
    elif k == "detach_addr":
        g.params.append("void *%s" % n)
        if f08:
            g.cargs.append(n)
        else:
            # MPI_BUFFER_DETACH(BUFFER_ADDR, ...) of mpif.h: the address is not returned
            g.decl.append("    void *d_%s = NULL;" % n)
            g.cargs.append("&d_%s" % n)
    elif k == "status":
        g.params.append("%sMPI_Fint *%s" % ("const " if a.intent == "in" else "", n))
        if "MPI_Fint" in ctype:
            g.cargs.append(n)          # MPI_Status_f2f08 ...: the INTEGER array itself
        elif f08:
            g.cargs.append("fort_st08(%s)" % n)
        else:
            g.decl.append("    MPI_Status st_%s;" % n)
            g.decl.append("    MPI_Status *c_%s = fort_st_c(%s, &st_%s);" % (n, n, n))
            g.cargs.append("c_%s" % n)
            if a.intent != "in":
                g.post.append("    fort_st_f(%s, c_%s, &st_%s);" % (n, n, n))
    elif k == "status08":
        g.params.append("%sMPI_F08_status *%s" % ("const " if a.intent == "in" else "", n))
        g.cargs.append(n)
    elif k == "statuses":
        g.params.append("MPI_Fint *%s" % n)
        if f08:
            g.cargs.append("fort_sts08(%s)" % n)
        else:
            g.decl.append("    MPI_Status sts_%s[FORT_STS_STACK];" % n)
            g.decl.append("    MPI_Status *c_%s = NULL;" % n)
            g.pre.append("    c_%s = fort_sts_c(%s, *%s, sts_%s);" % (n, n, a.size, n))
            g.nomem_if("c_%s == FORT_STS_NOMEM" % n)
            g.cargs.append("c_%s" % n)
            g.post.append("    fort_sts_f(%s, *%s, c_%s);" % (n, a.size, n))
            g.cleanup.append("    fort_sts_free(c_%s, sts_%s, %s);" % (n, n, n))
    elif k == "str_in":
        trim = "FORT_TRIM_BOTH" if n in STR_TRIM_BOTH else "FORT_TRIM_TRAILING"
        src = g.string_param(n, f08, "const char")
        g.decl.append("    char sb_%s[FORT_STR_STACK];" % n)
        g.decl.append("    char *c_%s = NULL;" % n)
        g.pre.append("    c_%s = fort_str_in(%s, sb_%s, %s);" % (n, src, n, trim))
        g.nomem_if("c_%s == NULL" % n)
        g.cargs.append("c_%s" % n)
        g.cleanup.append("    fort_str_free(c_%s, sb_%s);" % (n, n))
    elif k == "str_out":
        dst = g.string_param(n, f08, "char")
        if a.size in ("valuelen", "buflen", "pset_len"):
            # the caller's length is the buffer: C gets one more char for the NUL
            flen = ("%s->elem_len" % n) if f08 else ("%s_len" % n)
            g.decl.append("    char *c_%s = NULL;" % n)
            g.pre.append("    c_%s = malloc(%s + 1);" % (n, flen))
            g.nomem_if("c_%s == NULL" % n)
            g.cleanup.append("    free(c_%s);" % n)
            if a.size == "valuelen":
                g.cargs.append("c_%s" % n)
                g.post.append("    if (rc == MPI_SUCCESS && *flag)")
                g.post.append("        fort_str_out(%s, c_%s);" % (dst, n))
            else:
                # MPI_INFO_GET_STRING / MPI_SESSION_GET_NTH_PSET: in Fortran the length
                # is without the NUL both ways, and on input how many characters
                # to write (none: the value is left alone)
                ln = a.size
                g.decl.append("    int w_%s = *%s;" % (ln, ln))
                g.decl.append("    int c_%s = w_%s > 0 ? (int)(w_%s < (int)%s ? w_%s : (int)%s) + 1 : 0;"
                              % (ln, ln, ln, flen, ln, flen))
                g.cargs.append("c_%s" % n)
                g.fix[ln] = "&c_%s" % ln
                cond = "rc == MPI_SUCCESS && w_%s > 0" % ln
                if ln == "buflen":
                    cond += " && *flag"
                g.post.append("    if (%s)" % cond)
                g.post.append("        fort_str_out(%s, c_%s);" % (dst, n))
                g.post.append("    if (rc == MPI_SUCCESS%s)" % (" && *flag" if ln == "buflen" else ""))
                g.post.append("        *%s = c_%s - 1;" % (ln, ln))
        else:
            g.decl.append("    char c_%s[%s];" % (n, a.size))
            g.pre.append("    c_%s[0] = '\\0';" % n)
            g.cargs.append("c_%s" % n)
            g.post.append("    if (rc == MPI_SUCCESS)")
            g.post.append("        fort_str_out(%s, c_%s);" % (dst, n))
    elif k == "proc":
        g.params.append("%s *%s" % (a.handle, n))
        g.cargs.append(n)
    elif k == "choice":
        if f08:
            g.params.append("CFI_cdesc_t *%s" % n)
            g.choice_decl.append("    f08_sec s_%s;" % n)
            g.choice_decl.append("    void *c_%s = f08_buf(%s, &s_%s);" % (n, n, n))
            g.choices.append(n)
            g.cargs.append("c_%s" % n)
        else:
            g.params.append("%svoid *%s" % ("const " if a.intent == "in" else "", n))
            g.cargs.append("fort_buf(%s)" % n)
    elif k == "ierror":
        g.params.append("MPI_Fint *ierror")
    else:
        raise GenError("no C glue for kind %s" % k)


def glue_function(ff, cname, callee, f08):
    """The C text of one entry point."""
    g = Glue()
    args = ff.args
    for a in args:
        glue_arg(g, a, ff, f08, cname)
    # f08: the sections of choice buffers (after the locals of every argument)
    sec_lines = []
    sec_decl = []
    locals_made = set()
    sec_done = []
    call_args = list(g.cargs)
    plain = [x for x in args if x.kind != "ierror"]
    for i, a in enumerate(plain):
        if a.name in g.fix:
            call_args[i] = g.fix[a.name]
    if f08:
        idx = {a.name: i for i, a in enumerate([x for x in args if x.kind != "ierror"])}
        kind, handle = ff.fn.err_object()
        href = "*" + handle if handle != "0" else "0"
        for a in args:
            if a.kind != "choice":
                continue
            n = a.name
            flags = []
            if a.bufclass == "simple":
                flags.append("F08_SIMPLE")
            elif a.bufclass == "addr":
                flags.append("F08_ADDR")
            if not ff.nonblocking:
                flags.append("F08_BLOCKING")
            flags.append("F08_IN")
            if a.intent != "in":
                flags.append("F08_OUT")
            cnt_ref, big_ref, dt_ref = "NULL", "NULL", "NULL"
            if a.bufclass == "simple":
                cname_, dname = a.triple
                if cname_ is not None:
                    cp = ff.fn.params[[p.name for p in ff.fn.params].index(cname_)]
                    var = "k_" + cname_
                    if var not in locals_made:
                        locals_made.add(var)
                        sec_decl.append("    %s %s = *%s;" % (cp.type, var, cname_))
                    if cp.type == "int":
                        cnt_ref = "&" + var
                    else:
                        big_ref = "&" + var
                    call_args[idx[cname_]] = var
                var = "k_" + dname
                if var not in locals_made:
                    locals_made.add(var)
                    sec_decl.append("    MPI_Datatype %s = *%s;" % (var, dname))
                dt_ref = "&" + var
                call_args[idx[dname]] = var
            sec_lines.append("    if (__builtin_expect(s_%s.d != NULL, 0)) {" % n)
            sec_lines.append("        rc = f08_sec_prepare(&s_%s, %s, &c_%s, %s, %s, %s, \"%s\", %s, %s);"
                             % (n, " | ".join(flags), n, cnt_ref, big_ref, dt_ref, ff.fname,
                                kind, href))
            sec_lines.append("        if (rc != MPI_SUCCESS)")
            sec_lines.append("            goto done;")
            sec_lines.append("    }")
            sec_done.append("    f08_sec_finish(&s_%s);" % n)
            g.fail_label = True
    params = g.params + g.lens
    ret = ff.fn.ret
    sig = ", ".join(params) if params else "void"
    lines = []
    fast = f08 and ret == "int" and not (g.decl or g.pre or g.post or g.cleanup)
    if fast:
        # the usual case first: every buffer a scalar or a contiguous array, whose
        # address is all the call needs; sections go to the general path, a
        # function of its own so that this one stays small
        fast_args = [("p_" + c[2:]) if c.startswith("c_") and c[2:] in g.choices else c
                     for c in [g.fix.get(a.name, c) for a, c in zip(plain, g.cargs)]]
        lines.append("static void __attribute__((noinline, cold)) sec_%s(%s)" % (cname, sig))
    elif ret == "int":
        lines.append("void %s(%s)" % (cname, sig))
    else:
        lines.append("%s %s(%s)" % (ret, cname, sig))
    lines.append("{")
    if ret == "int":
        lines.append("    int rc = MPI_SUCCESS;")
    lines += g.choice_decl
    lines += g.decl
    lines += sec_decl
    lines += g.pre
    lines += sec_lines
    if ret != "int":
        lines.append("    return %s(%s);" % (callee, ", ".join(call_args)))
        lines.append("}")
        return "\n".join(lines) + "\n"
    lines.append("    rc = %s(%s);" % (callee, ", ".join(call_args)))
    lines += g.post
    if g.fail_label:
        lines.append("done:")
    lines += sec_done
    lines += g.cleanup
    lines.append("    if (ierror != NULL)")
    lines.append("        *ierror = rc;")
    lines.append("}")
    if fast:
        names = [prm.split("*")[-1].strip() for prm in params]
        lines.append("")
        lines.append("void %s(%s)" % (cname, sig))
        lines.append("{")
        lines.append("    void %s;" % ", ".join("*p_" + n for n in g.choices))
        cond = " && ".join("f08_plain(%s, &p_%s)" % (n, n) for n in g.choices)
        lines.append("    if (__builtin_expect(%s, 1)) {" % cond)
        lines.append("        int rc = %s(%s);" % (callee, ", ".join(fast_args)))
        lines.append("        if (ierror != NULL)")
        lines.append("            *ierror = rc;")
        lines.append("        return;")
        lines.append("    }")
        lines.append("    sec_%s(%s);" % (cname, ", ".join(names)))
        lines.append("}")
    return "\n".join(lines) + "\n"


HEADER_C = """/* Generated at build time by tools/gen_fortran.py from src/binding/api.txt. */
#include <stdlib.h>

#include "mpi.h"
#include "binding/fortran/fort.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
"""


def gen_f77_c(funcs):
    out = [HEADER_C]
    out.append("/* mpi_x_ / pmpi_x_: the routines of mpif.h and module mpi (and of mpi_f08\n"
               " * when they have no choice buffer): gfortran passes every argument by\n"
               " * reference and appends the lengths of CHARACTER arguments; ierror may be\n"
               " * absent (NULL) when mpi_f08 calls. */\n")
    for ff in funcs:
        if ff.special or (ff.has_choice and not ff.in_f77):
            continue
        for prof in ("", "P"):
            cname = (prof + ff.fname).lower() + "_"
            out.append(glue_function(ff, cname, prof + ff.fname, False))
    return "\n".join(out)


def gen_f08_c(funcs):
    out = [HEADER_C.replace('#include "binding/fortran/fort.h"',
                            '#include "binding/fortran/fort.h"\n#include "binding/fortran/f08.h"')]
    out.append("/* MPI_X_f08ts / PMPI_X_f08ts: the routines of mpi_f08 with a choice buffer,\n"
               " * BIND(C): buffers and strings arrive as ISO_Fortran_binding descriptors. */\n")
    for ff in funcs:
        if not ff.in_f08 or not ff.has_choice or ff.special:
            continue
        for prof in ("", "P"):
            cname, _ = f08_specific(ff, prof)
            out.append(glue_function(ff, cname, prof + ff.fname, True))
    return "\n".join(out)


def main(argv):
    args = argv[1:]
    if len(args) != 2 or args[0] != "--out":
        raise GenError("usage: gen_fortran.py --out DIR")
    out_dir = args[1]
    funcs = read_funcs()
    consts = read_constants()
    os.makedirs(out_dir, exist_ok=True)
    files = {"mpif.h": gen_mpif_h(funcs, consts),
             "mpi.f90": gen_mpi_module(funcs, consts),
             "mpi_f08.f90": gen_f08_module(funcs, consts),
             "f77.c": gen_f77_c(funcs),
             "f08.c": gen_f08_c(funcs)}
    for name, text in files.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (GenError, gen_api.GenError) as err:
        sys.stderr.write("gen_fortran: error: %s\n" % err)
        sys.exit(2)
