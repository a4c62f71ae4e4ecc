#!/usr/bin/env bash
# bench/fleet.sh — the coordinator at fleet scale: a real `writepath
# coordinator` process and internal/fabrictest/fleetsim's simulated workers
# (the worker protocol over real gRPC, one 5,000-write histogram per worker,
# in the encoding the coordinator asks for: sparse, or V2 for a BIN before it,
# per 1 s interval; the fleet idles 16 s once connected, as a fleet does
# between runs, so its clock offsets are estimated from 16 pings). Prints the
# publish latency of the merged intervals (p50/p99/max of "published N ms
# after its end": from the interval's end to its arrival at a watcher, one
# host's clock; beside it the simulator's share, sent_last_p99, when the last
# worker's send returned, and clock_err_max, the worst offset a worker was
# given, true offset 0), the coordinator's CPU per
# interval and peak RSS, the store's bytes, then the wall time and peak RSS
# of `runs show` and `report` on that run through the coordinator and from
# the file; exits 1 when a target is missed.
#
#   bench/fleet.sh                               # 1,000 workers, 300 s
#   WORKERS=200 TIME=30 bench/fleet.sh           # quick look
#   CPUS=0 bench/fleet.sh                        # coordinator pinned to CPU 0
#   BIN=/tmp/old/writepath bench/fleet.sh        # another build (before/after)
#
# Environment: WORKERS, TIME (seconds of the run), PER_CONN (workers per connection, 10),
# CPUS (taskset list for the coordinator; the simulator gets the others),
# KEEP (keep the work directory), BIN. Targets: publish p99 < 100 ms,
# coordinator < 512 MiB, runs show < 5 s, report < 15 s, CLI < 1 GiB.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORKERS=${WORKERS:-1000}
SECS=${TIME:-300}
PER_CONN=${PER_CONN:-10}
WORK=$(mktemp -d /tmp/wp-fleet-XXXX)
WP=${BIN:-$WORK/writepath}
SIM=$WORK/fleetsim
if [ -z "${BIN:-}" ]; then (cd "$ROOT" && go build -o "$WP" ./cmd/writepath); fi
(cd "$ROOT" && go build -o "$SIM" ./internal/fabrictest/fleetsim)

COORD=
cleanup() {
	[ -n "$COORD" ] && kill "$COORD" 2>/dev/null && wait "$COORD" 2>/dev/null || true
	if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

others() { # the CPUs not in $CPUS, for the simulator
	local all; all=$(seq -s, 0 $(($(nproc) - 1)))
	comm -23 <(tr , '\n' <<<"$all" | sort) <(tr , '\n' <<<"$CPUS" | sort) | paste -sd, -
}

PORT=$((20000 + RANDOM % 20000))
ADDR=127.0.0.1:$PORT
DB=$WORK/fleet.db
# Started directly (taskset execs it), so $! is the coordinator's own pid:
# fleetsim reads its CPU and RSS there, and kill stops it, not a subshell.
if [ -n "${CPUS:-}" ]; then
	taskset -c "$CPUS" "$WP" coordinator --listen "$ADDR" --db "$DB" >"$WORK/coordinator.log" 2>&1 &
else
	"$WP" coordinator --listen "$ADDR" --db "$DB" >"$WORK/coordinator.log" 2>&1 &
fi
COORD=$!
sleep 1
echo "fleet: $WORKERS simulated workers, $SECS s, coordinator pid $COORD${CPUS:+ on CPU $CPUS}; load $(cut -d' ' -f1-3 /proc/loadavg)"
SIMCPUS=
[ -n "${CPUS:-}" ] && SIMCPUS=$(others)
if [ -n "$SIMCPUS" ]; then
	taskset -c "$SIMCPUS" "$SIM" -coordinator "$ADDR" -workers "$WORKERS" -per-conn "$PER_CONN" -seconds "$SECS" -pid "$COORD" >"$WORK/fleetsim.out"
else
	"$SIM" -coordinator "$ADDR" -workers "$WORKERS" -per-conn "$PER_CONN" -seconds "$SECS" -pid "$COORD" >"$WORK/fleetsim.out"
fi
SUM=$(grep '^fleetsim: run' "$WORK/fleetsim.out")
RUN=$(awk '{print $3}' <<<"$SUM")
P99=$(awk '{for (i=1;i<=NF;i++) if ($i=="p99") print $(i+1)}' <<<"$SUM")
RSS=$(awk '{for (i=1;i<=NF;i++) if ($i=="rss_peak") print $(i+1)}' <<<"$SUM")
echo "$SUM"
echo "store: $(stat -c %s "$DB") bytes after the run ($WORKERS workers x $SECS s)"

fail=0
# cli LABEL LIMIT_S ARGS... runs a reader under GNU time: wall s, CPU s,
# peak RSS (file-backed pages of the store mapping included: opening a store
# file checks every page, so a reader --db FILE maps the whole file).
cli() {
	local label=$1 limit=$2; shift 2
	local t
	if ! /usr/bin/time -o "$WORK/cli.time" -f '%e %M %U %S' "$WP" "$@" >/dev/null 2>"$WORK/cli.err"; then
		echo "$label: FAILED: $(tail -1 "$WORK/cli.err")"; fail=1; return
	fi
	t=$(tail -1 "$WORK/cli.time")
	local wall kib user sys
	read -r wall kib user sys <<<"$t"
	# CPU beside wall: on a busy machine the wall time is mostly waiting.
	echo "$label: ${wall} s, CPU $(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}') s, peak RSS $((kib / 1024)) MiB"
	if awk -v w="$wall" -v l="$limit" 'BEGIN{exit !(w > l)}' || [ "$kib" -gt $((1 << 20)) ]; then fail=1; fi
}
cli "runs show via coordinator" 5 runs show "$RUN" --coordinator "$ADDR"
cli "report via coordinator" 15 report "$RUN" --coordinator "$ADDR" -o "$WORK/report.html"
kill "$COORD"; wait "$COORD" 2>/dev/null || true; COORD=
cli "runs show from file" 5 runs show "$RUN" --db "$DB"
cli "report from file" 15 report "$RUN" --db "$DB" -o "$WORK/report.html"

# Retention's figures: the run at full resolution (compacted: bbolt's file
# grows ahead of use) and once it is past --keep-worker-intervals (its
# snapshots dropped; merged intervals and per-worker totals stay), each as
# bytes per worker-hour of this run.
size_after() { # LABEL KEEP: a compacted copy of the store pruned to KEEP runs
	cp "$DB" "$WORK/copy.db"
	"$WP" runs prune --db "$WORK/copy.db" --keep-worker-intervals "$2" --compact >/dev/null
	local b; b=$(stat -c %s "$WORK/copy.db")
	echo "store $1: $b bytes, $(awk -v b="$b" -v w="$WORKERS" -v s="$SECS" 'BEGIN{printf "%.0f", b / (w * s / 3600)}') bytes per worker-hour"
	rm -f "$WORK/copy.db"
}
size_after "full resolution (compacted)" 1
size_after "past retention (snapshots dropped, compacted)" 0
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg) (2 shared cores)"

if awk -v p="$P99" 'BEGIN{exit !(p >= 100)}'; then echo "publish p99 $P99 ms: over the 100 ms budget"; fail=1; fi
if [ "${RSS:-0}" -gt $((512 * 1024)) ]; then echo "coordinator peak RSS $((RSS / 1024)) MiB: over 512 MiB"; fail=1; fi
exit $fail
