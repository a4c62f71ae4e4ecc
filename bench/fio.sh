#!/usr/bin/env bash
# bench/fio.sh — Debian's fio 3.33 against `writepath fio` on the same files,
# same job, alternating, PAIRS pairs, in two cases:
#   fresh       files removed before every run: each tool lays them out
#               itself (fallocate, unwritten extents), as a first run does;
#   prewritten  files written in full once before the case: both tools
#               reuse them as is.
# For every run it prints IOPS, p99 clat and whole-process CPU seconds
# (user+sys from the OS via /usr/bin/time, not self-reported), then the
# medians and the ratios writepath/fio. Targets (issue 2): IOPS >= 0.95x,
# p99 clat <= 1.1x, CPU seconds per I/O <= 1.5x.
#
#   bench/fio.sh [dir]        env: RUNTIME=20 SIZE=1G NUMJOBS=4 PAIRS=3
#                                  ENGINE=libaio (or io_uring: both tools
#                                  then run the job on their io_uring engine)
#                                  WRITEPATH=path/to/writepath (else built)
#   SUMMARY_ONLY=1 bench/fio.sh [dir]   reprint the last run's tables
#
# Each fresh-case run first deletes 4 fragmented 1 GiB files; on a busy
# disk that takes as long as the run, so RUNTIME=15 keeps the whole bench
# near 10 minutes (SIZE=256M near 5).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-/var/tmp/writepath-fio-bench}
RUNTIME=${RUNTIME:-20}
ENGINE=${ENGINE:-libaio}
SIZE=${SIZE:-1G}
NUMJOBS=${NUMJOBS:-4}
PAIRS=${PAIRS:-3}
FIO=${FIO:-/usr/bin/fio}
OUT=$DIR/results
mkdir -p "$DIR" "$OUT"

if [[ "$(stat -f -c %T "$DIR")" == tmpfs ]]; then
	echo "fio.sh: $DIR is on tmpfs, which refuses O_DIRECT; give a disk-backed directory" >&2
	exit 1
fi
if [[ -z "${WRITEPATH:-}" ]]; then
	WRITEPATH=$DIR/writepath
	go build -o "$WRITEPATH" ./cmd/writepath
fi

# The issue's job, fio syntax, given verbatim to both tools.
JOB=(--name=mysql_sim --ioengine="$ENGINE" --iodepth=32 --rw=randwrite --bs=4k
	--size="$SIZE" --numjobs="$NUMJOBS" --runtime="$RUNTIME" --time_based
	--group_reporting --direct=1 --fsync=4 --output-format=json --directory="$DIR")

remove_files() { rm -f "$DIR"/mysql_sim.*.*; }

# prewrite fills every job file completely (sequential 1 MiB direct writes)
# so that both tools find files of the right size and reuse them as is.
prewrite() {
	remove_files
	"$FIO" --name=mysql_sim --rw=write --bs=1m --size="$SIZE" --numjobs="$NUMJOBS" \
		--direct=1 --ioengine=libaio --iodepth=8 --directory="$DIR" --output=/dev/null
	sync
}

# run TOOL CASE N: one measured run; writes $OUT/CASE.TOOL.N.{json,time}.
run() {
	local tool=$1 case=$2 n=$3 bin
	[[ $case == fresh ]] && remove_files
	sync
	bin=$FIO
	[[ $tool == writepath ]] && bin="$WRITEPATH fio"
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S" -o "$OUT/$case.$tool.$n.time" $bin "${JOB[@]}" \
		--output="$OUT/$case.$tool.$n.json" 2>"$OUT/$case.$tool.$n.err"
}

