// Command steer steers a running prompt: steer [zot rpc flags...] PROMPT STEER.
package main

import (
	"context"
	"fmt"
	"os"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

func main() {
	ctx, a := context.Background(), os.Args[1:]
	c := client.Must(rpcclient.Start(ctx, rpcclient.Options{Args: a[:len(a)-2]})) // zot is $ZOT_BIN, else on PATH
	defer c.Close()
	events := client.Must(c.Prompt(ctx, a[len(a)-2], nil))
	client.Must(c.Steer(ctx, a[len(a)-1])) // a nil channel: the running prompt takes it at its next step
	for ev := range events {
		switch e := ev.(type) {
		case *wire.UserMessageEvent:
			fmt.Fprintf(os.Stderr, "[%s] %s\n", e.Kind, e.Content.Text())
		case *wire.DoneEvent:
			fmt.Println(e.Result.Text)
		}
	}
}
