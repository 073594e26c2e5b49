// Command goext is a test extension for zot's extension host written in
// Go with the generated types of sdk/extwire: a tool that echoes and a
// tool_call guard that allows everything. os.Args[1] is the extension's
// name (default "goext").
package main

import (
	"bufio"
	"encoding/json"
	"os"

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
	for in.Scan() {
		f, err := extwire.DecodeHostFrame(in.Bytes())
		if err != nil {
			continue
		}
		switch f := f.(type) {
		case *extwire.ToolCallFrame:
			var args struct{ Text string }
			_ = json.Unmarshal(f.Args, &args)
			emit(&extwire.ToolResultFrame{ID: f.ID, Content: extwire.ToolContents{&extwire.TextContent{Text: "echo: " + args.Text}}})
		case *extwire.EventInterceptFrame:
			emit(&extwire.EventInterceptResponseFrame{ID: f.ID})
		case *extwire.ShutdownFrame:
			emit(&extwire.ShutdownAckFrame{})
			flush()
			return
		}
		flush()
	}
}
