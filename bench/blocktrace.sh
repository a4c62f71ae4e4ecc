#!/usr/bin/env bash
# bench/blocktrace.sh — what eBPF block and syscall tracing costs.
#
# 1. The fio engine's IOPS with and without tracing on the field's job
#    (`writepath run fio --ioengine=libaio --iodepth=32 --rw=randwrite --bs=4k
#    --numjobs=4 --direct=1 --fsync=4 --group_reporting`, pre-written files),
#    through the embedded fabric as users run it: "off" is --no-trace,
#    "block" the default (the block layer of the data dir's disk: a fio run
#    has no process of interest), "all" adds --trace-comm writepath (the run
#    process's own syscalls: the raw syscall tracepoints then fire for every
#    syscall on the host, the dearest setting). Each round runs the three in
#    a rotated order (off block all, block all off, all off block, ...), so
#    drift hits all alike. Per run: IOPS, p99, whole-process CPU
#    (user+sys from /usr/bin/time, the programs' load and BTF parse
#    included) per I/O and the block requests traced; then per mode the
#    medians, the ratio of the medians to off, the median of the per-round
#    ratios and their min..max spread (target: block/off IOPS >= 0.97x).
# 2. The same job's seconds with and without tracing inside one run
#    (ALT seconds, default 120): one `--no-trace` run at 250 ms intervals
#    while bench/tracetoggle attaches the same programs to the data dir's
#    disk for SEG seconds (default 2), detaches them for as long, in ABBA
#    blocks (on off off on), reading the counts every second as a worker
#    does. Only the run's intervals wholly inside a segment count (not
#    those of an attach or detach). Printed: IOPS in traced
#    and untraced seconds, their ratio, and the ratio per ABBA block
#    (median, min..max): the drift of a shared machine, which moves
#    separate runs by half, cancels within a block. Then the same with the
#    run process's syscalls traced (-comm writepath). The programs' load
#    (kernel BTF decode, once per worker process) is not in these seconds;
#    part 1's CPU per I/O has it.
# 3. The programs' own CPU per block request, from the kernel's BPF
#    run-time statistics (BenchmarkTraceCost: 8 writers of 4 KiB O_DIRECT
#    blocks): ns per request = CPU ms per million requests; and one Tick's
#    cost in user space (BenchmarkTick, 12,000 buckets).
#
#   bench/blocktrace.sh [dir]   env: RUNTIME=15 SIZE=512M NUMJOBS=4 ROUNDS=3
#                                    ALT=120 SEG=2 INTERVAL=250ms (ALT=0 skips part 2)
#                                    WRITEPATH=path/to/writepath (else built)
# Needs root. The machine's load is printed before and after: a loaded
# machine gives "busy" figures, say so when quoting them.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-/var/tmp/writepath-trace-bench}
RUNTIME=${RUNTIME:-15}
SIZE=${SIZE:-512M}
NUMJOBS=${NUMJOBS:-4}
ROUNDS=${ROUNDS:-3}
ALT=${ALT:-120}
SEG=${SEG:-2}
INTERVAL=${INTERVAL:-250ms}
MODES=(off block all)
OUT=$DIR/results
mkdir -p "$DIR" "$OUT"
if [[ -z "${WRITEPATH:-}" ]]; then
	WRITEPATH=$DIR/writepath
	go build -o "$WRITEPATH" ./cmd/writepath
fi

JOB=(--name=mysql_sim --ioengine=libaio --iodepth=32 --rw=randwrite --bs=4k --size="$SIZE"
	--numjobs="$NUMJOBS" --runtime="$RUNTIME" --time_based --group_reporting --direct=1 --fsync=4
	--directory="$DIR")

load() { awk -v n="$(nproc)" '{printf "load %s %s %s on %d CPUs (%s)", $1, $2, $3, n, ($1 > n / 2) ? "busy" : "quiet"}' /proc/loadavg; }

# prewrite fills the job files once, so every run reuses them as they are.
prewrite() {
	rm -f "$DIR"/mysql_sim.*.*
	fio --name=mysql_sim --rw=write --bs=1m --size="$SIZE" --numjobs="$NUMJOBS" --direct=1 \
		--ioengine=libaio --iodepth=8 --directory="$DIR" --output=/dev/null
	sync
}

