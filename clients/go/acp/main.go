// Command acp sends its argument to the zot daemon listening at $ZOT_URL
// (with the token $ZOT_TOKEN) and prints the answer as it streams.
package main

import (
	"context"
	"fmt"
	"os"

	"zot.dev/zot/sdk/acpclient"
)

func main() {
	ctx := context.Background()
	c, err := acpclient.Dial(ctx, os.Getenv("ZOT_URL"), acpclient.Options{Output: os.Stdout, OnPermission: acpclient.AllowOnce})
	if err == nil {
		defer c.Close()
		cwd, _ := os.Getwd()
		var id string
		if id, err = c.NewSession(ctx, cwd); err == nil {
			var res acpclient.PromptResult
			res, err = c.Prompt(ctx, id, os.Args[1])
			fmt.Println("\nstop:", res.StopReason)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acp:", err)
	}
}
