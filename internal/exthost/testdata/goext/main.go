// Command goext is a test extension for zot's extension host written in
// Go with the generated types of sdk/extwire: a tool that echoes and a
// tool_call guard that allows everything. os.Args[1] is the extension's
// name (default "goext").
//
// It is also the extension of the host's benchmarks, so it does as little
// as a careful Go extension would per frame: one decode of what it needs
// (the frame's type is peeked, then one typed pass reads the id and the
// argument together), one encode into a reused buffer, one write.
package main

import (
	"bufio"
	"encoding/json"
	"os"

	"zot.dev/zot/internal/wirecodec"
	"zot.dev/zot/sdk/extwire"
)

func main() {
	name := "goext"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	out := bufio.NewWriter(os.Stdout)
	var buf []byte
	emit := func(f extwire.ExtensionFrame) {
		buf = append(f.AppendJSON(buf[:0]), '\n')
		out.Write(buf)
	}
	flush := func() { out.Flush() }

	emit(&extwire.HelloFrame{Name: name, Version: "1.0.0"})
	emit(&extwire.RegisterToolFrame{Name: name + "_echo", Description: "echo the text",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)})
	emit(&extwire.SubscribeFrame{Intercept: []extwire.InterceptEvent{extwire.InterceptEventToolCall}})
	emit(&extwire.ReadyFrame{})
	flush()

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	var call struct {
		ID   string `json:"id"`
		Args struct {
			Text string `json:"text"`
		} `json:"args"`
	}
	var result extwire.ToolResultFrame
	text := &extwire.TextContent{}
	contents := extwire.ToolContents{text}
	for in.Scan() {
		line := in.Bytes()
		typ, err := wirecodec.PeekType(line)
		if err != nil {
			continue
		}
		switch typ {
		case extwire.TypeToolCallFrame:
			call.ID, call.Args.Text = "", ""
			if json.Unmarshal(line, &call) != nil {
				continue
			}
			text.Text = "echo: " + call.Args.Text
			result.ID, result.Content = call.ID, contents
			emit(&result)
		case extwire.TypeEventInterceptFrame:
			var f struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(line, &f) != nil {
				continue
			}
			emit(&extwire.EventInterceptResponseFrame{ID: f.ID})
		case extwire.TypeShutdownFrame:
			emit(&extwire.ShutdownAckFrame{})
			flush()
			return
		default:
			continue
		}
		flush()
	}
}
