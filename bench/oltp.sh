#!/usr/bin/env bash
# bench/oltp.sh — writepath's oltp workload against sysbench 1.0.20 on one
# managed MariaDB/MySQL instance: same tables, same threads, same duration,
# the two clients alternating (ABBA). Prints TPS, p99 latency and the client's
# whole-process CPU seconds per 1,000 transactions (user+sys from
# /usr/bin/time, i.e. from the kernel, not self-reported), and the same
# prepare's rows/s, with writepath/sysbench ratios.
#
#   bench/oltp.sh                       # 8 x 100,000 rows, threads 16 and 64, 30 s
#   TABLES=4 SIZE=10000 TIME=5 THREADS="8" bench/oltp.sh   # quick look
#
# Each measurement runs in ABBA order (sysbench, writepath, writepath,
# sysbench): every run leaves purge work and dirty pages to the next one.
#
# Environment: TABLES, SIZE, TIME, THREADS (list), PREP_THREADS (default 16),
# BINARY (server binary), SET (extra --set k=v words for the server).
# Targets (issue 4): TPS >= 1.0x, CPU/1k trx <= 1.0x, prepare rows/s >= 1.5x.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TABLES=${TABLES:-8}
SIZE=${SIZE:-100000}
TIME=${TIME:-30}
THREADS=${THREADS:-"16 64"}
PREP_THREADS=${PREP_THREADS:-16}
SET=${SET:-"--set innodb_buffer_pool_size=1G --set innodb_flush_log_at_trx_commit=2 --set innodb_log_file_size=512M --set max_prepared_stmt_count=1000000"}

