#!/usr/bin/env bash
# Check that every C line changed since the format base is formatted as .clang-format says.
#
#   tools/lint/check_format.sh [BASE]
#
# BASE defaults to the commit named in tools/lint/format-base: lines older than it are
# left as they are (reformatting the whole tree at once would only make history harder
# to read); every line added or changed after it must be what clang-format makes of it.
# Exit 0: all formatted; 1: some are not (the diff that would fix them is printed; run
# `git clang-format BASE` to apply it); 77: cannot check here (no clang-format, not a git
# checkout, BASE not in the history): CTest counts that as skipped, not passed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
base=${1:-$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' tools/lint/format-base | head -n 1)}
cf=""
for c in clang-format clang-format-14 clang-format-15 clang-format-16; do
    command -v "$c" > /dev/null && { cf=$c; break; }
done
[ -n "$cf" ] || { echo "check_format: no clang-format (apt-get install clang-format)"; exit 77; }
git rev-parse --git-dir > /dev/null 2>&1 || { echo "check_format: not a git checkout"; exit 77; }
git cat-file -e "$base^{commit}" 2> /dev/null ||
    { echo "check_format: base $base is not in this clone's history"; exit 77; }
# git clang-format compares the work tree (committed or not) with BASE, only changed lines
out=$(git clang-format --binary "$(command -v "$cf")" --extensions c,h --diff "$base" -- src tools include test bench 2>&1)
case "$out" in
"" | *"no modified files to format"* | *"clang-format did not modify any files"*)
    echo "check_format: lines changed since ${base:0:12} are formatted"
    exit 0
    ;;
esac
printf '%s\n' "$out"
n=$(grep -c '^+[^+]' <<< "$out")
echo "check_format: $n lines changed since ${base:0:12} are not formatted (fix: git clang-format ${base:0:12})"
exit 1
