#!/usr/bin/env bash
# bench/fio_examples.sh — fio 3.33's own example job files through
# `fio --parse-only` and `writepath fio --parse-only`, side by side (issue
# 15: every example fio parses must parse). Prints one line per file
# (fio's and writepath's exit status, writepath's first error) and the two
# counts; exits 1 when writepath refuses a file fio accepts.
#
#   bench/fio_examples.sh EXAMPLES_DIR    env: FIO=/usr/bin/fio
#                                              WRITEPATH=path/to/writepath (else built)
#
# EXAMPLES_DIR is fio's examples/ at tag fio-3.33, fetched outside the
# repository, e.g.
#   git clone --depth 1 -b fio-3.33 https://github.com/axboe/fio /tmp/fio-3.33
#   bench/fio_examples.sh /tmp/fio-3.33/examples
# Nothing runs: both tools only parse (job files naming devices or
# directories are not touched).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:?usage: bench/fio_examples.sh EXAMPLES_DIR (fio-3.33 examples/)}
FIO=${FIO:-/usr/bin/fio}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z "${WRITEPATH:-}" ]]; then
	WRITEPATH=$work/writepath
	go build -o "$WRITEPATH" ./cmd/writepath
fi
"$FIO" --version | grep -q '^fio-3.33' || echo "fio_examples.sh: $FIO is $("$FIO" --version), not fio-3.33" >&2

total=0 fio_ok=0 wp_ok=0 gap=0
printf '%-4s %-4s %s\n' fio wp file
for f in "$DIR"/*.fio; do
	total=$((total + 1))
	# Relative paths in the jobs (include, filenames) resolve from a
	# scratch directory, the same for both.
	fio_rc=0 wp_rc=0
	(cd "$work" && timeout 30 "$FIO" --parse-only "$f" >/dev/null 2>&1) || fio_rc=$?
	wp_err=$(cd "$work" && timeout 30 "$WRITEPATH" fio --parse-only "$f" 2>&1 >/dev/null) || wp_rc=$?
	((fio_rc == 0)) && fio_ok=$((fio_ok + 1))
	((wp_rc == 0)) && wp_ok=$((wp_ok + 1))
	note=""
	if ((fio_rc == 0 && wp_rc != 0)); then
		gap=$((gap + 1))
		note="  <- $(head -1 <<<"$wp_err" | cut -c1-200)"
	elif ((fio_rc != 0 && wp_rc == 0)); then
		note="  (fio refuses it)"
	fi
	printf '%-4s %-4s %s%s\n' "$fio_rc" "$wp_rc" "$(basename "$f")" "$note"
done
echo "examples: $total; fio --parse-only accepts $fio_ok, writepath $wp_ok; writepath refuses $gap that fio accepts"
((gap == 0))
