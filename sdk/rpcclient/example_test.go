package rpcclient_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

// Runs one prompt on the offline scripted provider, printing the answer
// as it streams and the tools the model calls.
func Example() {
	ctx := context.Background()
	c, err := rpcclient.Start(ctx, rpcclient.Options{
		Bin:  "zot",
		Args: []string{"--provider", "scripted"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	events, err := c.Prompt(ctx, "list the files", nil)
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events { // closed after the done
		switch ev := ev.(type) {
		case *wire.TextDeltaEvent:
			fmt.Print(ev.Delta)
		case *wire.ToolCallEvent:
			fmt.Printf("\n[%s %s]\n", ev.Name, ev.Args)
		case *wire.ErrorEvent:
			log.Printf("the prompt failed: %s (%s)", ev.Message, ev.Code)
		}
	}
}

// Commands the server refuses return an *Error with a stable code.
func ExampleError() {
	ctx := context.Background()
	c, err := rpcclient.Start(ctx, rpcclient.Options{Args: []string{"--provider", "scripted"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	err = c.SetModel(ctx, "") // an empty id names no model
	var zerr *rpcclient.Error
	if errors.As(err, &zerr) && zerr.Code == wire.CodeUnknownModel {
		fmt.Println("no such model")
	}
}
