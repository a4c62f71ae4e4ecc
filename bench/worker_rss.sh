#!/usr/bin/env bash
# bench/worker_rss.sh — the worker's memory budget: a real coordinator and
# worker over loopback gRPC, a 4-job libaio fio run (iodepth 32) and then a
# 64-thread OLTP run on a managed server, both through the fabric. Prints the
# worker process's peak RSS (VmHWM, from the kernel) after each; exits 1 when
# it is over the budget (100 MiB).
#
#   bench/worker_rss.sh                    # 20 s per run
#   TIME=5 bench/worker_rss.sh             # quick look
#
# Environment: TIME (seconds per run), BUDGET_MIB (default 100).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TIME=${TIME:-20}
BUDGET_MIB=${BUDGET_MIB:-100}

WORK=$(mktemp -d /tmp/wp-rss-XXXX)
chmod 711 "$WORK" # the managed server's account (mysql) must enter it
WP="$WORK/writepath"
(cd "$ROOT" && go build -o "$WP" ./cmd/writepath)

PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	"$WP" mysqld stop --dir "$WORK/data/db" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT=$((20000 + RANDOM % 20000))
ADDR=127.0.0.1:$PORT
mkdir -p "$WORK/data"
"$WP" coordinator --listen "$ADDR" --db "$WORK/wp.db" >"$WORK/coordinator.log" 2>&1 &
PIDS+=($!)
"$WP" worker ${WORKER_FLAGS:-} --coordinator "$ADDR" --name rss --data-dir "$WORK/data" >"$WORK/worker.log" 2>&1 &
WORKER=$!
PIDS+=("$WORKER")
for _ in $(seq 1 50); do
	"$WP" workers --coordinator "$ADDR" 2>/dev/null | grep -q rss && break
	sleep 0.2
done

hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$WORKER/status"; }
report() { # LABEL
	local kib
	kib=$(hwm_kib)
	printf "%-40s %6.1f MiB peak RSS (budget %d MiB)\n" "$1" "$(echo "$kib" | awk '{print $1 / 1024}')" "$BUDGET_MIB"
	if [ "$kib" -gt $((BUDGET_MIB * 1024)) ]; then OVER=1; fi
}
OVER=0
report "worker idle, registered"

"$WP" run fio --coordinator "$ADDR" --show none --name=rss --ioengine=libaio --iodepth=32 --rw=randwrite \
	--bs=4k --numjobs=4 --size=256M --direct=1 --time_based --runtime="$TIME" >"$WORK/fio.out"
report "after fio: 4 libaio jobs, iodepth 32"

"$WP" mysqld init --dir "$WORK/data/db" --set innodb_buffer_pool_size=512M >/dev/null
"$WP" mysqld start --dir "$WORK/data/db" >/dev/null
SOCK=$("$WP" mysqld status --dir "$WORK/data/db" | awk '/socket:/ {print $2}')
# The server is inside the worker's data dir: its socket and password file
# pass the worker's guard without an --allow-mysql.
CONN=(--mysql-socket="$SOCK" --mysql-user=root --mysql-password-file="$WORK/data/db/root.password" --tables=8 --table-size=10000)
"$WP" run oltp prepare --coordinator "$ADDR" --show none "${CONN[@]}" --threads=8 >"$WORK/prepare.out"
report "after oltp prepare: 8 threads"
"$WP" run oltp run --coordinator "$ADDR" --show none "${CONN[@]}" --threads=64 --time="$TIME" >"$WORK/oltp.out"
report "after oltp: 64 threads"

exit "$OVER"
