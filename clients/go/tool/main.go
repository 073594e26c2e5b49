// Command tool gives the model a Go function as a tool: tool [zot rpc flags...] MESSAGE.
package main

import (
	"context"
	"fmt"
	"os"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

func weather(_ context.Context, in struct{ City string }) (string, error) {
	return "fog in " + in.City, nil
}

func main() {
	ctx, args := context.Background(), os.Args[1:]
	c := client.Must(rpcclient.Start(ctx, rpcclient.Options{Args: args[:len(args)-1]})) // zot is $ZOT_BIN, else on PATH
	defer c.Close()
	client.Must(c.RegisterTools(ctx, client.MustTool("weather", "The weather in a city.", weather)))
	for ev := range client.Must(c.Prompt(ctx, args[len(args)-1], nil)) {
		if d, ok := ev.(*wire.TextDeltaEvent); ok {
			fmt.Print(d.Delta)
		}
	}
	fmt.Println()
}
