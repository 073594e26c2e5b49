#!/usr/bin/env bash
# make fuzz: run every Go fuzzer of the module (each `func FuzzX` in a
# _test.go file git knows or would add) for FUZZTIME each, one after
# another, then print one line per fuzzer with its last progress line.
# Exits 1 when any fuzzer failed; its failing input is in the package's
# testdata/fuzz/ and `go test -run 'FuzzX/<name>' ./pkg` replays it.
#
# FUZZTIME (default 60s) is the fuzzing time of each; FUZZMINIMIZETIME
# (default 5s) bounds the minimisation of each new input, which with the
# default of 60 s can take most of a short run; GO is the go command.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
fuzztime=${FUZZTIME:-60s}
minimize=${FUZZMINIMIZETIME:-5s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

mapfile -t found < <(git grep --untracked -E -o '^func Fuzz[A-Za-z0-9_]*' -- '*_test.go' | sed -E 's/:func /:/' | sort)
if [ ${#found[@]} -eq 0 ]; then
  echo "fuzz: no fuzzers found" >&2
  exit 1
fi

summary=()
failed=0
for entry in "${found[@]}"; do
  file=${entry%%:*}
  name=${entry##*:}
  pkg=./$(dirname "$file")
  echo "== $name in $pkg for $fuzztime"
  status=ok
  if ! "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" 2>&1 | tee "$log"; then
    status=FAILED
    failed=1
  fi
  last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -1 || true)
  summary+=("$status $pkg $name: ${last#fuzz: }")
done

echo
echo "== fuzz summary ($fuzztime each)"
printf '%s\n' "${summary[@]}"
exit $failed