# run MODE N: one measured run; writes $OUT/MODE.N.{json,time,err}.
run() {
	local mode=$1 n=$2 flags=(--no-trace)
	[[ $mode == block ]] && flags=()
	[[ $mode == all ]] && flags=(--trace-comm writepath)
	sync
	/usr/bin/time -f "%U %S" -o "$OUT/$mode.$n.time" "$WRITEPATH" run fio --json --show none \
		--db "$OUT/$mode.$n.db" --data-dir "$DIR" "${flags[@]}" "${JOB[@]}" \
		>"$OUT/$mode.$n.json" 2>"$OUT/$mode.$n.err"
	rm -f "$OUT/$mode.$n.db"
}

# stats MODE N: "iops p99_ms cpu_us_per_io requests"
stats() {
	local f=$OUT/$1.$2
	local iops p99 ios reqs cpu
	iops=$(jq '[.phases[] | .merged.ops[] | select(.op == "write")][0].ops_per_sec' "$f.json")
	p99=$(jq '[.phases[] | .merged.ops[] | select(.op == "write")][0].p99_ms' "$f.json")
	ios=$(jq '[.phases[] | .merged.ops[] | select(.op == "write")][0].count' "$f.json")
	reqs=$(jq '[.phases[] | .merged.series[]? | select(.metric == "d2c") | .count] | add // 0' "$f.json")
	cpu=$(awk '{print $1 + $2}' "$f.time")
	awk -v i="$iops" -v p="$p99" -v c="$cpu" -v n="$ios" -v r="$reqs" 'BEGIN {printf "%.0f %.3f %.2f %d\n", i, p, c * 1e6 / n, r}'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

summary() {
	local mode i iops p99 cpu reqs
	printf '\n== field job, %s x %s pre-written, runtime %ss, %d rounds (rotated order)\n' "$NUMJOBS" "$SIZE" "$RUNTIME" "$ROUNDS"
	printf '%-6s %4s %10s %10s %14s %12s\n' trace run IOPS p99_ms cpu_us_per_io block_reqs
	for mode in "${MODES[@]}"; do
		rm -f "$OUT/$mode.rows"
		for ((i = 1; i <= ROUNDS; i++)); do
			read -r iops p99 cpu reqs <<<"$(stats "$mode" "$i")"
			printf '%-6s %4d %10.0f %10.3f %14.2f %12d\n' "$mode" "$i" "$iops" "$p99" "$cpu" "$reqs"
			echo "$iops $p99 $cpu $reqs" >>"$OUT/$mode.rows"
		done
	done
	local col off on ratios name
	for mode in block all; do
		echo "-- $mode vs off"
		for col in 1 2 3; do
			name=$(echo "IOPS p99_ms cpu_us/io" | cut -d' ' -f$col)
			off=$(awk -v c=$col '{print $c}' "$OUT/off.rows" | median)
			on=$(awk -v c=$col '{print $c}' "$OUT/$mode.rows" | median)
			ratios=$(paste -d' ' "$OUT/$mode.rows" "$OUT/off.rows" | awk -v c=$col '{print $c / $(c + 4)}')
			printf '%-10s off %10.3f  %-5s %10.3f  ratio of medians %.3f  round ratios median %.3f (min %.3f max %.3f)\n' \
				"$name" "$off" "$mode" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN {print a / b}')" "$(echo "$ratios" | median)" \
				"$(echo "$ratios" | sort -g | head -1)" "$(echo "$ratios" | sort -g | tail -1)"
		done
	done
	echo "target: block/off IOPS >= 0.97"
}

echo "blocktrace.sh: $(nproc) CPUs, kernel $(uname -r), $("$WRITEPATH" version | head -1), dir $DIR ($(stat -f -c %T "$DIR")), $(load)"
prewrite
for ((i = 1; i <= ROUNDS; i++)); do
	for ((k = 0; k < ${#MODES[@]}; k++)); do
		run "${MODES[(i - 1 + k) % ${#MODES[@]}]}" "$i"
	done
done
((ROUNDS > 0)) && summary

# alt MODE: part 2 for block or all; prints one line.
alt() {
	local mode=$1 flags=() id
	[[ $mode == all ]] && flags=(-comm writepath)
	local t=$OUT/alt.$mode
	rm -f "$t".*
	"$DIR/tracetoggle" -devices "$DISK" -seg "${SEG}s" -for "$((ALT + 3))s" "${flags[@]}" >"$t.toggles" 2>"$t.toggle.err" &
	local tp=$!
	until grep -q ready "$t.toggles" 2>/dev/null; do
		kill -0 "$tp" 2>/dev/null || { cat "$t.toggle.err" >&2; return 1; }
		sleep 0.1
	done
	"$WRITEPATH" run fio --json --show none --db "$t.db" --data-dir "$DIR" --no-trace --interval "$INTERVAL" "${JOB[@]/--runtime=*/--runtime=$ALT}" \
		>"$t.json" 2>"$t.err"
	wait "$tp"
	id=$(jq -r .run_id "$t.json")
	# Each interval: start and end in seconds since the epoch, writes done.
	"$WRITEPATH" runs show "$id" --db "$t.db" --json | jq -r '
		def secs: (sub("\\.[0-9]+Z$"; "Z") | fromdate) + ((capture("\\.(?<f>[0-9]+)Z$").f // "0") | "0." + . | tonumber);
		.intervals[] | select(.phase == "run")
		| [(.start | secs), (.end | secs), ([.stats[] | select(.op == "write") | .count // 0 | tonumber] | add // 0)] | @tsv' >"$t.intervals"
	awk -v mode="$mode" -v seg="$SEG" '
		# Segments: from an "on" or "off" line to the next switch or end.
		FNR == NR {
			if ($2 == "on" || $2 == "off") { from[n] = $1 / 1e9; st[n] = $2; open = 1 }
			else if (($2 == "switch" || $2 == "end") && open) { to[n++] = $1 / 1e9; open = 0 }
			next
		}
		{
			for (k = 0; k < n; k++) if (from[k] <= $1 && $2 <= to[k]) break
			if (k >= n) next
			ops[k] += $3; secs[k] += $2 - $1
		}
		END {
			for (k = 0; k < n; k++) if (secs[k] > 0) { tot[st[k]] += ops[k]; ts[st[k]] += secs[k] }
			if (!ts["on"] || !ts["off"]) { print mode ": no whole intervals in both states"; exit 1 }
			# ABBA blocks: segments 4j (on), 4j+1, 4j+2 (off), 4j+3 (on).
			nb = 0
			for (j = 0; 4 * j + 3 < n; j++) {
				on = 0; onS = 0; off = 0; offS = 0
				for (k = 4 * j; k < 4 * j + 4; k++) if (secs[k] > 0) {
					if (st[k] == "on") { on += ops[k]; onS += secs[k] } else { off += ops[k]; offS += secs[k] }
				}
				if (onS > 0 && offS > 0) r[nb++] = (on / onS) / (off / offS)
			}
			for (i = 0; i < nb; i++) for (j = i + 1; j < nb; j++) if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
			med = (nb % 2) ? r[(nb - 1) / 2] : (r[nb / 2 - 1] + r[nb / 2]) / 2
			q1 = r[int((nb - 1) / 4)]; q3 = r[int(3 * (nb - 1) / 4)]
			printf "%-6s traced %7.0f IOPS (%3.0f s)  untraced %7.0f IOPS (%3.0f s)  ratio %.3f  per block median %.3f (quartiles %.3f..%.3f, min %.3f max %.3f, %d blocks of %d s)\n", \
				mode, tot["on"] / ts["on"], ts["on"], tot["off"] / ts["off"], ts["off"], (tot["on"] / ts["on"]) / (tot["off"] / ts["off"]), med, q1, q3, r[0], r[nb - 1], nb, 4 * seg
		}' "$t.toggles" "$t.intervals"
	rm -f "$t.db"
}

if ((ALT > 0)); then
	DISK=$(basename "$(df --output=source "$DIR" | tail -1)")
	go build -o "$DIR/tracetoggle" ./bench/tracetoggle
	printf '\n== field job, traced and untraced seconds inside one %ss run on %s (%s intervals, segments of %ss, ABBA blocks)\n' "$ALT" "$DISK" "$INTERVAL" "$SEG"
	alt block
	alt all
	echo "target: block traced/untraced IOPS >= 0.97"
fi
rm -f "$DIR"/mysql_sim.*.*
echo
echo "== the programs' CPU (kernel BPF statistics) and one Tick in user space"
go test -run '^$' -bench TraceCost -benchtime 200000x ./telemetry/blocktrace 2>&1 | grep -E '^Benchmark' || true
go test -run '^$' -bench SyscallCost -benchtime 1000000x ./telemetry/blocktrace 2>&1 | grep -E '^Benchmark' || true
go test -run '^$' -bench 'BenchmarkTick$' -benchtime 20x ./telemetry/blocktrace 2>&1 | grep -E '^Benchmark' || true
echo "(bpf-ns/req = CPU ms per million block requests, per program beside; bpf-ns/syscall: per syscall of a process not followed while one is)"
echo "after: $(load)"
