#!/usr/bin/env bash
# make demo: a real `zot rpc` session, offline, on the built-in scripted
# provider. No key and no network are needed.
set -euo pipefail
zot=${1:-bin/zot}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'package main\n\nfunc main() { println("hi") }\n' > "$work/main.go"

bold=$(tput bold 2>/dev/null || true)
plain=$(tput sgr0 2>/dev/null || true)

echo "${bold}1. The wire: three commands piped into zot rpc --provider scripted${plain}"
echo
{
  echo '{"id":"1","type":"hello"}'
  echo '{"id":"2","type":"prompt","message":"what is in this directory?"}'
  echo '{"id":"3","type":"get_state"}'
} | "$zot" rpc --provider scripted --cwd "$work" | cut -c1-160
echo
echo "${bold}2. The same runtime through the Python reference client (clients/python/examples/prompt.py)${plain}"
echo "   text deltas on stdout; tool calls and usage on stderr"
echo
python3 clients/python/examples/prompt.py --zot "$zot" --provider scripted --cwd "$work" "what is in this directory?"
echo
echo "${bold}Done. The protocol is in docs/rpc.md; the clients are in clients/.${plain}"
