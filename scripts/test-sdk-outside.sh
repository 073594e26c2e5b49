#!/usr/bin/env bash
# make test-sdk-outside: a module outside this repository builds and runs a
# program against zot.dev/zot/sdk and zot.dev/zot/sdk/rpcclient, the way
# docs/sdk.md tells embedders to while the module path cannot be fetched
# from a public proxy: first with a `replace` line, then with `go work use`.
# The dependencies of the checkout come from the local module cache (or the
# Go module proxy, when the cache lacks them); nothing else is fetched.
#
# usage: scripts/test-sdk-outside.sh [path/to/zot]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
zot=${1:-${ZOT_BIN:-$root/bin/zot}}
[[ -x $zot ]] || { echo "test-sdk-outside: no zot binary at $zot (make build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=${GOFLAGS:-}
unset ZOTCORE_RPC_TOKEN

write_program() { # dir
  mkdir -p "$1"
  cat > "$1/main.go" <<'GO'
// A program outside the zot repository that embeds zot both ways.
package main

import (
	"context"
	"fmt"
	"os"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(zot, dir string) error {
	ctx := context.Background()

	rt, err := sdk.New(sdk.Config{Provider: "scripted", CWD: dir})
	if err != nil {
		return err
	}
	defer rt.Close()
	if err := hello(ctx, "sdk", rt); err != nil {
		return err
	}

	c, err := rpcclient.Start(ctx, rpcclient.Options{Bin: zot, Args: []string{"--provider", "scripted", "--cwd", dir}})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := hello(ctx, "rpcclient", c); err != nil {
		return err
	}
	return c.Close()
}

// hello prompts through either implementation of client.Client.
func hello(ctx context.Context, name string, c client.Client) error {
	events, err := c.Prompt(ctx, "hello", nil)
	if err != nil {
		return err
	}
	var last wire.Event
	for ev := range events {
		last = ev
	}
	st, err := c.State(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s, %d messages\n", name, last.Type(), st.MessageCount)
	return nil
}
GO
}

check() { # what, output
  local want=$'sdk: done, 4 messages\nrpcclient: done, 4 messages'
  if [[ $2 != "$want" ]]; then
    printf 'test-sdk-outside: %s printed\n%s\nwant\n%s\n' "$1" "$2" "$want" >&2
    exit 1
  fi
  echo "ok   $1"
}

# 1. A replace line in the embedder's go.mod.
mod=$work/replace
write_program "$mod"
cat > "$mod/go.mod" <<MOD
module example.com/embed

go 1.25.0

require zot.dev/zot v0.0.0-00010101000000-000000000000

replace zot.dev/zot => $root
MOD
cp "$root/go.sum" "$mod/go.sum" # the checkout's dependencies, already verified
# -mod=mod lets the build add the requirements the new go.mod lacks.
(cd "$mod" && GOWORK=off GOFLAGS="$flags -mod=mod" go build -o embed .)
check "replace zot.dev/zot => checkout" "$("$mod/embed" "$zot" "$work")"

# 2. A workspace holding the embedder's module and the checkout.
ws=$work/ws
write_program "$ws/embed"
printf 'module example.com/embed\n\ngo 1.25.0\n' > "$ws/embed/go.mod"
(cd "$ws" && export GOFLAGS="$flags" && go work init ./embed && go work use "$root" && go build -o embed/embed ./embed)
check "go work use checkout" "$("$ws/embed/embed" "$zot" "$work")"
