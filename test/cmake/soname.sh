#!/bin/sh
# soname.sh LIBMPI PROGRAM: the library's soname is our own (libdcfampi.so.0,
# not Open MPI's libmpi.so.40), libmpi.so next to it leads to it (for -lmpi),
# and a program linked with -lmpi records libdcfampi.so.0 as needed.
set -eu
LIB=$1 PROG=$2
soname=$(readelf -d "$LIB" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
echo "soname of $LIB: $soname"
[ "$soname" = libdcfampi.so.0 ] || { echo "FAIL: soname is '$soname', expected libdcfampi.so.0"; exit 1; }
dir=$(dirname "$LIB")
[ "$(readlink -f "$dir/libmpi.so")" = "$(readlink -f "$LIB")" ] ||
    { echo "FAIL: $dir/libmpi.so does not lead to $LIB"; exit 1; }
needed=$(readelf -d "$PROG" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "needed by $PROG: $needed"
case " $needed " in *" libdcfampi.so.0 "*) ;; *) echo "FAIL: $PROG does not need libdcfampi.so.0"; exit 1 ;; esac
case " $needed " in *" libmpi.so"*) echo "FAIL: $PROG needs a libmpi.so.*"; exit 1 ;; esac
echo "soname check passed"
