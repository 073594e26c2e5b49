#!/usr/bin/env bash
# prompt.sh — sends one prompt to `zot rpc` and streams the answer.
#
#   prompt.sh [zot flags...] "message"
#
# The assistant's text goes to stdout as it streams; tool calls, tool
# results, usage and errors go to stderr, one line each. zot is $ZOT_BIN,
# else `zot` on PATH; every argument but the last is passed to `zot rpc`
# (e.g. --provider scripted). When ZOTCORE_RPC_TOKEN is set, zot inherits
# it and this script authenticates with it first.
#
# Exit status: 0 when the prompt ended with `done` and no `error` event,
# 1 when an error event came or zot failed, 2 on a usage error.
#
# Needs bash and jq. zot runs with its stdin and stdout on two fifos; one
# long-running jq turns each output frame into one tagged line for the loop
# below, and every command is built with `jq -n --arg`, so no message text
# is ever spliced into JSON by hand.

set -uo pipefail

prog=${0##*/}

if [ $# -lt 1 ] || [ "${!#}" = "-h" ] || [ "${!#}" = "--help" ]; then
	echo "usage: $prog [zot flags...] \"message\"" >&2
	exit 2
fi
if ! command -v jq >/dev/null 2>&1; then
	echo "$prog: jq is required but not on PATH" >&2
	exit 1
fi
zot=${ZOT_BIN:-zot}
if ! command -v "$zot" >/dev/null 2>&1; then
	echo "$prog: zot not found ($zot): set ZOT_BIN or put zot on PATH" >&2
	exit 1
fi

message=${!#}
flags=("${@:1:$#-1}")

dir=$(mktemp -d "${TMPDIR:-/tmp}/zot-prompt.XXXXXX") || exit 1
zot_pid=
cleanup() {
	if [ -n "$zot_pid" ]; then kill "$zot_pid" 2>/dev/null; fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkfifo "$dir/in" "$dir/out" || exit 1

# Each frame becomes one line: a tag, US (\x1f), then the payload.
#   T  text delta, escaped for printf %b (backslash, CR, LF, US)
#   E  a line for stderr        X  an error event, for stderr
#   R  response: id US ok|fail US command US code US error
#   D  done: prompt_id
# shellcheck disable=SC2016 # $ in the jq program is jq's, not the shell's
filter='
def esc: gsub("\\\\"; "\\\\") | gsub("\n"; "\\n") | gsub("\r"; "\\r") | gsub("\u001f"; "\\x1f");
def flat: tostring | gsub("[\r\n\u001f]+"; " ");
def money: if . == null then "?" else tostring end;
def cost: if .cost_unknown != true then "$\(.cost_usd | money)" elif (.cost_usd // 0) > 0 then "$\(.cost_usd | money) + unknown" else "unknown" end;
if .type == "response" then
  "R\u001f\(.id // "" | flat)\u001f\(if .success then "ok" else "fail" end)\u001f\(.command // "" | flat)\u001f\(.code // "" | flat)\u001f\(.error // "" | flat)"
elif .type == "text_delta" then "T\u001f\(.delta | esc)"
elif .type == "assistant_message" then "A\u001f"
elif .type == "tool_call" then "E\u001ftool_call: \(.name | flat) \(.args | tojson | flat)"
elif .type == "tool_result" then "E\u001ftool_result: \(.id | flat) \(if .is_error then "error" else "ok" end)"
elif .type == "usage" then "E\u001fusage: input=\(.input) output=\(.output) cache_read=\(.cache_read) cache_write=\(.cache_write) cost=\(. | cost) total=\(.cumulative | cost)"
elif .type == "error" then "X\u001ferror: \(.message | flat)\(if .code then " (\(.code))" else "" end)"
elif .type == "done" then "D\u001f\(.prompt_id // "" | flat)"
else empty end'

# Order matters: jq and zot start before this shell opens the write end of
# zot's stdin, so neither inherits it and closing it is zot's EOF.
exec {from}< <(exec jq --unbuffered -r "$filter" <"$dir/out")
"$zot" rpc "${flags[@]}" <"$dir/in" >"$dir/out" &
zot_pid=$!
exec {to}>"$dir/in"
to_open=1

close_stdin() {
	if [ "$to_open" = 1 ]; then
		exec {to}>&-
		to_open=0
	fi
}

# send builds one command with jq -n (its arguments) and writes it to zot.
send() {
	jq -nc "$@" >&"$to" 2>/dev/null
}

if [ -n "${ZOTCORE_RPC_TOKEN:-}" ]; then
	send --arg t "$ZOTCORE_RPC_TOKEN" '{id: 0, type: "hello", token: $t}'
fi
send --arg m "$message" '{id: 1, type: "prompt", message: $m}'

saw_done=0
failed=0
ends_with_newline=1
wrote=0
apart=0
while IFS= read -r line <&"$from"; do
	tag=${line%%$'\x1f'*}
	rest=${line#*$'\x1f'}
	case $tag in
	T)
		printf -v text '%b' "$rest"
		if [ -n "$text" ] && [ "$apart" = 1 ]; then
			printf '\n' # a blank line between two messages' texts
			apart=0
		fi
		printf '%s' "$text"
		if [ -n "$text" ]; then
			wrote=1
			if [[ $text == *$'\n' ]]; then ends_with_newline=1; else ends_with_newline=0; fi
		fi
		;;
	A)
		# A message ended: end its line (before stderr lines), and set the
		# next message's text apart.
		if [ "$ends_with_newline" = 0 ]; then
			printf '\n'
			ends_with_newline=1
		fi
		apart=$wrote
		;;
	E | X)
		# End the text's line first: on a terminal the two streams share
		# the screen.
		if [ "$ends_with_newline" = 0 ]; then
			printf '\n'
			ends_with_newline=1
		fi
		printf '%s\n' "$rest" >&2
		if [ "$tag" = X ]; then failed=1; fi
		;;
	R)
		IFS=$'\x1f' read -r id ok command code error <<<"$rest"
		if [ "$ok" != ok ]; then
			echo "$prog: ${command:-command} failed (${code:-no code}): $error" >&2
			failed=1
			close_stdin
		fi
		;;
	D)
		if [ "$rest" = 1 ]; then
			saw_done=1
			close_stdin
		fi
		;;
	esac
done
close_stdin
exec {from}<&-

if [ "$ends_with_newline" = 0 ]; then
	printf '\n'
fi
wait "$zot_pid"
status=$?
zot_pid=
if [ "$failed" = 1 ]; then
	exit 1
fi
if [ "$saw_done" = 1 ]; then
	exit 0
fi
echo "$prog: zot exited with status $status before the prompt was done" >&2
exit 1
