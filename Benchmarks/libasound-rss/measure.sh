#!/bin/sh
# Median maximum RSS of 15 runs per mode of rss.c (docs/decisions.md).
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/rss" "$(dirname "$0")/rss.c" -ldl
for mode in 0 1 2; do
    for i in $(seq 15); do "$dir/rss" $mode 2>/dev/null | tail -1 | awk '{print $4}'; done |
        sort -n | awk -v m=$mode '{a[NR]=$1} END {print "mode", m, "median", a[int((NR+1)/2)], "kB, min", a[1], "max", a[NR]}'
done
