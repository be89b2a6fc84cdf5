#!/usr/bin/env python3
"""Generate the API glue of DCFA-MPI from two tables.

Inputs
  src/binding/api.txt     one C prototype per line, "<ret> MPI_<Name>(<params>)",
                          optionally followed by marks (below)
  src/include/dtypes.def  the predefined datatypes (DTYPE/PAIRTYPE/DTYPE_ALIAS)

Outputs
  include/mpi.h           committed; only the text between the GENERATED markers
  OUT/stubs.c             made at build time (CMake), for every function X:
                            - a weak MPI_X that calls PMPI_X (entry lock when on),
                            - PMPI_X: the checks of its output arguments (below),
                              then b_X(arguments...), the implementation, which a
                              library source file defines; b_X is a weak alias
                              of a static stub_X that reports
                              MPI_ERR_UNSUPPORTED_OPERATION until one does,
                            - for a [twin] pair, PMPI_X and PMPI_X_c that both
                              call b_X("MPI_X" or "MPI_X_c", arguments...),
                            - dcfa_api_table[] / dcfa_api_count /
                              dcfa_api_implemented() for mpiinfo.
  OUT/impl.h              the prototypes of every b_X (of a [twin] pair:
                            int b_X(const char *fn, <parameters of MPI_X_c>));
                          a source file that defines b_X includes it.
  OUT/nullout_cases.h     for test/mpi/err_nullout_all.c: one call per output
                          argument the generated PMPI_X checks, with it NULL.

Marks after a prototype, "[name]" or "[name: words]":
  [twin]          on an MPI_X_c line: MPI_X and MPI_X_c whose parameters differ
                  only in width (the int form's int or MPI_Aint against the _c
                  form's MPI_Count or MPI_Aint): by value (the int form widens),
                  as an output pointer (the int form passes the address of a wide
                  variable and narrows it once the call succeeded: a value that
                  does not fit an int is MPI_ERR_VALUE_TOO_LARGE, or MPI_UNDEFINED
                  with [undefined]), or as an input array (every MPI_Count or
                  MPI_Aint array of the _c form reaches b_X as a b_counts or
                  b_aints, src/binding/twin.h, holding either form's array).
                  The implementation is one function b_X taking the _c
                  parameters and the name of the function the program called,
                  for its messages.
  [undefined: p]  on a [twin] line: the int form's output p is MPI_UNDEFINED when
                  the value does not fit an int (MPI_Get_count, MPI_Type_size).
  [null: p ...]   output pointers p that may be NULL (MPI_Init's argc, ...):
                  not checked here (the implementation decides).
  [out: p ...]    parameters declared void * that are pointers to a result
                  (MPI_Alloc_mem's baseptr, MPI_Comm_get_attr's attribute_val):
                  checked like the output pointers.
  [inout: p]      a communicator pointer the call reads (MPI_Comm_free's comm):
                  not cleared (below); on a [twin] line, an output pointer the call
                  also reads (MPI_Pack's position): the int form's value is widened
                  into the variable passed.
  [raise: x]      where the errors of the generated checks go, when not on the
                  first communicator, window, file or session passed by value:
                  a parameter of type MPI_Errhandler (MPI_Session_init, the
                  *_from_group constructors: the handler the call was given) or
                  MPI_FILE_NULL (MPI_File_open: the handler of MPI_FILE_NULL).

The output checks: every parameter "T *p" with T an int, MPI_Aint, MPI_Count,
MPI_Offset, MPI_Fint, char, MPI_F08_status or a handle type (MPI_Comm,
MPI_Request, ...), and every [out] parameter, must not be NULL: NULL is
MPI_ERR_ARG through the error handler of the call's object ("MPI_X: p: NULL
pointer", naming the call, the argument and the rank), before the
implementation runs. Arrays ("T p[]"), MPI_Status pointers (MPI_STATUS_IGNORE
is NULL), choice buffers (void *), callbacks and [null] parameters are left to
the implementation, as are functions that return no error code and MPI_T_*
(whose errors are return codes of their own, without error handlers).
Every other MPI_Comm * parameter is a communicator the call makes: the generated
PMPI_X sets it to MPI_COMM_NULL before b_X runs, so a constructor that fails
leaves MPI_COMM_NULL (MPICH's errors/topo/cartsmall).

Usage
  tools/gen_api.py            rewrite the generated part of include/mpi.h
  tools/gen_api.py --check    exit 1 if include/mpi.h is stale (CI)
  tools/gen_api.py --out DIR  write DIR/stubs.c and DIR/impl.h (the build);
                              exit 1 without writing if include/mpi.h is stale
Plain python3, no third-party modules; re-running is idempotent.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API_TXT = os.path.join(ROOT, "src", "binding", "api.txt")
DTYPES_DEF = os.path.join(ROOT, "src", "include", "dtypes.def")
MPI_H = os.path.join(ROOT, "include", "mpi.h")

DATATYPE_KIND = 3

# Entry points that touch no shared state take no entry lock: the clock, and
# the calls a thread makes to learn whether and how MPI runs.
NO_ENTRY_LOCK = {"Wtime", "Wtick", "Initialized", "Finalized", "Query_thread",
                 "Is_thread_main", "Aint_add", "Aint_diff", "Get_version",
                 "Get_library_version"}

# Entry points allowed when MPI is not running (before MPI_Init / MPI_Session_init,
# after the last MPI_Finalize / MPI_Session_finalize): MPI 4.1 Table 9 ("MPI
# functionality that is always available": version queries, info objects, the
# session error handler calls, error classes, codes and strings, MPI_T_*),
# the init/finalize calls themselves (they report their own misuse), the
# clock and MPI_T. Any other call then raises "MPI is not initialized" /
# "already finalized" through the initial error handler (mpii_not_live).
# Functions whose prefix is in ANYTIME_PREFIXES, and those not returning an
# error code, are always allowed.
ANYTIME = {"Init", "Init_thread", "Initialized", "Finalized", "Finalize", "Get_version",
           "Get_library_version", "Query_thread", "Is_thread_main", "Abort", "Wtime", "Wtick",
           "Pcontrol", "Error_class", "Error_string", "Errhandler_free", "Add_error_class",
           "Add_error_code", "Add_error_string", "Remove_error_class", "Remove_error_code",
           "Remove_error_string"}
ANYTIME_PREFIXES = ("Info_", "Session_", "T_")

# Which handle a stub or a generated check reports its error on: the first
# by-value parameter of the first of these types that the function has (or
# the [raise] mark).
ERR_OBJECTS = [
    ("MPI_Comm", "MPII_OBJ_COMM"),
    ("MPI_Win", "MPII_OBJ_WIN"),
    ("MPI_File", "MPII_OBJ_FILE"),
    ("MPI_Session", "MPII_OBJ_SESSION"),
]


# Pointers to these are output arguments that must not be NULL (the checks of
# the generated PMPI_X); "char" stands for the strings MPI writes into.
OUT_BASES = {"int", "MPI_Aint", "MPI_Count", "MPI_Offset", "MPI_Fint", "char",
             "MPI_F08_status", "MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Request",
             "MPI_Op", "MPI_Errhandler", "MPI_Info", "MPI_Win", "MPI_File", "MPI_Message",
             "MPI_Session"}

MARKS = ("twin", "null", "out", "raise", "inout", "undefined")


class GenError(Exception):
    pass


class Param:
    def __init__(self, text):
        self.text = text.strip()
        if self.text == "...":
            self.name = None
            self.type = "..."
            return
        m = re.match(r"^(.*?)\b([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", self.text)
        if not m or not m.group(1).strip():
            raise GenError("cannot parse parameter '%s'" % self.text)
        self.name = m.group(2)
        # the type without the name; arrays written as [] keep their brackets
        self.type = (m.group(1).strip() + " " + m.group(3).strip()).strip()


# How a parameter of a [twin] pair's int form may differ from the _c form's:
# (int form's type, _c form's types) -> the kind of difference (gen_pmpi).
TWIN_WIDER = {
    ("int", "MPI_Count"): "value", ("int", "MPI_Aint"): "value",
    ("MPI_Aint", "MPI_Count"): "value",
    ("int *", "MPI_Count *"): "out", ("int *", "MPI_Aint *"): "out",
    ("MPI_Aint *", "MPI_Count *"): "out",
    ("const int []", "const MPI_Count []"): "array",
    ("const int []", "const MPI_Aint []"): "array",
}
# the type of the implementation's parameter for an array of the _c form
TWIN_ARRAY = {"const MPI_Count []": "b_counts", "const MPI_Aint []": "b_aints"}


def split_marks(line, lineno):
    """(prototype, {mark: [words]}) of an api.txt line."""
    marks = {}
    while True:
        m = re.match(r"^(.*?\S)\s*\[(\w+)(?::([^\]]*))?\]\s*$", line)
        if not m:
            return line, marks
        name, words = m.group(2), (m.group(3) or "").split()
        if name not in MARKS:
            raise GenError("api.txt:%d: unknown mark [%s]" % (lineno, name))
        if name in marks:
            raise GenError("api.txt:%d: mark [%s] given twice" % (lineno, name))
        if (name == "twin") != (m.group(3) is None) or (name == "raise" and len(words) != 1):
            raise GenError("api.txt:%d: mark [%s] takes %s" % (
                lineno, name, "no words" if name == "twin" else "one word" if name == "raise"
                else "parameter names"))
        marks[name] = words
        line = m.group(1)


class Func:
    def __init__(self, line, lineno):
        line, self.marks = split_marks(line, lineno)
        m = re.match(r"^(.+?)\s*\b(MPI_\w+)\s*\((.*)\)\s*$", line)
        if not m:
            raise GenError("api.txt:%d: not a prototype: %s" % (lineno, line))
        self.lineno = lineno
        self.ret = m.group(1).strip()
        self.name = m.group(2)
        self.short = self.name[len("MPI_"):]
        self.twin_of = None     # for both functions of a [twin] pair: the _c one
        self.twin_kinds = None  # the int form's: how each parameter differs (TWIN_WIDER)
        self.marked_twin = "twin" in self.marks
        if self.marked_twin and not self.short.endswith("_c"):
            raise GenError("api.txt:%d: [twin] belongs on the _c line (%s)" % (lineno, self.name))
        plist = m.group(3).strip()
        if plist in ("", "void"):
            self.params = []
        else:
            self.params = [Param(p) for p in plist.split(",")]
        names = [p.name for p in self.params if p.name]
        if len(set(names)) != len(names):
            raise GenError("api.txt:%d: duplicate parameter name in %s" % (lineno, self.name))
        for i, p in enumerate(self.params):
            if p.type == "..." and i != len(self.params) - 1:
                raise GenError("api.txt:%d: '...' must be last in %s" % (lineno, self.name))
        by_name = {p.name: p for p in self.params if p.name}
        for mark in ("null", "out", "inout", "undefined"):
            for n in self.marks.get(mark, []):
                p = by_name.get(n)
                if p is None:
                    raise GenError("api.txt:%d: [%s: %s]: %s has no such parameter"
                                   % (lineno, mark, n, self.name))
                if mark == "out" and p.type != "void *":
                    raise GenError("api.txt:%d: [out: %s] is for void * parameters" % (lineno, n))
                if mark == "inout" and p.type != "MPI_Comm *" and not self.marked_twin:
                    raise GenError("api.txt:%d: [inout: %s] is for MPI_Comm * parameters"
                                   % (lineno, n))
                if mark == "null" and not self.out_type(p):
                    raise GenError("api.txt:%d: [null: %s]: not an output pointer that would be "
                                   "checked" % (lineno, n))
        for n in self.marks.get("raise", []):
            if n != "MPI_FILE_NULL" and (n not in by_name or by_name[n].type != "MPI_Errhandler"):
                raise GenError("api.txt:%d: [raise: %s]: an MPI_Errhandler parameter or "
                               "MPI_FILE_NULL" % (lineno, n))

    @staticmethod
    def out_type(p):
        m = re.match(r"^(\w+) \*$", p.type)
        return m is not None and m.group(1) in OUT_BASES

    def decl(self, prefix):
        """The prototype with function name prefix+short ("MPI_", "PMPI_", "stub_")."""
        plist = ", ".join(p.text for p in self.params) if self.params else "void"
        return "%s %s%s(%s)" % (self.ret, prefix, self.short, plist)

    def call_args(self):
        # A variadic tail cannot be forwarded in C; only named arguments are passed.
        return ", ".join(p.name for p in self.params if p.name)

    def err_object(self):
        raise_to = self.marks.get("raise")
        if raise_to == ["MPI_FILE_NULL"]:
            return "MPII_OBJ_FILE", "MPI_FILE_NULL"
        if raise_to:
            return "MPII_OBJ_ERRH", raise_to[0]
        for ctype, kind in ERR_OBJECTS:
            for p in self.params:
                if p.type == ctype:
                    return kind, p.name
        return "MPII_OBJ_NONE", "0"

    def new_comms(self):
        """The communicators the call makes (MPI_Comm * parameters not marked [inout])."""
        if self.ret != "int" or self.short.startswith("T_"):
            return []
        inout = set(self.marks.get("inout", []))
        return [p for p in self.params if p.type == "MPI_Comm *" and p.name not in inout]

    def checked_outputs(self):
        """The parameters the generated PMPI_X checks for NULL, in order."""
        if self.ret != "int" or self.short.startswith("T_"):
            return []
        nullok = set(self.marks.get("null", []))
        out = set(self.marks.get("out", []))
        return [p for p in self.params
                if p.name and ((self.out_type(p) and p.name not in nullok) or p.name in out)]


def pair_twins(funcs):
    """Links each [twin] _c function with its int form, checking that they differ
    only by int -> MPI_Count/MPI_Aint by-value parameters."""
    by_name = {fn.name: fn for fn in funcs}
    for big in funcs:
        if not big.marked_twin:
            continue
        where = "api.txt:%d: [twin] %s" % (big.lineno, big.name)
        small = by_name.get(big.name[:-2])
        if small is None:
            raise GenError("%s: no %s to pair with" % (where, big.name[:-2]))
        if small.ret != "int" or big.ret != "int":
            raise GenError("%s: both forms must return int" % where)
        if len(small.params) != len(big.params):
            raise GenError("%s: the two forms have different parameter counts" % where)
        small.twin_kinds = []
        for ps, pb in zip(small.params, big.params):
            if pb.type == "..." or ps.type == "...":
                raise GenError("%s: variadic functions cannot be twins" % where)
            kind = "same" if ps.type == pb.type else TWIN_WIDER.get((ps.type, pb.type))
            if kind is None:
                raise GenError("%s: parameter '%s' is '%s' in the int form and '%s' in the _c form;"
                               " only int/MPI_Aint -> MPI_Count/MPI_Aint may differ (by value, "
                               "output pointer or input array)" % (where, pb.name, ps.type, pb.type))
            small.twin_kinds.append(kind)
        narrowed = [pb.name for ps, pb, k in zip(small.params, big.params, small.twin_kinds)
                    if k == "out"]
        for n in big.marks.get("inout", []) + big.marks.get("undefined", []):
            if n not in narrowed:
                raise GenError("%s: [inout/undefined: %s] is for an output the int form narrows"
                               % (where, n))
        for n in big.marks.get("undefined", []):
            if small.params[[p.name for p in small.params].index(n)].type != "int *":
                raise GenError("%s: [undefined: %s] is for an int output" % (where, n))
        small.twin_of = big
        big.twin_of = big


def read_api():
    funcs = []
    seen = set()
    with open(API_TXT) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fn = Func(line, lineno)
            if fn.name in seen:
                raise GenError("api.txt:%d: %s listed twice" % (lineno, fn.name))
            seen.add(fn.name)
            funcs.append(fn)
    pair_twins(funcs)
    return funcs


def read_dtypes():
    """Returns (types, aliases): types = [(name, index)], aliases = [(name, target)]."""
    types = []
    aliases = []
    npredef = None
    with open(DTYPES_DEF) as f:
        text = f.read()
    # drop comments so that the explanation at the top is not parsed
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^#define\s+DCFA_DTYPE_NPREDEF\s+(\d+)$", line)
        if m:
            npredef = int(m.group(1))
            continue
        m = re.match(r"^(DTYPE|PAIRTYPE|DTYPE_ALIAS)\s*\((.*)\)\s*$", line)
        if not m:
            continue
        args = [a.strip() for a in m.group(2).split(",")]
        if m.group(1) == "DTYPE_ALIAS":
            if len(args) != 2:
                raise GenError("dtypes.def: bad DTYPE_ALIAS line: %s" % line)
            aliases.append((args[0], args[1]))
            continue
        want = 5 if m.group(1) == "DTYPE" else 4
        if len(args) != want:
            raise GenError("dtypes.def: %s needs %d arguments: %s" % (m.group(1), want, line))
        types.append((args[0], int(args[1])))
    indices = sorted(i for _, i in types)
    if indices != list(range(1, len(types) + 1)):
        raise GenError("dtypes.def: indices must run 1..N without gaps or repeats")
    if npredef != len(types):
        raise GenError("dtypes.def: DCFA_DTYPE_NPREDEF is %s but %d types are listed"
                       % (npredef, len(types)))
    names = set(n for n, _ in types)
    if len(names) != len(types):
        raise GenError("dtypes.def: a datatype name is listed twice")
    for a, t in aliases:
        if t not in names or a in names:
            raise GenError("dtypes.def: bad alias %s -> %s" % (a, t))
    return types, aliases


def gen_datatypes(types, aliases):
    out = []
    width = max(len(n) for n, _ in types + aliases)
    for name, index in types:
        out.append("#define %-*s ((MPI_Datatype)0x%08x)"
                   % (width, name, (DATATYPE_KIND << 24) | index))
    for name, target in aliases:
        out.append("#define %-*s %s" % (width, name, target))
    return "\n".join(out) + "\n"


def gen_prototypes(funcs):
    out = []
    for fn in funcs:
        out.append(fn.decl("MPI_") + ";")
    out.append("")
    out.append("/* profiling interface: the same functions under their PMPI_ names */")
    for fn in funcs:
        out.append(fn.decl("PMPI_") + ";")
    return "\n".join(out) + "\n"


def impl_name(fn):
    """The b_X implementing fn (of a twin pair: the int form's name)."""
    if fn.twin_of is not None:
        return "b_" + fn.twin_of.short[:-2]
    return "b_" + fn.short


def twin_decl(big):
    params = ["const char *fn"]
    for p in big.params:
        params.append("%s %s" % (TWIN_ARRAY[p.type], p.name) if p.type in TWIN_ARRAY else p.text)
    return "int %s(%s)" % (impl_name(big), ", ".join(params))


def twin_call(fn, kind, handle):
    """The body of PMPI_X of a [twin] pair after its checks: b_X called with the _c form's
    arguments; the int form widens its arrays and its outputs through variables of the _c
    form's types, and narrows these outputs once the call succeeded."""
    big = fn.twin_of
    kinds = fn.twin_kinds if fn is not big else ["same"] * len(fn.params)
    args, pre, post = ['"%s"' % fn.name], [], []
    for p, pb, k in zip(fn.params, big.params, kinds):
        if pb.type in TWIN_ARRAY:
            view = "(%s){%s, NULL}" if k == "array" else "(%s){NULL, %s}"
            args.append(view % (TWIN_ARRAY[pb.type], p.name))
        elif k == "out":
            wide = pb.type[:-2]
            w = p.name + "_w"
            if p.name in big.marks.get("inout", []):
                pre.append("    %s %s = *%s;" % (wide, w, p.name))
            else:
                pre.append("    %s %s = 0;" % (wide, w))
            args.append("&" + w)
            if p.type == "MPI_Aint *":
                post.append("    *%s = (MPI_Aint)%s;" % (p.name, w))
            elif p.name in big.marks.get("undefined", []):
                post.append("    *%s = %s > INT_MAX ? MPI_UNDEFINED : (int)%s;" % (p.name, w, w))
            else:
                post.append("    if (%s > INT_MAX)" % w)
                post.append('        return mpii_err(%s, %s, MPI_ERR_VALUE_TOO_LARGE, "%s",'
                            % (kind, handle, fn.name))
                post.append('                        "%s=%%lld does not fit an int: use %s", '
                            "(long long)%s);" % (p.name, big.name, w))
                post.append("    *%s = (int)%s;" % (p.name, w))
        else:
            args.append(p.name)
    call = "%s(%s)" % (impl_name(fn), ", ".join(args))
    if not post:
        return pre + ["    return %s;" % call]
    return pre + ["    int rc = %s;" % call, "    if (rc != MPI_SUCCESS)", "        return rc;"] + \
        post + ["    return MPI_SUCCESS;"]


def gen_pmpi(fn):
    """PMPI_X: the checks of the output arguments, then b_X (a twin's with the name the
    program called). A function returning an error code has them in a static inline
    body_X, and PMPI_X returns the code a user's error handler left in its argument in
    place of the one the handler was given (mpii_err_returned: MPI 4.1 9.3)."""
    if fn.ret != "int":
        return gen_pmpi_body(fn, "PMPI_", "")
    wrap = [fn.decl("PMPI_"), "{",
            "    int rc = body_%s(%s);" % (fn.short, fn.call_args()),
            "    return __builtin_expect(rc != MPI_SUCCESS, 0) ? mpii_err_returned(rc) : rc;",
            "}"]
    return gen_pmpi_body(fn, "body_", "static inline ") + wrap


def gen_pmpi_body(fn, prefix, storage):
    lines = [storage + fn.decl(prefix), "{"]
    checks = fn.checked_outputs()
    if checks:
        kind, handle = fn.err_object()
        for p in checks:
            lines.append("    if (__builtin_expect(%s == NULL, 0))" % p.name)
            lines.append('        return mpii_err_null_arg(%s, %s, "%s", "%s");'
                         % (kind, handle, fn.name, p.name))
    for p in fn.new_comms():
        lines.append("    *%s = MPI_COMM_NULL; /* what a failed constructor leaves */" % p.name)
    if fn.twin_of is not None:
        kind, handle = fn.err_object()
        return lines + twin_call(fn, kind, handle) + ["}"]
    args = fn.call_args()
    if any(p.type == "..." for p in fn.params):
        lines.append("    /* the variadic arguments cannot be forwarded; none are defined */")
    lines.append("    return %s(%s);" % (impl_name(fn), args))
    lines.append("}")
    return lines


def gen_stub(fn):
    if fn.twin_of is not None:
        return "\n".join(gen_pmpi(fn) + gen_mpi_wrapper(fn)) + "\n"
    lines = ["static " + fn.decl("stub_"), "{"]
    if fn.ret == "int":
        kind, handle = fn.err_object()
        lines.append('    return mpii_err(%s, %s, MPI_ERR_UNSUPPORTED_OPERATION, "%s",'
                     % (kind, handle, fn.name))
        lines.append('                    "this function is not implemented in DCFA-MPI");')
    else:
        # Not an error-code function: there is nothing to return; stop loudly.
        lines.append('    fputs("DCFA-MPI: %s is not implemented\\n", stderr);' % fn.name)
        lines.append("    abort();")
    lines.append("}")
    lines.append(fn.decl("b_") + ' __attribute__((weak, alias("stub_%s")));' % fn.short)
    return "\n".join(lines + gen_pmpi(fn) + gen_mpi_wrapper(fn)) + "\n"


def gen_mpi_wrapper(fn):
    """The weak MPI_X: calls PMPI_X, under the entry lock when it is on."""
    lines = [fn.decl("MPI_") + " __attribute__((weak));"]
    lines.append(fn.decl("MPI_"))
    lines.append("{")
    if any(p.type == "..." for p in fn.params):
        lines.append("    /* the variadic arguments cannot be forwarded; none are defined */")
    if (fn.ret == "int" and fn.short not in ANYTIME and
            not fn.short.startswith(ANYTIME_PREFIXES)):
        lines.append("    if (__builtin_expect(!mpii_live, 0))")
        lines.append('        return mpii_not_live("%s");' % fn.name)
    if fn.short in NO_ENTRY_LOCK:
        lines.append("    return PMPI_%s(%s);" % (fn.short, fn.call_args()))
    else:
        # the entry lock, when several threads may be inside (src/mpi/init/async.c)
        lines.append("    if (__builtin_expect(__atomic_load_n(&mpii_entry_lock_on, __ATOMIC_RELAXED), 0)) {")
        lines.append("        mpii_entry_enter();")
        lines.append("        %s rc = PMPI_%s(%s);" % (fn.ret, fn.short, fn.call_args()))
        lines.append("        mpii_entry_leave();")
        lines.append("        return rc;")
        lines.append("    }")
        lines.append("    return PMPI_%s(%s);" % (fn.short, fn.call_args()))
    lines.append("}")
    return lines


def gen_stubs_c(funcs):
    out = []
    out.append("/* Generated at build time by tools/gen_api.py from src/binding/api.txt. */")
    out.append("/*")
    out.append(" * For every MPI function X: a weak MPI_X that calls PMPI_X (a profiling tool")
    out.append(" * may interpose MPI_X), PMPI_X that checks the output arguments and calls")
    out.append(" * b_X, and a weak b_X aliasing static stub_X, which raises")
    out.append(" * MPI_ERR_UNSUPPORTED_OPERATION. A library source file that defines b_X")
    out.append(" * (strong) replaces the stub at link time; dcfa_api_implemented() tells")
    out.append(" * which did, by comparing the resolved b_X with the stub. The [twin] pairs")
    out.append(" * of api.txt have no stub: PMPI_X and PMPI_X_c call b_X(name, ...).")
    out.append(" */")
    out.append("#include <limits.h>")
    out.append("#include <stdio.h>")
    out.append("#include <stdlib.h>")
    out.append("")
    out.append('#include "mpi.h"')
    out.append('#include "mpi/mpii_err.h"')
    out.append('#include "binding/api_table.h"')
    out.append('#include "binding/impl.h"')
    out.append("")
    out.append("/* an MPI_Aint output of a twin's int form holds the _c form's MPI_Count as it is */")
    out.append('_Static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count), "MPI_Aint and MPI_Count differ");')
    out.append("")
    out.append("extern int mpii_entry_lock_on;")
    out.append("extern int mpii_live;")
    out.append("int mpii_not_live(const char *fn);")
    out.append("void mpii_entry_enter(void);")
    out.append("void mpii_entry_leave(void);")
    out.append("int mpii_err_null_arg(int objkind, int handle, const char *fn, const char *arg);")
    out.append("")
    out.append('#pragma GCC diagnostic ignored "-Wunused-parameter"')
    out.append('#pragma GCC diagnostic ignored "-Wmissing-prototypes"')
    out.append("#if defined(__GNUC__) && !defined(__clang__)")
    out.append('#pragma GCC diagnostic ignored "-Wattribute-alias"')
    out.append("#endif")
    out.append("")
    for fn in funcs:
        out.append(gen_stub(fn))
    out.append("const struct dcfa_api_entry dcfa_api_table[] = {")
    for fn in funcs:
        stub = "NULL" if fn.twin_of is not None else "(void *)stub_" + fn.short
        out.append('    { "%s", %s, (void *)%s },' % (fn.name, stub, impl_name(fn)))
    out.append("};")
    out.append("")
    out.append("const int dcfa_api_count = (int)(sizeof dcfa_api_table / sizeof dcfa_api_table[0]);")
    out.append("")
    out.append("int dcfa_api_implemented(int i)")
    out.append("{")
    out.append("    const volatile struct dcfa_api_entry *e;")
    out.append("")
    out.append("    if (i < 0 || i >= dcfa_api_count)")
    out.append("        return 0;")
    out.append("    /* volatile: the compiler must not fold the alias comparison */")
    out.append("    e = &dcfa_api_table[i];")
    out.append("    return e->impl != e->stub;")
    out.append("}")
    return "\n".join(out) + "\n"


def gen_impl_h(funcs):
    out = []
    out.append("/* Generated at build time by tools/gen_api.py from src/binding/api.txt. */")
    out.append("/*")
    out.append(" * The implementations of the MPI functions: PMPI_X (generated: the output")
    out.append(" * argument checks) calls b_X with its arguments. MPI_X and MPI_X_c of a [twin]")
    out.append(" * pair both call b_X with the _c parameters, fn being \"MPI_X\" or \"MPI_X_c\"")
    out.append(" * (for error messages). A source file that defines a b_X includes this header.")
    out.append(" */")
    out.append("#ifndef DCFA_BINDING_IMPL_H")
    out.append("#define DCFA_BINDING_IMPL_H")
    out.append("")
    out.append('#include "mpi.h"')
    out.append('#include "binding/twin.h"')
    out.append("")
    for fn in funcs:
        if fn.twin_of is fn:
            out.append(twin_decl(fn) + ";")
        elif fn.twin_of is None:
            out.append(fn.decl("b_") + ";")
    out.append("")
    out.append("#endif /* DCFA_BINDING_IMPL_H */")
    return "\n".join(out) + "\n"


def gen_nullout_h(funcs):
    """The cases of test/mpi/err_nullout_all.c: every output argument the generated PMPI_X
    checks, passed NULL through MPI_X, the output arguments checked before it pointing to
    scratch memory, every other argument 0 (the check comes before anything looks at them)."""
    out = []
    out.append("/* Generated at build time by tools/gen_api.py from src/binding/api.txt. */")
    out.append("/* Included by test/mpi/err_nullout_all.c, which defines nullout_scratch. */")
    cases = []
    for fn in funcs:
        checks = fn.checked_outputs()
        for k, target in enumerate(checks):
            before = set(p.name for p in checks[:k])
            args = []
            for p in fn.params:
                if p.type == "...":
                    continue
                if p.name in before:
                    args.append("(void *)nullout_scratch")
                elif p.name == target.name:
                    args.append("NULL")
                else:
                    args.append("0")
            cases.append((fn.name, target.name, "%s(%s)" % (fn.name, ", ".join(args))))
    out.append("#define NULLOUT_NCASES %d" % len(cases))
    out.append("static int nullout_call(int i)")
    out.append("{")
    out.append("    switch (i) {")
    for i, (_, _, call) in enumerate(cases):
        out.append("    case %d:" % i)
        out.append("        return %s;" % call)
    out.append("    }")
    out.append("    return -1;")
    out.append("}")
    out.append("static const char *const nullout_what[NULLOUT_NCASES][2] = {")
    for name, arg, _ in cases:
        out.append('    {"%s", "%s"},' % (name, arg))
    out.append("};")
    return "\n".join(out) + "\n"


def replace_between(text, begin, end, body, path):
    b = text.find(begin)
    e = text.find(end)
    if b < 0 or e < 0 or e < b:
        raise GenError("%s: markers '%s' / '%s' not found" % (path, begin, end))
    b += len(begin)
    return text[:b] + "\n" + body + text[e:]


def write_if_changed(path, text, check):
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old == text:
        return False
    if not check:
        with open(path, "w") as f:
            f.write(text)
    return True


def main(argv):
    args = argv[1:]
    check = "--check" in args
    out_dir = None
    if "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            raise GenError("--out needs a directory")
        out_dir = args[i + 1]
        del args[i:i + 2]
    for a in args:
        if a != "--check":
            raise GenError("unknown argument '%s' (usage: gen_api.py [--check] [--out DIR])" % a)
    funcs = read_api()
    types, aliases = read_dtypes()

    with open(MPI_H) as f:
        header = f.read()
    header = replace_between(header, "/* BEGIN GENERATED DATATYPES */",
                             "/* END GENERATED DATATYPES */",
                             gen_datatypes(types, aliases), MPI_H)
    header = replace_between(header, "/* BEGIN GENERATED PROTOTYPES */",
                             "/* END GENERATED PROTOTYPES */",
                             gen_prototypes(funcs), MPI_H)

    if out_dir is not None:
        # The build: mpi.h is committed, so it must already agree with api.txt.
        if write_if_changed(MPI_H, header, True):
            sys.stderr.write("gen_api: include/mpi.h is stale against src/binding/api.txt or "
                             "src/include/dtypes.def: run tools/gen_api.py and commit it\n")
            return 1
        os.makedirs(out_dir, exist_ok=True)
        # always written, so the build system sees the outputs newer than the inputs
        for name, text in (("stubs.c", gen_stubs_c(funcs)), ("impl.h", gen_impl_h(funcs)),
                           ("nullout_cases.h", gen_nullout_h(funcs))):
            with open(os.path.join(out_dir, name), "w") as f:
                f.write(text)
        return 0

    stale = []
    if write_if_changed(MPI_H, header, check):
        stale.append(MPI_H)
    verb = "stale" if check else "wrote"
    for p in stale:
        print("gen_api: %s %s" % (verb, os.path.relpath(p, ROOT)))
    print("gen_api: %d functions, %d predefined datatypes" % (len(funcs), len(types)))
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except GenError as err:
        sys.stderr.write("gen_api: error: %s\n" % err)
        sys.exit(2)
