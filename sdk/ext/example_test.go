package ext_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"zot.dev/zot/sdk/ext"
)

// An extension with a slash command and a tool, served to a host that is
// a script here: it acknowledges hello, calls the tool, runs the command
// and shuts the extension down. A real extension calls e.Run(ctx) in
// main, and zot is the host.
func Example() {
	e := ext.New("weather", "1.0.0")
	e.Command("weather", "weather for a city", func(ctx context.Context, args string) ext.Response {
		return ext.Prompt("What is the weather in " + args + "?")
	})
	e.Tool("weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		func(ctx context.Context, args json.RawMessage) ext.ToolResult {
			var in struct{ City string }
			if err := json.Unmarshal(args, &in); err != nil || in.City == "" {
				return ext.ToolError("want a city")
			}
			return ext.Text(in.City + ": 16°C, fog")
		})

	hostR, extW := io.Pipe()
	extR, hostW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- e.Serve(context.Background(), extR, extW); extW.Close() }()

	lines := bufio.NewScanner(hostR)
	read := func(n int) {
		for range n {
			lines.Scan()
			fmt.Println(lines.Text())
		}
	}
	read(3) // hello and the registrations
	fmt.Fprintln(hostW, `{"type":"hello_ack","protocol_version":1,"zot_version":"1","provider":"p","model":"m","cwd":"/","extension_dir":"/x","data_dir":"/x"}`)
	read(1) // ready
	fmt.Fprintln(hostW, `{"type":"tool_call","id":"1","name":"weather","args":{"city":"Berlin"}}`)
	read(1)
	fmt.Fprintln(hostW, `{"type":"command_invoked","id":"2","name":"weather","args":"Oslo"}`)
	read(1)
	fmt.Fprintln(hostW, `{"type":"shutdown"}`)
	read(1)
	hostW.Close()
	fmt.Println("Serve:", <-done)
	// Output:
	// {"type":"hello","name":"weather","version":"1.0.0","capabilities":["commands","tools"],"sends_ready":true}
	// {"type":"register_command","name":"weather","description":"weather for a city"}
	// {"type":"register_tool","name":"weather","description":"Current weather for a city.","schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}
	// {"type":"ready"}
	// {"type":"tool_result","id":"1","content":[{"type":"text","text":"Berlin: 16°C, fog"}]}
	// {"type":"command_response","id":"2","action":"prompt","prompt":"What is the weather in Oslo?"}
	// {"type":"shutdown_ack"}
	// Serve: <nil>
}
