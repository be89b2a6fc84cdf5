#!/usr/bin/env bash
# README's count of implemented MPI functions is the one mpiinfo prints, so it
# cannot go stale: README says "`mpiinfo` counts all M functions" or "`mpiinfo`
# counts N of the M functions"; mpiinfo prints "MPI functions: N of M implemented".
#   tools/lint/check_readme.sh MPIINFO [README]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
mpiinfo=$1
readme=${2:-$top/README.md}
line=$("$mpiinfo" | grep -oE 'MPI functions: [0-9]+ of [0-9]+ implemented')
read -r have all <<< "$(sed -E 's/MPI functions: ([0-9]+) of ([0-9]+).*/\1 \2/' <<< "$line")"
if [ -z "${have:-}" ]; then
    echo "check_readme: mpiinfo printed no 'MPI functions: N of M implemented' line"
    exit 1
fi
said=$(tr '\n' ' ' < "$readme" | grep -oE '`mpiinfo` counts +(all [0-9]+|[0-9]+ of the [0-9]+) functions' | head -1)
if [ -z "$said" ]; then
    echo "check_readme: $readme has no sentence '\`mpiinfo\` counts all M functions' or '... counts N of the M functions'"
    exit 1
fi
read -r n m <<< "$(sed -E 's/.*counts +all ([0-9]+) .*/\1 \1/; s/.*counts +([0-9]+) of the ([0-9]+) .*/\1 \2/' <<< "$said")"
if [ "$n" != "$have" ] || [ "$m" != "$all" ]; then
    want="all $all"
    [ "$have" = "$all" ] || want="$have of the $all"
    echo "check_readme: $readme says '$said'; mpiinfo counts $have of $all: write '\`mpiinfo\` counts $want functions'"
    exit 1
fi
echo "check_readme: README's count ($said) is mpiinfo's ($have of $all)"
