package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

// open starts zot in this process, or in a `zot rpc` subprocess: the one
// line a program changes to move it.
func open(ctx context.Context, dir string, outOfProcess bool) (client.Client, error) {
	if outOfProcess {
		c, err := rpcclient.Start(ctx, rpcclient.Options{Args: []string{"--provider", "scripted", "--cwd", dir}})
		if err != nil {
			return nil, err // not c: a nil *rpcclient.Client is a non-nil client.Client
		}
		return c, nil
	}
	rt, err := sdk.New(sdk.Config{Provider: "scripted", CWD: dir})
	if err != nil {
		return nil, err
	}
	return rt, nil
}

// A program written against client.Client runs zot in process or out of
// it alike.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	c, err := open(ctx, dir, false) // true: the same through `zot rpc`
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	events, err := c.Prompt(ctx, "hello", nil)
	if err != nil {
		log.Fatal(err)
	}
	var tools []string
	for ev := range events { // closed after the done
		if call, ok := ev.(*wire.ToolCallEvent); ok {
			tools = append(tools, call.Name)
		}
	}
	st, err := c.State(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tools:", tools)
	fmt.Println("messages:", st.MessageCount)
	// Output:
	// tools: [bash]
	// messages: 4
}
