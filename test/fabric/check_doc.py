#!/usr/bin/env python3
"""check_doc.py FABRIC_H FABRIC_MD: docs/fabric.md's tables against src/fabric/fabric.h.

The header is the truth; the page must list exactly its
  - functions of each table (fab_ops, fab_chan_ops, fab_mr_ops, fab_rma_ops,
    fab_stage_ops): rows "| `table` | `name(args)` | called | ... |", where
    "called" is "always" or the capabilities under which the core calls it;
  - capabilities (enum fab_cap): rows "| `FAB_CAP_X` | ... |";
  - fab_caps fields: rows "| `field` | ... |" of the table headed "`fab_caps` field";
  - upcalls (fab_upcalls): rows "| `name(args)` | ... |" of the table headed "upcall";
and the counts its text states ("The five tables hold 25 functions; 14 of them
are called only under a capability", "six upcalls") must be those of the
header and of its own table. Prints every difference; exit status 1 if any.
"""
import re
import sys

NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10}


def number(word):
    return int(word) if word.isdigit() else NUMBERS.get(word.lower(), -1)


def struct_body(src, name):
    m = re.search(r"typedef struct %s \{(.*?)\n\} %s;" % (name, name), src, re.S)
    if not m:
        sys.exit("check_doc: no struct %s in the header" % name)
    return re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)


def header_facts(path):
    src = open(path).read()
    tables = {}
    for t in ("fab_ops", "fab_chan_ops", "fab_mr_ops", "fab_rma_ops", "fab_stage_ops", "fab_upcalls"):
        tables[t] = re.findall(r"\(\*(\w+)\)\s*\(", struct_body(src, t))
    m = re.search(r"enum fab_cap \{(.*?)\};", src, re.S)
    caps = re.findall(r"\b(FAB_CAP_\w+)\s*=", re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S))
    fields = re.findall(r"(\w+);", struct_body(src, "fab_caps"))
    return tables, caps, fields


def md_tables(path):
    """the page's tables: a list of (header cells, [row cells])"""
    out, cur = [], None
    for line in open(path):
        line = line.rstrip("\n")
        if not line.startswith("|"):
            cur = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cur is None:
            cur = (cells, [])
            out.append(cur)
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
            cur[1].append(cells)
    return out


def code_name(cell):
    m = re.match(r"`(\w+)", cell)
    return m.group(1) if m else None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_doc.py FABRIC_H FABRIC_MD")
    tables, caps, fields = header_facts(sys.argv[1])
    text = open(sys.argv[2]).read()
    errors = []
    doc_fn = {t: [] for t in tables if t != "fab_upcalls"}
    doc_called = {}
    doc_caps, doc_fields, doc_upcalls = [], [], []
    for head, rows in md_tables(sys.argv[2]):
        h0 = head[0].strip("`").lower()
        if head[:3] == ["table", "function", "called"]:
            for r in rows:
                t, fn = code_name(r[0]), code_name(r[1])
                if t not in doc_fn:
                    errors.append("fabric.md: a function of table '%s', which fabric.h does not have" % r[0])
                    continue
                doc_fn[t].append(fn)
                doc_called[(t, fn)] = r[2]
        elif h0 == "capability":
            doc_caps += [code_name(r[0]) for r in rows]
        elif head[0] == "`fab_caps` field":
            doc_fields += [code_name(r[0]) for r in rows]
        elif h0 == "upcall":
            doc_upcalls += [code_name(r[0]) for r in rows]

    def compare(what, header, doc):
        for n in header:
            if n not in doc:
                errors.append("%s: fabric.h has %s, fabric.md does not list it" % (what, n))
        for n in doc:
            if n not in header:
                errors.append("%s: fabric.md lists %s, fabric.h has no such thing" % (what, n))
        for n in set(doc):
            if doc.count(n) > 1:
                errors.append("%s: fabric.md lists %s %d times" % (what, n, doc.count(n)))

    for t in doc_fn:
        compare(t, tables[t], doc_fn[t])
    compare("capabilities", caps, doc_caps)
    compare("fab_caps fields", fields, doc_fields)
    compare("upcalls", tables["fab_upcalls"], doc_upcalls)
    for (t, fn), called in doc_called.items():
        for cap in re.findall(r"FAB_CAP_\w+", called):
            if cap not in caps:
                errors.append("%s.%s: called under %s, which fabric.h does not have" % (t, fn, cap))
        if called != "always" and not re.search(r"FAB_CAP_\w+", called):
            errors.append("%s.%s: called '%s': 'always' or the capabilities" % (t, fn, called))

    # the counts the text states
    nfn = sum(len(v) for t, v in tables.items() if t != "fab_upcalls")
    ntables = len(tables) - 1
    nunder = sum(1 for c in doc_called.values() if c != "always")
    m = re.search(r"The (\w+) tables hold (\d+) functions; (\d+) of them", text)
    if not m:
        errors.append("fabric.md: no sentence 'The N tables hold N functions; N of them ...'")
    else:
        if number(m.group(1)) != ntables:
            errors.append("fabric.md says %s tables, fabric.h has %d" % (m.group(1), ntables))
        if int(m.group(2)) != nfn:
            errors.append("fabric.md says %s functions, fabric.h's tables have %d" % (m.group(2), nfn))
        if int(m.group(3)) != nunder:
            errors.append("fabric.md says %s are called under a capability, its table says %d"
                          % (m.group(3), nunder))
    m = re.search(r"through (\w+) upcalls", text)
    if not m or number(m.group(1)) != len(tables["fab_upcalls"]):
        errors.append("fabric.md: 'through N upcalls' should say %d" % len(tables["fab_upcalls"]))
    for e in errors:
        print(e)
    if errors:
        return 1
    print("fabric.md matches fabric.h: %d tables of %d functions (%d under a capability), "
          "%d capabilities, %d fab_caps fields, %d upcalls"
          % (ntables, nfn, nunder, len(caps), len(fields), len(tables["fab_upcalls"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
