// Command structured asks for an answer in a JSON shape and prints the prompt's record: structured [zot rpc flags...] QUESTION.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
)

const city = `{"type":"object","properties":{"city":{"type":"string"},"population":{"type":"integer"}},"required":["city","population"]}`

func main() {
	ctx, args := context.Background(), os.Args[1:]
	c := client.Must(rpcclient.Start(ctx, rpcclient.Options{Args: args[:len(args)-1]})) // zot is $ZOT_BIN, else on PATH
	defer c.Close()
	res := client.Must(client.Run(ctx, c, args[len(args)-1], client.PromptOptions{OutputSchema: json.RawMessage(city)}))
	fmt.Println(string(res.Structured))
	fmt.Fprintf(os.Stderr, "%s: %d turns, %d tool calls, %d+%d tokens, $%.4f\n", res.Stop, res.Turns, res.ToolCalls, res.Usage.Input, res.Usage.Output, res.Usage.CostUSD)
}
