#!/usr/bin/env bash
# bench/oltp.sh — the user's command, `writepath run oltp run` (embedded
# fabric, telemetry and tracing as their defaults), against sysbench 1.0.20
# oltp_write_only on one private MariaDB/MySQL instance: same tables, same
# threads, same duration, at innodb_flush_log_at_trx_commit=1 (the default:
# every commit fsynced) and 2, the two clients alternating.
#
#   bench/oltp.sh                                  # 8 x 100,000 rows; trx_commit 1 and 2; 8, 16, 64 threads
#   COMMITS=1 THREADS=16 ROUNDS=1 TIME=5 bench/oltp.sh   # a quick look
#
# Order: every round is ABBA (round 1 S W W S, round 2 W S S W, ...): a run
# leaves purge work and dirty pages to the next, and a busy machine drifts,
# so each writepath run is paired with the sysbench run beside it. Ratios
# are writepath/sysbench per pair: the median and the range over pairs.
# Each tool's figure is the median of its runs and their range.
#
# Per run: TPS and p99 from the tool's own summary; client CPU (user+sys of
# the whole process tree, from the kernel via /usr/bin/time: writepath's
# embedded coordinator and worker included) and its voluntary context
# switches, per 1,000 transactions; the server's CPU per 1,000 transactions
# (/proc/PID/stat of mysqld, all threads); the first second's TPS over the
# run's median second (writepath's interval lines; sysbench's
# --report-interval=1); the server's voluntary context switches (all its
# threads, /proc/PID/task/*/status; connection threads stay in the thread
# cache between runs) and its fsyncs (Innodb_data_fsyncs) per transaction:
# where the server's CPU per transaction goes (wake-ups, group commit); its
# row lock waits (Innodb_row_lock_waits) per 1,000 transactions: lock
# convoys; and the CPUs' worth every other process on the machine used over
# the run (/proc/stat's busy ticks less the server's and the client's; kernel
# threads included, the I/O of the run's own fsyncs too): a run
# that fell behind while other jobs took the CPUs says so.
#
# Environment: TABLES (8), SIZE (100000), TIME (10 s per run), ROUNDS (2),
# THREADS ("8 16 64"), COMMITS ("1 2"), BINARY (server binary), SET (extra
# --set k=v words for the server), WP_FLAGS (extra `writepath run` flags,
# e.g. --no-trace), ARGS (extra oltp_write_only options for both tools'
# runs, e.g. --mysql-compression=on), PREPARE (1: also time both prepares,
# ABBA), KEEP (1: keep the work directory, every run's output and stderr,
# and print its path:
# with GODEBUG=gctrace=1,schedtrace=1000 in the environment writepath's
# stderr holds its collections and run queues second by second).
# A full run: 2 x 3 x ROUNDS x 4 runs of TIME s, about 10 min at the defaults.
# Targets (issue 16): TPS >= 1.0x, p99 <= 1.0x, client CPU per 1k trx <= 1.0x.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TABLES=${TABLES:-8}
SIZE=${SIZE:-100000}
TIME=${TIME:-10}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-"8 16 64"}
COMMITS=${COMMITS:-"1 2"}
PREP_THREADS=${PREP_THREADS:-16}
WP_FLAGS=${WP_FLAGS:-}
read -r -a ARGV <<<"${ARGS:-}"
PREPARE=${PREPARE:-0}
KEEP=${KEEP:-0}
SET=${SET:-"--set innodb_buffer_pool_size=1G --set innodb_log_file_size=512M --set max_prepared_stmt_count=1000000"}

command -v sysbench >/dev/null || { echo "bench/oltp.sh: sysbench not found (apt-get install sysbench)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/oltp.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
for c in $COMMITS; do
	case $c in 0 | 1 | 2) ;; *) echo "bench/oltp.sh: COMMITS: $c is not an innodb_flush_log_at_trx_commit value (0, 1, 2)" >&2; exit 2 ;; esac
done

WORK=$(mktemp -d /tmp/wp-bench-XXXX)
chmod 711 "$WORK" # the managed server's account (mysql) must enter it
WP="$WORK/writepath"
(cd "$ROOT" && go build -o "$WP" ./cmd/writepath)

