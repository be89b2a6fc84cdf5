#!/usr/bin/env python3
"""No cycle among the files of tools/mpirun (docs/launcher.md, "The daemon's structure"):
  - the include graph: a file includes a header of the directory ("x.h");
  - the cross-file call graph: a .c file names (calls, or takes the address of) a function
    that another .c file defines without static.
A file and its header are one module (ad_link.c, ad_link.h). Any cycle of modules in either
graph is a breach: a file that needs one above it gets a callback registered with the
reactor (ad_reactor.h) instead.
    tools/lint/check_mpirun_cycles.py [DIR]      (DIR: tools/mpirun of this tree by default)
    tools/lint/check_mpirun_cycles.py --count [DIR]   prints the figures, never fails
    tools/lint/check_mpirun_cycles.py --selftest      plants cycles and checks they are found
Prints each cycle and exits 1 if there is one."""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
# a definition: at the start of a line, a type and a name, its parameters, then "{"
DEFN = re.compile(r"^(?!static\b|typedef\b|struct\s+\w+\s*\{|enum\b|union\b)"
                  r"[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*(?:__attribute__\s*\(\([^;{]*\)\)\s*)?\{",
                  re.M | re.S)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def code_only(text):
    """text with comments and string/character literals blanked, line breaks kept"""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module(name):
    return os.path.splitext(name)[0]


def graphs(d):
    """(include edges, call edges, calls): edges as {module: {module}}, calls as
    {(from, to): {function}}"""
    files = sorted(f for f in os.listdir(d) if f.endswith((".c", ".h")))
    raw = {f: open(os.path.join(d, f), encoding="utf-8", errors="replace").read() for f in files}
    inc = {}
    for f in files:
        for h in INCLUDE.findall(raw[f]):
            if h in raw and module(h) != module(f):
                inc.setdefault(module(f), set()).add(module(h))
    code = {f: code_only(raw[f]) for f in files if f.endswith(".c")}
    owner = {}
    for f, text in code.items():
        for m in DEFN.finditer(text):
            if m.group(1) not in KEYWORDS:
                owner[m.group(1)] = module(f)
    calls, names = {}, {}
    for f, text in code.items():
        for ident in set(IDENT.findall(text)):
            o = owner.get(ident)
            if o is not None and o != module(f):
                calls.setdefault(module(f), set()).add(o)
                names.setdefault((module(f), o), set()).add(ident)
    return inc, calls, names


def cycles(edges):
    """the strongly connected components of more than one module (Tarjan)"""
    index, low, stack, on, out = {}, {}, [], set(), []
    nodes = set(edges) | {v for vs in edges.values() for v in vs}

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def pairs(edges):
    """two-module cycles: a calls b and b calls a"""
    return sorted({tuple(sorted((a, b))) for a, bs in edges.items() for b in bs
                   if a in edges.get(b, ())})


def check(d, quiet=False):
    inc, calls, names = graphs(d)
    bad = 0
    for kind, edges in (("include", inc), ("call", calls)):
        for comp in cycles(edges):
            bad += 1
            if not quiet:
                print(f"{d}: {kind} cycle among {', '.join(comp)}")
                if kind == "call":
                    for a in comp:
                        for b in comp:
                            if (a, b) in names:
                                print(f"    {a} -> {b}: {', '.join(sorted(names[(a, b)]))}")
    return bad


def count(d):
    inc, calls, _ = graphs(d)
    print(f"include cycles (components): {len(cycles(inc))}")
    print(f"call cycles (components): {len(cycles(calls))}; modules in them: "
          f"{sum(len(c) for c in cycles(calls))}")
    p = pairs(calls)
    print(f"two-file call cycles: {len(p)} {' '.join('(' + a + ',' + b + ')' for a, b in p)}")


def selftest():
    def tree(files):
        d = tempfile.mkdtemp(prefix="mpirun_cycles.")
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        return d

    good = tree({
        "a.h": "#include \"b.h\"\nint a_f(void);\n",
        "a.c": "#include \"a.h\"\nint a_f(void)\n{\n    return b_f(); /* c_f() */\n}\n",
        "b.h": "int b_f(void);\n",
        "b.c": "#include \"b.h\"\nstatic int b_g(void) { return 1; }\nint b_f(void)\n{\n"
               "    return b_g();\n}\n",
    })
    call = tree({
        "a.c": "int a_f(void)\n{\n    return b_f();\n}\n",
        "b.c": "static int b_g(int (*cb)(void)) { return cb(); }\n"
               "int b_f(void)\n{\n    return b_g(a_f);\n}\n",
    })
    ring = tree({
        "a.c": "int a_f(void) { return b_f(); }\n",
        "b.c": "int b_f(void) { return c_f(); }\n",
        "c.c": "void c_f(int x)\n{\n    if (x)\n        a_f();\n}\n",
    })
    inc = tree({"a.h": "#include \"b.h\"\n", "b.h": "#include \"a.h\"\n", "a.c": "int x;\n"})
    ok = (check(good, True) == 0 and check(call, True) == 1 and check(ring, True) == 1
          and check(inc, True) == 1)
    for d in (good, call, ring, inc):
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
    print("selftest", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main(argv):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpirun")
    if argv[1:2] == ["--selftest"]:
        return selftest()
    if argv[1:2] == ["--count"]:
        count(argv[2] if len(argv) > 2 else here)
        return 0
    d = argv[1] if len(argv) > 1 else here
    return 1 if check(d) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
