#!/usr/bin/env bash
# Runs every fuzz target of ragd (go test -fuzz) for a bounded time each, one after another with one worker.
# Usage: scripts/fuzz.sh [time per target, default 10s] [package pattern, default ./...]
# The test script runs it with 10s per target so that CI exercises every target on fresh inputs; the
# ≥ 10-minute runs reported in docs/security.md are `scripts/fuzz.sh 10m`. A failing input is saved
# under the package's testdata/fuzz/ and fails this script; while fuzzing, one input may take at most
# internal/fuzzbudget's PerInput.
set -euo pipefail
cd "$(dirname "$0")/.."
per=${1:-10s}
pattern=${2:-./...}
failed=0
for pkg in $(go list "$pattern"); do
  targets=$(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
  for t in $targets; do
    printf '%s %s (%s): ' "$pkg" "$t" "$per"
    out=$(go test "$pkg" -run '^$' -fuzz "^$t\$" -fuzztime "$per" -fuzzminimizetime 10s -timeout 0 -parallel 1 2>&1) && rc=0 || rc=$?
    if [ $rc -eq 0 ]; then
      # A large cached corpus (Go keeps it in GOCACHE/fuzz) on a busy machine can take the whole time to
      # replay ("gathering baseline coverage"), so there may be no execs line: that is a pass too.
      execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 || true)
      echo "${execs:-$(echo "$out" | grep -o 'baseline coverage: [0-9/]* completed' | tail -1 || true) (corpus replay only)}"
    elif echo "$out" | grep -q 'context deadline exceeded' && ! echo "$out" | grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:'; then
      # Go's fuzz coordinator can report the end of -fuzztime itself as a failure when a worker is
      # mid-input at that moment (go.dev/issue/75804, fixed in Go 1.27): no input failed and none was
      # written, so it is not a finding.
      echo "$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 || true) (Go's end-of-fuzztime report, go.dev/issue/75804: no failing input)"
    else
      echo "FAILED"; echo "$out" | tail -30; failed=1
    fi
  done
done
exit $failed