command -v sysbench >/dev/null || { echo "bench/oltp.sh: sysbench not found (apt-get install sysbench)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/oltp.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/wp-bench-XXXX)
chmod 711 "$WORK" # the managed server's account (mysql) must enter it
WP="$WORK/writepath"
OB="$WORK/oltpbench"
(cd "$ROOT" && go build -o "$WP" ./cmd/writepath && go build -o "$OB" ./bench/oltpbench)

DIR="$WORK/db"
stop_server() { "$WP" mysqld stop --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap stop_server EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC2086
"$WP" mysqld init --dir "$DIR" ${BINARY:+--binary "$BINARY"} $SET >/dev/null
"$WP" mysqld start --dir "$DIR" >/dev/null
SOCK=$("$WP" mysqld status --dir "$DIR" | awk '/socket:/ {print $2}')
VERSION=$("$WP" mysqld status --dir "$DIR" | awk -F'[()]' '/server:/ {print $2}')

PW=$(cat "$DIR/root.password") # root's random password (mode 0600)
CONN=(--mysql-socket="$SOCK" --mysql-user=root --mysql-password="$PW" --mysql-db=sbtest --tables="$TABLES" --table-size="$SIZE")
SB=(sysbench oltp_write_only --db-driver=mysql "${CONN[@]}")
WPO=("$OB")

sql() { MYSQL_PWD=$PW mariadb -S "$SOCK" -uroot -N -e "$1" 2>/dev/null || MYSQL_PWD=$PW mysql -S "$SOCK" -uroot -N -e "$1"; }

# timed OUT CMD...: runs CMD, output to OUT, "elapsed user sys" to OUT.time.
timed() { local out=$1; shift; /usr/bin/time -f "%e %U %S" -o "$out.time" "$@" >"$out" 2>"$out.err"; }

prepare_rate() { # rows/s from OUT.time's elapsed
	awk -v rows=$((TABLES * SIZE)) '{printf "%.0f", rows / $1}' "$1.time"
}

echo "server: $VERSION ($SET)"
echo "machine: $(nproc) CPUs; other processes may share them — read the figures with that in mind"
echo "tables: $TABLES x $SIZE rows; run: $TIME s per client per thread count; prepare threads: $PREP_THREADS"
echo

RUNS=""

# --- prepare, in ABBA order (sysbench, writepath, writepath, sysbench) so
# that neither client always loads right after the other's DROP TABLEs
# and dirty-page flushing; rows/s is the mean of each client's two loads.
# The last load (sysbench's) leaves the tables for the runs.
sql "CREATE DATABASE IF NOT EXISTS sbtest"
prep() { # TOOL N
	if [ "$1" = sysbench ]; then
		timed "$WORK/$1.prepare.$2" "${SB[@]}" --threads="$PREP_THREADS" prepare
	else
		timed "$WORK/$1.prepare.$2" "${WPO[@]}" prepare "${CONN[@]}" --threads="$PREP_THREADS"
	fi
}
prep sysbench 1; "${SB[@]}" cleanup >/dev/null
prep writepath 1; "${SB[@]}" cleanup >/dev/null
prep writepath 2; "${SB[@]}" cleanup >/dev/null
prep sysbench 2
mean_rate() { # TOOL
	echo $(( ($(prepare_rate "$WORK/$1.prepare.1") + $(prepare_rate "$WORK/$1.prepare.2")) / 2 ))
}
SB_ROWS=$(mean_rate sysbench)
WP_ROWS=$(mean_rate writepath)

# summary FILE -> "tps p99 trx"
summary() {
	awk '$1 == "transactions:" {gsub(/\(/, "", $3); tps=$3; trx=$2} /99th percentile:/ {p99=$3} END {print tps, p99, trx}' "$1"
}
cpu_per_k() { # FILE TRX
	awk -v trx="$2" '{printf "%.3f", ($2 + $3) / trx * 1000}' "$1.time"
}

run_one() { # TOOL THREADS N -> writes $WORK/TOOL.THREADS.N.run{,.time}
	local out="$WORK/$1.$2.$3.run"
	if [ "$1" = sysbench ]; then
		timed "$out" "${SB[@]}" --threads="$2" --time="$TIME" --percentile=99 run
	else
		timed "$out" "${WPO[@]}" run "${CONN[@]}" --threads="$2" --time="$TIME" --percentile=99
	fi
}

# pair TOOL THREADS -> "tps p99 cpu": mean TPS of the tool's two runs, the
# higher of its two p99s (percentiles are not averaged), CPU of both runs
# over the transactions of both.
pair() {
	local a="$WORK/$1.$2.1.run" b="$WORK/$1.$2.2.run"
	read -r t1 p1 n1 < <(summary "$a")
	read -r t2 p2 n2 < <(summary "$b")
	awk -v t1="$t1" -v t2="$t2" -v p1="$p1" -v p2="$p2" -v n="$((n1 + n2))" \
		-v c="$(cat "$a.time" "$b.time" | awk '{s += $2 + $3} END {print s}')" \
		'BEGIN {printf "%.2f %.2f %.3f\n", (t1 + t2) / 2, (p1 > p2 ? p1 : p2), c / n * 1000}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2fx", a/b; else print "-" }'; }

printf "%-22s %12s %12s %8s\n" "" sysbench writepath ratio
printf "%-22s %12s %12s %8s\n" "prepare rows/s" "$SB_ROWS" "$WP_ROWS" "$(ratio "$WP_ROWS" "$SB_ROWS")"
# Each thread count runs ABBA (sysbench, writepath, writepath, sysbench):
# a run leaves purge work and dirty pages to the next, so neither client
# may always go first.
for th in $THREADS; do
	run_one sysbench "$th" 1
	run_one writepath "$th" 1
	run_one writepath "$th" 2
	run_one sysbench "$th" 2
	read -r stps sp99 scpu < <(pair sysbench "$th")
	read -r wtps wp99 wcpu < <(pair writepath "$th")
	printf "%-22s %12s %12s %8s\n" "threads $th TPS" "$stps" "$wtps" "$(ratio "$wtps" "$stps")"
	printf "%-22s %12s %12s %8s\n" "threads $th p99 ms" "$sp99" "$wp99" "$(ratio "$wp99" "$sp99")"
	printf "%-22s %12s %12s %8s\n" "threads $th CPU s/1k trx" "$scpu" "$wcpu" "$(ratio "$wcpu" "$scpu")"
	for t in sysbench writepath; do
		for n in 1 2; do
			read -r tps p99 _ < <(summary "$WORK/$t.$th.$n.run")
			RUNS+="  $t threads $th run $n: $tps TPS, p99 $p99 ms"$'\n'
		done
	done
done
echo
echo "single runs (order: sysbench 1, writepath 1, writepath 2, sysbench 2):"
printf "%s" "$RUNS"
echo
echo "rows after the runs: $(sql "SELECT SUM(TABLE_ROWS) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'") (estimate); exact sbtest1: $(sql 'SELECT COUNT(*) FROM sbtest.sbtest1')"
