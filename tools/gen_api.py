#!/usr/bin/env python3
"""Generate the API glue of DCFA-MPI from two tables.

Inputs
  src/binding/api.txt     one C prototype per line, "<ret> MPI_<Name>(<params>)"
  src/include/dtypes.def  the predefined datatypes (DTYPE/PAIRTYPE/DTYPE_ALIAS)

Outputs
  include/mpi.h           only the text between the GENERATED markers
  src/binding/stubs.c     whole file: for every function X of api.txt
                            - a weak MPI_X that tail-calls PMPI_X,
                            - a weak PMPI_X aliasing a static stub_X that
                              reports MPI_ERR_UNSUPPORTED_OPERATION,
                            - dcfa_api_table[] / dcfa_api_count /
                              dcfa_api_implemented() for mpiinfo.

Usage: tools/gen_api.py [--check]   (--check: exit 1 if an output is stale)
Plain python3, no third-party modules; re-running is idempotent.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API_TXT = os.path.join(ROOT, "src", "binding", "api.txt")
DTYPES_DEF = os.path.join(ROOT, "src", "include", "dtypes.def")
MPI_H = os.path.join(ROOT, "include", "mpi.h")
STUBS_C = os.path.join(ROOT, "src", "binding", "stubs.c")

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


class Func:
    def __init__(self, line, lineno):
        m = re.match(r"^(.+?)\s*\b(MPI_\w+)\s*\((.*)\)\s*$", line)
        if not m:
            raise GenError("api.txt:%d: not a prototype: %s" % (lineno, line))
        self.ret = m.group(1).strip()
        self.name = m.group(2)
        self.short = self.name[len("MPI_"):]
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


def gen_stub(fn):
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
    lines.append(fn.decl("MPI_") + " __attribute__((weak));")
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
    return "\n".join(lines) + "\n"


def gen_stubs_c(funcs):
    out = []
    out.append("/* Generated by tools/gen_api.py from src/binding/api.txt. Do not edit. */")
    out.append("/*")
    out.append(" * For every MPI function X: a weak MPI_X that calls PMPI_X (a profiling tool")
    out.append(" * may interpose MPI_X), and a weak PMPI_X aliasing static stub_X, which")
    out.append(" * raises MPI_ERR_UNSUPPORTED_OPERATION. A library source file that defines")
    out.append(" * PMPI_X (strong) replaces the stub at link time; dcfa_api_implemented()")
    out.append(" * tells which did, by comparing the resolved PMPI_X with the stub.")
    out.append(" */")
    out.append("#include <stdio.h>")
    out.append("#include <stdlib.h>")
    out.append("")
    out.append('#include "mpi.h"')
    out.append('#include "mpi/mpii_err.h"')
    out.append('#include "binding/api_table.h"')
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
        out.append('    { "%s", (void *)stub_%s, (void *)PMPI_%s },'
                   % (fn.name, fn.short, fn.short))
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
    check = "--check" in argv[1:]
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

    stale = []
    if write_if_changed(MPI_H, header, check):
        stale.append(MPI_H)
    if write_if_changed(STUBS_C, gen_stubs_c(funcs), check):
        stale.append(STUBS_C)
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