# stats CASE TOOL N: "iops p99_usec cpu_s ios"
stats() {
	local f=$OUT/$1.$2.$3
	local iops p99 ios cpu
	iops=$(jq '.jobs[0].write.iops' "$f.json")
	p99=$(jq '.jobs[0].write.clat_ns.percentile["99.000000"] / 1000' "$f.json")
	ios=$(jq '.jobs[0].write.total_ios' "$f.json")
	cpu=$(awk '{print $1 + $2}' "$f.time")
	echo "$iops $p99 $cpu $ios"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

bench_case() {
	local case=$1 i first second
	[[ $case == prewritten ]] && prewrite
	for ((i = 1; i <= PAIRS; i++)); do
		# Alternate who goes first, so drift in the device hits both.
		if ((i % 2)); then first=fio second=writepath; else first=writepath second=fio; fi
		run "$first" "$case" "$i"
		run "$second" "$case" "$i"
	done
	summary "$case"
}

# summary CASE prints every run, the medians, the ratio of the medians and
# the median of the per-pair ratios (robust to drift between pairs).
summary() {
	local case=$1 tool i iops p99 cpu ios per
	rm -f "$OUT/$case".*.rows
	printf '\n== %s files: job %s, %s x %s, runtime %ss\n' "$case" mysql_sim "$NUMJOBS" "$SIZE" "$RUNTIME"
	printf '%-10s %4s %12s %12s %10s %14s\n' tool run IOPS p99_clat_us cpu_s cpu_us_per_io
	for tool in fio writepath; do
		for ((i = 1; i <= PAIRS; i++)); do
			read -r iops p99 cpu ios <<<"$(stats "$case" "$tool" "$i")"
			per=$(awk -v c="$cpu" -v n="$ios" 'BEGIN {print c * 1e6 / n}')
			printf '%-10s %4d %12.0f %12.0f %10.2f %14.2f\n' "$tool" "$i" "$iops" "$p99" "$cpu" "$per"
			echo "$iops $p99 $per" >>"$OUT/$case.$tool.rows"
		done
	done
	local -a med pair
	local col f w
	for col in 1 2 3; do
		f=$(awk -v c=$col '{print $c}' "$OUT/$case.fio.rows" | median)
		w=$(awk -v c=$col '{print $c}' "$OUT/$case.writepath.rows" | median)
		med[col]="$f $w $(awk -v a="$w" -v b="$f" 'BEGIN {printf "%.3f", a / b}')"
		pair[col]=$(paste -d' ' "$OUT/$case.writepath.rows" "$OUT/$case.fio.rows" |
			awk -v c=$col '{print $c / $(c + 3)}' | median)
	done
	local fio_iops wp_iops r_iops fio_p99 wp_p99 r_p99 fio_cpu wp_cpu r_cpu
	read -r fio_iops wp_iops r_iops <<<"${med[1]}"
	read -r fio_p99 wp_p99 r_p99 <<<"${med[2]}"
	read -r fio_cpu wp_cpu r_cpu <<<"${med[3]}"
	printf 'median fio:       IOPS %.0f  p99 clat %.0f us  CPU %.2f us/IO\n' "$fio_iops" "$fio_p99" "$fio_cpu"
	printf 'median writepath: IOPS %.0f  p99 clat %.0f us  CPU %.2f us/IO\n' "$wp_iops" "$wp_p99" "$wp_cpu"
	printf 'ratio of medians writepath/fio: IOPS %s (target >= 0.95)  p99 clat %s (<= 1.10)  CPU/IO %s (<= 1.50)\n' "$r_iops" "$r_p99" "$r_cpu"
	printf 'median of pair ratios:          IOPS %.3f  p99 clat %.3f  CPU/IO %.3f\n' "${pair[1]}" "${pair[2]}" "${pair[3]}"
}

if [[ "${SUMMARY_ONLY:-}" == 1 ]]; then # reprint the last results without running
	summary fresh
	summary prewritten
	exit 0
fi
echo "fio.sh: $(nproc) CPUs, $("$FIO" --version), $("$WRITEPATH" version | head -1), dir $DIR ($(stat -f -c %T "$DIR"))"
bench_case fresh
bench_case prewritten
remove_files
