#!/bin/sh
# Overhead of the power-loss FUSE layer: the same fio job (randwrite 4k,
# direct=1, fsync=1, psync) directly on the disk and through the layer, on
# the same file system, then both figures and their ratio.
# Usage: bench/powerloss.sh [runtime, default 10s]. Needs root, /dev/fuse,
# fusermount3 and fio. TMPDIR chooses the disk.
set -eu
cd "$(dirname "$0")/.."
POWERLOSS_BENCH_RUNTIME="${1:-10s}" exec go test ./powerloss -run '^$' -bench Overhead -benchtime 1x -count 1