DIR="$WORK/db"
stop_server() {
	"$WP" mysqld stop --dir "$DIR" >/dev/null 2>&1 || true
	if [ "$KEEP" = 1 ]; then rm -rf "$DIR"; echo "kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC2086
"$WP" mysqld init --dir "$DIR" ${BINARY:+--binary "$BINARY"} $SET >/dev/null
"$WP" mysqld start --dir "$DIR" >/dev/null
STATUS=$("$WP" mysqld status --dir "$DIR")
SOCK=$(awk '/socket:/ {print $2}' <<<"$STATUS")
VERSION=$(awk -F'[()]' '/server:/ {print $2}' <<<"$STATUS")
SPID=$(sed -n 's/.*(pid \([0-9]*\)).*/\1/p' <<<"$STATUS" | head -1)

PW=$(cat "$DIR/root.password") # root's random password (mode 0600)
CONN=(--mysql-socket="$SOCK" --mysql-user=root --mysql-password="$PW" --mysql-db=sbtest --tables="$TABLES" --table-size="$SIZE")
SB=(sysbench oltp_write_only --db-driver=mysql "${CONN[@]}")
# shellcheck disable=SC2206
WPR=("$WP" run oltp --db "$WORK/wp.db" --data-dir "$WORK/data" $WP_FLAGS)

sql() { MYSQL_PWD=$PW mariadb -S "$SOCK" -uroot -N -e "$1" 2>/dev/null || MYSQL_PWD=$PW mysql -S "$SOCK" -uroot -N -e "$1"; }
# srv_ticks: the server's user+sys clock ticks so far (all its threads).
srv_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }
# busy_ticks: the machine's busy clock ticks so far (every CPU: all but idle
# and iowait); less the server's and the client's, what other processes
# took during a run: a run that collapsed while others took the CPUs says so.
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
# srv_vcs: the server's voluntary context switches so far (its live threads).
srv_vcs() { cat /proc/"$SPID"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}'; }
# srv_fsyncs: Innodb_data_fsyncs so far.
srv_fsyncs() { sql "SHOW GLOBAL STATUS LIKE 'Innodb_data_fsyncs'" | awk '{print $2 + 0}'; }
# srv_locks: Innodb_row_lock_waits and Innodb_row_lock_time (ms) so far.
srv_locks() { sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time')" | awk '$1 == "Innodb_row_lock_time" {t = $2} $1 == "Innodb_row_lock_waits" {w = $2} END {print w + 0, t + 0}'; }
HZ=$(getconf CLK_TCK)

# timed OUT CMD...: runs CMD, stdout to OUT, stderr to OUT.err,
# "elapsed user sys voluntary involuntary" to OUT.time.
timed() { local out=$1; shift; /usr/bin/time -f "%e %U %S %w %c" -o "$out.time" "$@" >"$out" 2>"$out.err"; }

echo "server: $VERSION ($SET)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; other processes may share them"
echo "tables: $TABLES x $SIZE rows; $TIME s per run; $ROUNDS ABBA round(s) per setting; threads: $THREADS; trx_commit: $COMMITS"
echo "writepath: ${WPR[*]:0:3} run ${WP_FLAGS:-(default flags)}"
echo "both runs: ${ARGS:-(no extra options)}"
echo

sql "CREATE DATABASE IF NOT EXISTS sbtest"
if [ "$PREPARE" = 1 ]; then
	# ABBA prepares; the last (sysbench's) leaves the tables for the runs.
	prep() { # TOOL N
		if [ "$1" = sysbench ]; then
			timed "$WORK/prepare.$1.$2" "${SB[@]}" --threads="$PREP_THREADS" prepare
		else
			timed "$WORK/prepare.$1.$2" "${WPR[@]}" prepare "${CONN[@]}" --threads="$PREP_THREADS"
		fi
		"${SB[@]}" cleanup >/dev/null
	}
	prep sysbench 1; prep writepath 1; prep writepath 2; prep sysbench 2
	for t in sysbench writepath; do
		r=$(cat "$WORK/prepare.$t.1.time" "$WORK/prepare.$t.2.time" | awk -v rows=$((TABLES * SIZE)) '{s += rows / $1} END {printf "%.0f", s / NR}')
		echo "prepare rows/s ($PREP_THREADS threads, mean of 2): $t $r"
	done
	echo
fi
"${SB[@]}" --threads="$PREP_THREADS" prepare >/dev/null

RUNS="$WORK/runs.txt" # commit threads pair tool tps p99 trx cpu_s vcs srv_s first_tps median_tps srv_vcs srv_fsyncs lock_waits lock_ms others_cpus
: >"$RUNS"

# run_one TOOL COMMIT THREADS PAIR N: one run, one line in $RUNS.
run_one() {
	local tool=$1 commit=$2 th=$3 pair=$4 out="$WORK/$1.$2.$3.$4.$5" t0 t1 b0 b1 w0 w1 f0 f1 l0 l1 tps p99 trx first median
	l0=$(srv_locks)
	f0=$(srv_fsyncs)
	w0=$(srv_vcs)
	t0=$(srv_ticks)
	b0=$(busy_ticks)
	if [ "$tool" = sysbench ]; then
		timed "$out" "${SB[@]}" --threads="$th" --time="$TIME" --percentile=99 --report-interval=1 "${ARGV[@]}" run
		read -r tps p99 trx < <(awk '$1 == "transactions:" {gsub(/\(/, "", $3); tps=$3; trx=$2} /99th percentile:/ {p99=$3} END {print tps, p99, trx}' "$out")
		# "[ 1s ] thds: 16 tps: 2705.00 ..."
		read -r first median < <(awk '/^\[ *[0-9]+s \] thds:/ {for (i = 1; i < NF; i++) if ($i == "tps:") v[n++] = $(i + 1)} END {print first_median(v, n)}
			function first_median(v, n,   s, i, j, t) {if (n == 0) return "0 0"; for (i = 0; i < n; i++) s[i] = v[i]; for (i = 1; i < n; i++) for (j = i; j > 0 && s[j-1] > s[j]; j--) {t = s[j]; s[j] = s[j-1]; s[j-1] = t}; return v[0] " " s[int(n / 2)]}' "$out")
	else
		timed "$out" "${WPR[@]}" run "${CONN[@]}" --threads="$th" --time="$TIME" --percentile=99 "${ARGV[@]}"
		# summary row: "merged  trx  COUNT  TPS  p50  p95  p99 ..."
		read -r tps p99 trx < <(awk '$1 == "merged" && $2 == "trx" {print $4, $7, $3; exit}' "$out")
		# interval lines (stdout, or stderr with --json): "run  0.0-1.0s  thds 16 tps  2705.0 ..."; whole seconds only
		read -r first median < <(awk '$1 == "run" && $2 ~ /^[0-9.]+-[0-9.]+s$/ {split($2, a, /[-s]/); if (a[2] - a[1] < 0.99) next; for (i = 1; i < NF; i++) if ($i == "tps") v[n++] = $(i + 1)} END {print first_median(v, n)}
			function first_median(v, n,   s, i, j, t) {if (n == 0) return "0 0"; for (i = 0; i < n; i++) s[i] = v[i]; for (i = 1; i < n; i++) for (j = i; j > 0 && s[j-1] > s[j]; j--) {t = s[j]; s[j] = s[j-1]; s[j-1] = t}; return v[0] " " s[int(n / 2)]}' "$out" "$out.err")
	fi
	t1=$(srv_ticks)
	b1=$(busy_ticks)
	w1=$(srv_vcs)
	f1=$(srv_fsyncs)
	l1=$(srv_locks)
	if [ -z "${trx:-}" ] || [ "${trx:-0}" = 0 ]; then
		echo "bench/oltp.sh: $tool at trx_commit=$commit, $th threads: no summary in $out; its stderr:" >&2
		tail -5 "$out.err" >&2
		exit 1
	fi
	read -r e u s v _ <"$out.time"
	# others: CPUs' worth the rest of the machine used over the run
	echo "$commit $th $pair $tool $tps $p99 $trx $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') $v $(awk -v d=$((t1 - t0)) -v hz="$HZ" 'BEGIN {print d / hz}') $first $median $((w1 - w0)) $((f1 - f0)) $(awk -v a="$l0" -v b="$l1" 'BEGIN {split(a, x, " "); split(b, y, " "); print y[1] - x[1], y[2] - x[2]}') $(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v hz="$HZ" -v u="$u" -v s="$s" -v e="$e" 'BEGIN {o = ((b - t) / hz - u - s) / e; printf "%.2f", (o < 0) ? 0 : o}')" >>"$RUNS"
}

# table COMMIT THREADS: the setting's lines from $RUNS.
table() {
	awk -v c="$1" -v th="$2" '
	function med(a, n,   s, i, j, t) {for (i = 0; i < n; i++) s[i] = a[i]; for (i = 1; i < n; i++) for (j = i; j > 0 && s[j-1] > s[j]; j--) {t = s[j]; s[j] = s[j-1]; s[j-1] = t}; lo = s[0]; hi = s[n-1]; return (n % 2) ? s[int(n/2)] : (s[n/2-1] + s[n/2]) / 2}
	function cell(a, n, f,   m) {m = med(a, n); return sprintf(f " (" f "-" f ")", m, lo, hi)}
	$1 == c && $2 == th {
		k = ($4 == "sysbench") ? "s" : "w"
		i = n[k]++
		v[k, 0, i] = $5; v[k, 1, i] = $6; v[k, 2, i] = $8 / $7 * 1000; v[k, 3, i] = $9 / $7; v[k, 4, i] = $10 / $7 * 1000
		v[k, 5, i] = ($12 > 0) ? $11 / $12 : 0
		v[k, 6, i] = $13 / $7; v[k, 7, i] = $14 / $7; v[k, 8, i] = $15 / $7 * 1000; v[k, 9, i] = $17
		pv[k, $3] = i; pairs[$3] = 1
	}
	END {
		split("TPS|p99 ms|client CPU s/1k trx|client vol. switches/trx|server CPU s/1k trx|first s TPS/median s|server vol. switches/trx|server fsyncs/trx|server row lock waits/1k trx|CPUs used by other processes", name, "|")
		split("%.0f|%.2f|%.3f|%.2f|%.3f|%.2f|%.2f|%.3f|%.1f|%.2f", fmt, "|")
		for (m = 0; m < 10; m++) {
			for (x = 0; x < n["s"]; x++) a[x] = v["s", m, x]; sc = cell(a, n["s"], fmt[m+1])
			for (x = 0; x < n["w"]; x++) a[x] = v["w", m, x]; wc = cell(a, n["w"], fmt[m+1])
			np = 0
			for (p in pairs) if (((("s", p) in pv)) && ((("w", p) in pv)) && v["s", m, pv["s", p]] > 0) r[np++] = v["w", m, pv["w", p]] / v["s", m, pv["s", p]]
			rc = (np > 0) ? cell(r, np, "%.2fx") : "-"
			printf "| %d | %d | %s | %s | %s | %s |\n", c, th, name[m+1], sc, wc, rc
		}
	}' "$RUNS"
}

echo "| trx_commit | threads | figure | sysbench median (range) | writepath median (range) | writepath/sysbench per pair: median (range) |"
echo "|---:|---:|---|---:|---:|---:|"
for c in $COMMITS; do
	sql "SET GLOBAL innodb_flush_log_at_trx_commit=$c"
	for th in $THREADS; do
		for r in $(seq 1 "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then order="sysbench writepath writepath sysbench"; else order="writepath sysbench sysbench writepath"; fi
			n=0
			for tool in $order; do
				n=$((n + 1))
				run_one "$tool" "$c" "$th" "$r.$(((n + 1) / 2))" "$n"
			done
		done
		table "$c" "$th"
	done
done
echo
echo "single runs (trx_commit threads pair tool TPS p99 trx client_cpu_s client_vcs server_cpu_s first_s_tps median_s_tps server_vcs server_fsyncs row_lock_waits row_lock_ms others_cpus), in order:"
cat "$RUNS"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rows after the runs: $(sql "SELECT SUM(TABLE_ROWS) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'") (estimate)"
