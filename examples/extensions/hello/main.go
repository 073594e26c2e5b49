// Command hello is an example zot extension written with zot.dev/zot/sdk/ext:
// a slash command, /hello, that asks the agent to greet someone, and
// /hello-info, which shows what the host told the extension.
//
// Build it beside its manifest, then install it:
//
//	go build -o hello . && zot ext install .
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"zot.dev/zot/sdk/ext"
)

func main() {
	e := ext.New("hello", "1.0.0")
	e.Command("hello", "ask the agent to greet someone: /hello [name]", func(ctx context.Context, args string) ext.Response {
		who := strings.TrimSpace(args)
		if who == "" {
			who = "me"
		}
		return ext.Prompt(fmt.Sprintf("Greet %s in one short, friendly sentence.", who))
	})
	e.Command("hello-info", "show what zot told the extension", func(ctx context.Context, args string) ext.Response {
		h := e.Host()
		return ext.Display(fmt.Sprintf("hello runs in zot %s, provider %s, model %s, data in %s", h.ZotVersion, h.Provider, h.Model, h.DataDir))
	})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := e.Run(ctx); err != nil {
		e.Logf("hello: %v", err)
		os.Exit(1)
	}
}
