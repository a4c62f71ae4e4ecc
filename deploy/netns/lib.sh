# Helpers for test.sh: namespaces, processes, teardown, waiting.

declare -A pids=()
watchdog_pid=""

die() { echo "netns: FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# addns NS INDEX ADDR: a namespace joined to the bridge by a veth pair.
addns() {
	local ns=$1 i=$2 addr=$3
	ip netns add "$ns"
	ip link add "$tag-v$i" type veth peer name "$tag-p$i"
	ip link set "$tag-v$i" netns "$ns"
	ip link set "$tag-p$i" master "$tag-br" up
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$addr/24" dev "$tag-v$i"
	ip -n "$ns" link set "$tag-v$i" up
}

# start NS NAME CMD...: run CMD in NS in the background, logging to
# $work/NAME.log; its pid is ${pids[NAME]}.
start() {
	local ns=$1 name=$2; shift 2
	ip netns exec "$ns" "$@" >"$work/$name.log" 2>&1 &
	pids[$name]=$!
}

# wait_for SECONDS WHAT CMD...: retry CMD until it succeeds.
wait_for() {
	local deadline=$(( $(date +%s) + $1 )) what=$2; shift 2
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || die "timed out waiting for $what"
		sleep 0.2
	done
}

# watchdog SECONDS: end the whole test if it runs longer.
watchdog() {
	( sleep "$1"; echo "netns: FAIL: timed out after $1 s" >&2; kill -TERM $$ ) &
	watchdog_pid=$!
}

teardown() {
	local status=$?
	set +e
	[ -n "$watchdog_pid" ] && kill "$watchdog_pid" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	if [ "$status" != 0 ] && [ -d "${work:-}" ]; then
		for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
	fi
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${tag}" || true); do
		ip netns del "$ns"
	done
	ip link del "$tag-br" 2>/dev/null
	[ -n "${work:-}" ] && rm -rf "$work"
	return "$status"
}
