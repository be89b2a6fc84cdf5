#!/usr/bin/env python3
"""The layers of docs/architecture.md, checked on the sources:
  - src/util, src/fabric, src/core and src/assist know nothing of MPI: they include
    neither <mpi.h> nor a header of src/mpi or src/binding, and their code (comments and
    string literals aside) names no MPI_ identifier;
  - src/binding only checks arguments and converts handles: it includes no header of
    src/core or src/fabric and calls no core_ or fab_ function; what it needs is a declared
    interface of src/mpi.
    tools/lint/check_layers.py [SRC]       (SRC: the source tree's src/, by default this one's)
Prints each breach as file:line and exits 1 if there is one."""
import os
import re
import sys

NO_MPI = ("util", "fabric", "core", "assist")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


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
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(top, layer):
    for d, _, files in os.walk(os.path.join(top, layer)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def breaches(top):
    for layer in NO_MPI + ("binding",):
        for path in sources(top, layer):
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            rel = os.path.relpath(path, os.path.dirname(top))
            for no, line in enumerate(text.split("\n"), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if layer in NO_MPI and (inc == "mpi.h" or inc.startswith(("mpi/", "binding/"))):
                    yield f"{rel}:{no}: includes {inc}: {layer} knows nothing of MPI"
                if layer == "binding" and inc.startswith(("core/", "fabric/")):
                    yield f"{rel}:{no}: includes {inc}: the binding calls src/mpi only"
            for no, line in enumerate(code_only(text).split("\n"), 1):
                if line.lstrip().startswith("#"):
                    continue
                if layer in NO_MPI:
                    for name in re.findall(r"\bMPI_\w+", line):
                        yield f"{rel}:{no}: names {name}: {layer} knows nothing of MPI"
                else:
                    for name in re.findall(r"\b((?:core|fab)_\w+)\s*\(", line):
                        yield f"{rel}:{no}: calls {name}: the binding calls src/mpi only"


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), "..", "..", "src"))
    found = list(breaches(top))
    for b in found:
        print(b)
    if found:
        print(f"check_layers: {len(found)} breach(es) of the layering (docs/architecture.md)")
        return 1
    print("check_layers: util, fabric, core and assist name no MPI; the binding calls src/mpi only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
