#!/usr/bin/env bash
# test.sh — runs prompt.sh against the real `zot rpc` on the scripted
# provider (offline) and checks its stdout, stderr and exit status.
#
#   ZOT_BIN=/path/to/zot clients/shell/test.sh
#
# zot is $ZOT_BIN, else bin/zot at the repository root. Prints each check;
# exits 1 when any fails (naming it), or when jq or zot is missing.

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prompt="$here/prompt.sh"

if ! command -v jq >/dev/null 2>&1; then
	echo "test.sh: jq is not installed; prompt.sh needs it (e.g. apt-get install jq)" >&2
	exit 1
fi
ZOT_BIN=${ZOT_BIN:-$here/../../bin/zot}
if [ ! -x "$ZOT_BIN" ]; then
	echo "test.sh: zot not found at $ZOT_BIN: build it (go build -o bin/zot ./cmd/zot) or set ZOT_BIN" >&2
	exit 1
fi
export ZOT_BIN
unset ZOTCORE_RPC_TOKEN

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zot-shell-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

failures=0
fail() {
	echo "FAIL: $current: $*" >&2
	failures=$((failures + 1))
}

# run NAME [args...]: runs prompt.sh with a hang guard; sets $status and
# leaves its output in $tmp/NAME.out and $tmp/NAME.err.
run() {
	current=$1
	shift
	timeout 60 "$prompt" "$@" >"$tmp/$current.out" 2>"$tmp/$current.err"
	status=$?
	out=$(cat "$tmp/$current.out")
	err=$(cat "$tmp/$current.err")
}

expect_status() {
	if [ "$status" != "$1" ]; then
		fail "exit status $status, want $1; stderr: $err"
	fi
}

expect_in() { # expect_in WHERE TEXT NEEDLE
	case $2 in
	*"$3"*) ;;
	*) fail "$1 lacks '$3'; $1 was: $2" ;;
	esac
}

expect_not_in() { # expect_not_in WHERE TEXT NEEDLE
	case $2 in
	*"$3"*) fail "$1 has '$3'; $1 was: $2" ;;
	esac
}

expect_stdout_exactly() { # compares bytes, trailing newlines included
	printf '%s' "$1" >"$tmp/$current.want"
	if ! cmp -s "$tmp/$current.want" "$tmp/$current.out"; then
		fail "stdout differs: want $(od -c <"$tmp/$current.want" | head -5), got $(od -c <"$tmp/$current.out" | head -5)"
	fi
}

write_script() { # write_script NAME JSON
	printf '%s\n' "$2" >"$tmp/$1.json"
}

flags=(--provider scripted --cwd "$tmp")
write_script echo '{"turns":[{"steps":[{"echo":true}]}]}'
write_script error '{"turns":[{"steps":[{"error":{"status":400,"kind":"invalid_request_error","message":"scripted failure"}}]}]}'

# The built-in script: text, a bash tool call, then an answer.
run builtin "${flags[@]}" "show me"
expect_status 0
if [ -z "$out" ]; then fail "no text on stdout"; fi
expect_in stderr "$err" 'tool_call: bash {"command":"echo hello from zot'
expect_in stderr "$err" "tool_result: "
expect_in stderr "$err" "usage: input="
expect_not_in stdout "$out" "tool_call"
# The two messages' texts are paragraphs apart, as zot -p prints them.
expect_in stdout "$out" $'at work.\n\nThe bash tool ran'
if [ "$(grep -c '^usage: ' "$tmp/builtin.err")" != 2 ]; then
	fail "want 2 usage lines on stderr, got: $err"
fi

# A model without known prices: its cost reads unknown, never $0.
run unpriced "${flags[@]}" --model not-in-the-catalog "show me"
expect_status 0
if [ "$(grep -c 'cost=unknown total=unknown$' "$tmp/unpriced.err")" != 2 ]; then
	fail "want 2 usage lines with an unknown cost, got: $err"
fi

# Quoting: the message reaches zot byte for byte and the text comes back.
message=$'it\'s "quoted" $HOME `x` \\ back\\slash\ttab\nsecond line \xe2\x80\xa8 end'
run echo "${flags[@]}" --script "$tmp/echo.json" "$message"
expect_status 0
expect_stdout_exactly "You said: $message"$'\n'
if grep -qv '^usage: ' "$tmp/echo.err"; then fail "stderr has more than usage: $err"; fi

# An error event: reported on stderr, exit status 1.
run error "${flags[@]}" --script "$tmp/error.json" "fail please"
expect_status 1
expect_in stderr "$err" "error: "
expect_in stderr "$err" "scripted failure"

# With ZOTCORE_RPC_TOKEN, prompt.sh authenticates first.
current=token
ZOTCORE_RPC_TOKEN=test-token-not-a-secret timeout 60 "$prompt" "${flags[@]}" --script "$tmp/echo.json" hi \
	>"$tmp/token.out" 2>"$tmp/token.err"
status=$?
err=$(cat "$tmp/token.err")
expect_status 0
expect_stdout_exactly $'You said: hi\n'

# A flag zot does not know: zot fails before answering, exit status 1.
run badflag --provider scripted --no-such-flag hi
expect_status 1

# No message: usage error.
run usage
expect_status 2
expect_in stderr "$err" "usage:"

if [ "$failures" -gt 0 ]; then
	echo "test.sh: $failures check(s) failed" >&2
	exit 1
fi
echo "test.sh: all checks passed"
