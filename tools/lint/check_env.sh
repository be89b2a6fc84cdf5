#!/usr/bin/env bash
# Every DCFA_* environment variable the library, mpirun or the assist daemon reads (a
# "DCFA_..." string in src/ or tools/) is in the one registry (src/util/tunables.c), as
# `mpiinfo --all` lists it.
#   tools/lint/check_env.sh MPIINFO
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
mpiinfo=$1
listed=$("$mpiinfo" --all | awk '$1 ~ /^DCFA_[A-Z0-9_]+$/ && $2 == "=" { print $1 }' | sort -u)
used=$(grep -rhoE '"DCFA_[A-Z0-9_]*[A-Z0-9]"' "$top/src" "$top/tools" --include='*.c' --include='*.h' |
    tr -d '"' | sort -u)
fail=0
for v in $(comm -23 <(printf '%s\n' "$used") <(printf '%s\n' "$listed")); do
    echo "check_env: $v is read in src/ or tools/ but not in the registry (src/util/tunables.c)"
    fail=1
done
n=$(printf '%s\n' "$listed" | grep -c .)
[ $fail = 0 ] && echo "check_env: the $n variables of mpiinfo --all cover every DCFA_* name in src/ and tools/"
exit $fail
