#!/usr/bin/env bash
# Multi-host test of the fabric over real network namespaces.
#
# A bridge joins four namespaces by veth pairs: the coordinator in one
# (10.77.0.10), three workers in the others (10.77.0.11-13), all over
# mutual TLS with certificates from `writepath certs init`. The addresses
# exist only inside these namespaces; the root namespace has no address on
# the bridge, so no packet of this test can leave them. A fio job runs on
# all three workers; one worker is killed with SIGKILL mid-run; the run
# must end `partial`, name the lost worker, and keep the survivors' data.
# Everything is torn down on exit, however it exits. Needs root and
# iproute2; bounded to well under two minutes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
command -v ip >/dev/null || die "needs iproute2"

tag="wpn$$"                      # short: interface names are <= 15 bytes
work=$(mktemp -d /var/tmp/wp-netns.XXXXXX)   # disk-backed: fio uses direct I/O
trap teardown EXIT
trap 'exit 130' INT TERM

step "build"
(cd "$root" && go build -o "$work/writepath" ./cmd/writepath)
kind=fio
if ! "$work/writepath" version | grep ' kind fio ' >/dev/null; then  # not -q: an early exit would SIGPIPE writepath under pipefail
	(cd "$root" && go build -tags fabrictest -o "$work/writepath" ./cmd/writepath)
	kind=synth
fi
wp="$work/writepath"
watchdog 100

step "certificates (writepath certs init)"
"$wp" certs init "$work/certs" --host 10.77.0.10 --worker w1 --worker w2 --worker w3 >/dev/null
tls() { echo --tls-cert "$work/certs/$1.pem" --tls-key "$work/certs/$1-key.pem" --tls-ca "$work/certs/ca.pem"; }
cli=$(tls client)

step "network: bridge $tag-br, namespaces ${tag}c ${tag}w1..3"
ip link add "$tag-br" type bridge
ip link set "$tag-br" up
addns "${tag}c" 0 10.77.0.10
for i in 1 2 3; do addns "${tag}w$i" "$i" "10.77.0.1$i"; done

coord=10.77.0.10:7470
step "coordinator in ${tag}c on $coord"
start "${tag}c" coordinator "$wp" coordinator --listen "$coord" --db "$work/writepath.db" \
	--heartbeat-interval 200ms --heartbeat-timeout 2s $(tls coordinator)
for i in 1 2 3; do
	mkdir -p "$work/w$i"
	start "${tag}w$i" "w$i" "$wp" worker --coordinator "$coord" --name "w$i" --label rack=r$i --data-dir "$work/w$i" \
		$(tls "worker-w$i")
done
wait_for 20 "3 workers connected" \
	bash -c "ip netns exec ${tag}c '$wp' workers --coordinator $coord $cli | grep -c ' connected ' | grep -qx 3"
in_ns "${tag}c" "$wp" workers --coordinator "$coord" $cli

step "run $kind on 3 workers; kill w2 mid-run"
if [ "$kind" = fio ]; then
	args=(--name=netns --rw=randwrite --bs=4k --size=8M --runtime=6 --time_based --direct=1 --ioengine=psync)
else
	args=(--ops=20000 --duration=6s)
fi
set +e
in_ns "${tag}c" "$wp" run "$kind" --coordinator "$coord" $cli --workers 3 --interval 500ms "${args[@]}" \
	>"$work/run.out" 2>&1 &
runpid=$!
set -e
three_intervals() {
	kill -0 "$runpid" 2>/dev/null || { cat "$work/run.out"; die "run ended before the kill"; }
	[ "$(grep -c 'ops/s' "$work/run.out")" -ge 3 ]
}
wait_for 20 "3 merged intervals" three_intervals
kill -9 "${pids[w2]}"
wait "${pids[w2]}" 2>/dev/null || true   # reap it quietly
killed_at=$(date -u +%T.%N)
set +e
wait "$runpid"
status=$?
set -e
cat "$work/run.out"
[ "$status" = 3 ] || die "run exit status $status; want 3 (partial)"

step "check: partial, w2 named, survivors' data kept"
id=$(grep -o 'run [0-9-]*\.[0-9]*' "$work/run.out" | sed -n 1p | cut -d' ' -f2)
in_ns "${tag}c" "$wp" runs show "$id" --coordinator "$coord" $cli >"$work/show.txt"
in_ns "${tag}c" "$wp" runs show "$id" --coordinator "$coord" $cli --json >"$work/show.json"
grep -q '"state": "partial"' "$work/show.json" || die "run $id is not partial"
grep -A2 '"lost"' "$work/show.json" | grep '"w2"' >/dev/null || die "run $id does not name w2 as lost"
for w in w1 w3; do
	n=$(awk -v w="$w" '$1 == w { print $3; exit }' "$work/show.txt")
	[ "${n:-0}" -gt 0 ] || die "survivor $w has no stored operations"
done
grep -q 'w2 .*LOST' "$work/show.txt" || die "w2 not marked LOST in the breakdown"
cat "$work/show.txt"
in_ns "${tag}c" "$wp" workers --coordinator "$coord" $cli | grep '^w2 .* offline' >/dev/null || die "w2 not offline"
echo "netns: ok (run $id partial; w2 killed at $killed_at; survivors w1, w3 kept)"
