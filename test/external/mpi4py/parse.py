#!/usr/bin/env python3
"""Sum the per-rank unittest reports of mpi4py's suite (written by run.sh).

usage: parse.py --xfail FILE OUTDIR NP [NP ...]

OUTDIR/npN/MODULE/rank.R is rank R's verbose unittest report (stderr of
test/main.py -v) for one test module, OUTDIR/npN/MODULE/status the launcher's
exit status, OUTDIR/npN/seconds the time of the rank count. A test failed at a
rank count if it failed or raised on any rank. Failures whose test id matches
a line of the xfail file (fnmatch pattern, then "# reason") are expected; a
module that could not be imported, a module with a rank that did not finish
(crash, hang, timeout: one failure) and any other failure are not. Lines
"skip-module NAME # reason" name modules run.sh does not run. Prints one line
per rank count and ends with "N passed, N failed"; exit status 1 iff something
failed unexpectedly.
"""
import fnmatch
import os
import re
import sys

HEADER = re.compile(r"^(FAIL|ERROR): (\S+) \(([^)\s]+)\)")
VERBOSE = re.compile(r"^(\w+) \(([\w.]+)\)")
RAN = re.compile(r"^Ran (\d+) tests? in ")
RESULT = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")


def read_xfail(path, skipped_modules):
    entries = []
    if not path or not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reason = line.partition("#")
            pattern = pattern.strip()
            if not reason.strip():
                sys.stderr.write("%s:%d: an expected failure needs a reason after '#'\n"
                                 % (path, lineno))
                sys.exit(2)
            if pattern.startswith("skip-module"):
                skipped_modules.append((pattern.split()[1], reason.strip()))
                continue
            entries.append((pattern, reason.strip()))
    return entries


def parse_rank(path):
    """Returns dict: finished, run, failures, errors, skipped, failed {id: message}, ok set."""
    r = {"finished": False, "run": 0, "failures": 0, "errors": 0, "skipped": 0,
         "failed": {}, "ok": set()}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return r
    current = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = HEADER.match(line)
        if m:
            tid = m.group(3)
            if m.group(2) == "setUpClass" or m.group(2) == "setUpModule":
                tid = m.group(3) + "." + m.group(2)
            # the message: the last non-blank line of the traceback block
            msg = ""
            j = i + 1
            while j < len(lines) and not lines[j].startswith("=" * 20) \
                    and not RAN.match(lines[j]):
                if lines[j].strip() and not lines[j].startswith("-" * 20):
                    msg = lines[j].strip()
                j += 1
            r["failed"].setdefault(tid, msg[:200])
            i = j
            continue
        m = VERBOSE.match(line)
        if m:
            current = m.group(2)
        if current and " ... " in line:
            res = line.rsplit(" ... ", 1)[1].strip()
            if res == "ok":
                r["ok"].add(current)
            current = None
        m = RAN.match(line)
        if m:
            r["run"] = int(m.group(1))
        m = RESULT.match(line)
        if m and r["run"] or (m and line.startswith("OK")):
            r["finished"] = True
            for part in (m.group(2) or "").split(","):
                k, _, v = part.strip().partition("=")
                if k in ("failures", "errors", "skipped") and v.isdigit():
                    r[k] = int(v)
        i += 1
    return r


def xfail_reason(tid, entries):
    if tid.startswith("unittest.loader."):
        return None     # a module that does not import is never expected
    for pattern, reason in entries:
        if fnmatch.fnmatchcase(tid, pattern):
            return reason
    return None


def main(argv):
    args = argv[1:]
    xfile = None
    if args[:1] == ["--xfail"]:
        xfile = args[1]
        args = args[2:]
    outdir, nps = args[0], args[1:]
    skipped_modules = []
    entries = read_xfail(xfile, skipped_modules)
    total_pass = total_fail = total_xfail = total_skip = 0
    xpassed = set()
    for np in nps:
        d = os.path.join(outdir, "np%s" % np)
        secs = open(os.path.join(d, "seconds")).read().strip() \
            if os.path.exists(os.path.join(d, "seconds")) else "?"
        if os.path.exists(os.path.join(d, "notrun")):
            print("np=%s: not run (time budget)" % np)
            total_fail += 1
            continue
        run = failures = errors = skipped = 0
        failed = {}
        ok_everywhere = set()
        unfinished = []
        for m in sorted(os.listdir(d)):
            md = os.path.join(d, m)
            if not os.path.isdir(md):
                continue
            status = open(os.path.join(md, "status")).read().strip() \
                if os.path.exists(os.path.join(md, "status")) else "?"
            ranks = [parse_rank(os.path.join(md, "rank.%d" % k)) for k in range(int(np))]
            if any(not r["finished"] for r in ranks):
                unfinished.append((m, status,
                                   [k for k, r in enumerate(ranks) if not r["finished"]]))
            for r in ranks:
                for tid, msg in r["failed"].items():
                    failed.setdefault(tid, msg)
            ok_everywhere |= set.intersection(*[r["ok"] for r in ranks])
            run += ranks[0]["run"]
            failures += ranks[0]["failures"]
            errors += ranks[0]["errors"]
            skipped += ranks[0]["skipped"]
        expected = {t: xfail_reason(t, entries) for t in failed}
        unexpected = sorted(t for t, why in expected.items() if why is None)
        nx = sum(1 for why in expected.values() if why is not None)
        print("np=%s: %d tests run, %d failures, %d errors, %d skips on rank 0; "
              "%d failed on some rank (%d expected: xfail.txt); %d modules did not finish; %s s"
              % (np, run, failures, errors, skipped, len(failed), nx, len(unfinished), secs))
        for t in unexpected:
            print("  FAIL %s: %s" % (t, failed[t]))
        for m, status, ks in unfinished:
            print("  FAIL %s (np=%s): rank(s) %s did not finish (launcher status %s): crash, hang"
                  " or timeout; see %s" % (m, np, ",".join(map(str, ks)), status,
                                          os.path.join(d, m)))
        total_pass += max(0, run - skipped - len(failed))
        total_fail += len(unexpected) + len(unfinished)
        total_xfail += nx
        total_skip += skipped
        for pattern, _ in entries:
            if not any(c in pattern for c in "*?[") and pattern in ok_everywhere:
                xpassed.add(pattern)
    for m, why in skipped_modules:
        print("  not run: module %s (%s)" % (m, why))
    for t in sorted(xpassed):
        print("  XPASS %s: listed in xfail.txt but passed; remove the line" % t)
    print("%d passed, %d failed" % (total_pass, total_fail))
    print("%d xfail, %d unexpectedly passed, %d skipped, %d modules not run"
          % (total_xfail, len(xpassed), total_skip, len(skipped_modules)))
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
