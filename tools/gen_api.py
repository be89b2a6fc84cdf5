#!/usr/bin/env python3
"""Generate the API glue of DCFA-MPI from two tables.

Inputs
  src/binding/api.txt     one C prototype per line, "<ret> MPI_<Name>(<params>)",
                          optionally followed by "[twin]" on an MPI_X_c line
  src/include/dtypes.def  the predefined datatypes (DTYPE/PAIRTYPE/DTYPE_ALIAS)

Outputs
  include/mpi.h           committed; only the text between the GENERATED markers
  OUT/stubs.c             made at build time (CMake), for every function X:
                            - a weak MPI_X that calls PMPI_X (entry lock when on),
                            - a weak PMPI_X aliasing a static stub_X that
                              reports MPI_ERR_UNSUPPORTED_OPERATION, or, for a
                              [twin] pair, PMPI_X and PMPI_X_c that both call
                              b_X("MPI_X" or "MPI_X_c", arguments...),
                            - dcfa_api_table[] / dcfa_api_count /
                              dcfa_api_implemented() for mpiinfo.
  OUT/twins.h             the prototypes of the b_X functions of the [twin] pairs:
                            int b_X(const char *fn, <parameters of MPI_X_c>);
                          the binding file that defines b_X includes it.

A [twin] pair is MPI_X and MPI_X_c whose parameters differ only where the int
form passes an int by value and the _c form an MPI_Count or MPI_Aint; the
implementation is one function b_X taking the _c parameters (the int form
widens) and the name of the function the program called, for its messages.

Usage
  tools/gen_api.py            rewrite the generated part of include/mpi.h
  tools/gen_api.py --check    exit 1 if include/mpi.h is stale (CI)
  tools/gen_api.py --out DIR  write DIR/stubs.c and DIR/twins.h (the build);
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

# Which handle a stub reports its error on: the first by-value parameter of
# the first of these types that the function has.
ERR_OBJECTS = [
    ("MPI_Comm", "MPII_OBJ_COMM"),
    ("MPI_Win", "MPII_OBJ_WIN"),
    ("MPI_File", "MPII_OBJ_FILE"),
    ("MPI_Session", "MPII_OBJ_SESSION"),
]


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


# By-value parameter types of a [twin] pair's _c form that may stand for an int
# of the int form (the int form widens its argument).
TWIN_WIDER = ("MPI_Count", "MPI_Aint")


class Func:
    def __init__(self, line, lineno):
        m = re.match(r"^(.+?)\s*\b(MPI_\w+)\s*\((.*)\)\s*(?:\[(\w+)\])?\s*$", line)
        if not m:
            raise GenError("api.txt:%d: not a prototype: %s" % (lineno, line))
        self.lineno = lineno
        self.ret = m.group(1).strip()
        self.name = m.group(2)
        self.short = self.name[len("MPI_"):]
        self.twin_of = None     # for both functions of a [twin] pair: the _c one
        self.marked_twin = False
        if m.group(4) is not None:
            if m.group(4) != "twin":
                raise GenError("api.txt:%d: unknown mark [%s]" % (lineno, m.group(4)))
            if not self.short.endswith("_c"):
                raise GenError("api.txt:%d: [twin] belongs on the _c line (%s)" % (lineno, self.name))
            self.marked_twin = True
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

    def decl(self, prefix):
        """The prototype with function name prefix+short ("MPI_", "PMPI_", "stub_")."""
        plist = ", ".join(p.text for p in self.params) if self.params else "void"
        return "%s %s%s(%s)" % (self.ret, prefix, self.short, plist)

    def call_args(self):
        # A variadic tail cannot be forwarded in C; only named arguments are passed.
        return ", ".join(p.name for p in self.params if p.name)

    def err_object(self):
        for ctype, kind in ERR_OBJECTS:
            for p in self.params:
                if p.type == ctype:
                    return kind, p.name
        return "MPII_OBJ_NONE", "0"


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
        for ps, pb in zip(small.params, big.params):
            if pb.type == "..." or ps.type == "...":
                raise GenError("%s: variadic functions cannot be twins" % where)
            if ps.type != pb.type and not (ps.type == "int" and pb.type in TWIN_WIDER):
                raise GenError("%s: parameter '%s' is '%s' in the int form and '%s' in the _c form;"
                               " only int -> %s by value may differ"
                               % (where, pb.name, ps.type, pb.type, "/".join(TWIN_WIDER)))
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


def twin_impl(fn):
    """The b_X function name of a twin pair member."""
    return "b_" + fn.twin_of.short[:-2]


def twin_decl(big):
    params = ", ".join(["const char *fn"] + [p.text for p in big.params])
    return "int %s(%s)" % (twin_impl(big), params)


def gen_twin(fn):
    """PMPI_X of a [twin] pair: calls b_X with the name the program called."""
    lines = [fn.decl("PMPI_"), "{"]
    args = ", ".join(['"%s"' % fn.name] + [p.name for p in fn.params])
    lines.append("    return %s(%s);" % (twin_impl(fn), args))
    lines.append("}")
    return lines


def gen_stub(fn):
    if fn.twin_of is not None:
        return "\n".join(gen_twin(fn) + gen_mpi_wrapper(fn)) + "\n"
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
    lines.append(fn.decl("PMPI_") + ' __attribute__((weak, alias("stub_%s")));' % fn.short)
    return "\n".join(lines + gen_mpi_wrapper(fn)) + "\n"


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
    out.append(" * may interpose MPI_X), and a weak PMPI_X aliasing static stub_X, which")
    out.append(" * raises MPI_ERR_UNSUPPORTED_OPERATION. A library source file that defines")
    out.append(" * PMPI_X (strong) replaces the stub at link time; dcfa_api_implemented()")
    out.append(" * tells which did, by comparing the resolved PMPI_X with the stub.")
    out.append(" * The [twin] pairs of api.txt have no stub: PMPI_X and PMPI_X_c call b_X.")
    out.append(" */")
    out.append("#include <stdio.h>")
    out.append("#include <stdlib.h>")
    out.append("")
    out.append('#include "mpi.h"')
    out.append('#include "mpi/mpii_err.h"')
    out.append('#include "binding/api_table.h"')
    out.append('#include "binding/twins.h"')
    out.append("")
    out.append("extern int mpii_entry_lock_on;")
    out.append("extern int mpii_live;")
    out.append("int mpii_not_live(const char *fn);")
    out.append("void mpii_entry_enter(void);")
    out.append("void mpii_entry_leave(void);")
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
        out.append('    { "%s", %s, (void *)PMPI_%s },' % (fn.name, stub, fn.short))
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


def gen_twins_h(funcs):
    out = []
    out.append("/* Generated at build time by tools/gen_api.py from src/binding/api.txt. */")
    out.append("/*")
    out.append(" * The implementations of the [twin] pairs of api.txt: MPI_X and MPI_X_c both")
    out.append(" * call b_X with the _c parameters, fn being \"MPI_X\" or \"MPI_X_c\" (for")
    out.append(" * error messages). The binding file that defines b_X includes this header.")
    out.append(" */")
    out.append("#ifndef DCFA_BINDING_TWINS_H")
    out.append("#define DCFA_BINDING_TWINS_H")
    out.append("")
    out.append('#include "mpi.h"')
    out.append("")
    for fn in funcs:
        if fn.twin_of is fn:
            out.append(twin_decl(fn) + ";")
    out.append("")
    out.append("#endif /* DCFA_BINDING_TWINS_H */")
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
        for name, text in (("stubs.c", gen_stubs_c(funcs)), ("twins.h", gen_twins_h(funcs))):
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
