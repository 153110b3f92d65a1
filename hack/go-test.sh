#!/usr/bin/env bash
# Runs a `go test` command line, keeps its whole output in LOG, and when it fails repeats
# each failed test's own report at the very end. A suite's teardown prints long after its
# failures, and CI keeps only the tail of the output: the failures must be in that tail.
#
#   hack/go-test.sh LOG go test ...
set -o errexit -o nounset -o pipefail

log=$1
shift
mkdir -p "$(dirname "$log")"

status=0
"$@" 2>&1 | tee "$log" || status=$?
if [[ $status -eq 0 ]]; then
	exit 0
fi

echo
echo "==> failures (exit $status; the whole output is in $log)"
# A failed test's report is its `--- FAIL` line and the indented lines below it. A panic or
# a timeout prints no `--- FAIL`: show its first lines instead. The e2e suite's leak scan
# runs after the tests: its findings (places, never keys) are repeated too.
awk '
	/^[[:space:]]*--- FAIL/ { inrep = 1; n = 0; print; next }
	inrep && /^[[:space:]]+/ { if (n++ < 60) print; next }
	{ inrep = 0 }
	# The verdicts of the e2e suite after its tests: the leak scan and what it found.
	/^leak scan: [1-9][0-9]* findings/ { inrep = 1; n = 0; print; next }
	/^e2e: (FAIL|the leak scan failed)/ { print; next }
	/^panic: |^fatal error: / { p = 40 }
	p > 0 { print; p--; next }
	/^(FAIL|ok)[[:space:]]/ { print }
' "$log"
exit "$status"
