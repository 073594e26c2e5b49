// Command steer steers a running prompt: steer [zot rpc flags...] PROMPT STEER.
package main

import (
	"context"
	"fmt"
	"os"

	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

func main() {
	ctx, a := context.Background(), os.Args[1:]
	c, err := rpcclient.Start(ctx, rpcclient.Options{Args: a[:len(a)-2]}) // zot is $ZOT_BIN, else on PATH
	if err != nil {
		panic(err)
	}
	defer c.Close()
	events, err := c.Prompt(ctx, a[len(a)-2], nil)
	for steer := a[len(a)-1]; err == nil; {
		switch e := (<-events).(type) {
		case *wire.AssistantStartEvent:
			if steer != "" {
				_, err = c.Steer(ctx, steer) // nil channel: the running prompt takes it at its next step
				steer = ""
			}
		case *wire.UserMessageEvent:
			fmt.Fprintf(os.Stderr, "[%s] %s\n", e.Kind, e.Content[0].(*wire.TextBlock).Text)
		case *wire.DoneEvent:
			fmt.Println(e.Result.Text)
			return
		}
	}
	panic(err)
}
