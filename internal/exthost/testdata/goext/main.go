// Command goext is a test extension for zot's extension host written in
// Go with the generated types of sdk/extwire: a tool that echoes and a
// tool_call guard that allows everything. os.Args[1] is the extension's
// name (default "goext"), os.Args[2] its mode: ok (the default), or one
// of the misbehaving ones: silent (never says hello), garbage (writes
// frames that are not JSON, too long, of an unknown type, or answer
// nothing), crash_on_tool (exits with status 5 on a tool call),
// hang_intercept (never answers an intercept), stubborn (ignores
// shutdown, the end of its input and SIGTERM). Its <name>_slow tool never
// answers.
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
	"os/signal"
	"strings"
	"syscall"
	"time"

	"zot.dev/zot/internal/wirecodec"
	"zot.dev/zot/sdk/extwire"
)

func main() {
	name, mode := "goext", "ok"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	if len(os.Args) > 2 {
		mode = os.Args[2]
	}
	if mode == "silent" {
		sleepForever()
	}
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	out := bufio.NewWriter(os.Stdout)
	var buf []byte
	emit := func(f extwire.ExtensionFrame) {
		buf = append(f.AppendJSON(buf[:0]), '\n')
		out.Write(buf)
	}
	flush := func() { out.Flush() }

	note := func(msg string) { emit(&extwire.NotifyFrame{Level: extwire.NotifyLevelInfo, Message: msg}) }

	emit(&extwire.HelloFrame{Name: name, Version: "1.0.0"})
	if mode == "garbage" {
		out.WriteString("not json {\n")
		out.WriteString(strings.Repeat("x", 5000) + "\n") // over the test's frame limit
		out.WriteString(`{"type":"teleport"}` + "\n")
		out.WriteString(`{"type":"tool_result","id":"999","content":[]}` + "\n")
	}
	emit(&extwire.RegisterToolFrame{Name: name + "_echo", Description: "echo the text",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)})
	slowTimeout := int64(300)
	emit(&extwire.RegisterToolFrame{Name: name + "_slow", Description: "never answers", TimeoutMs: &slowTimeout})
	emit(&extwire.SubscribeFrame{Intercept: []extwire.InterceptEvent{extwire.InterceptEventToolCall}})
	emit(&extwire.ReadyFrame{})
	flush()

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	var call struct {
		ID   string `json:"id"`
		Name string `json:"name"`
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
			call.ID, call.Name, call.Args.Text = "", "", ""
			if json.Unmarshal(line, &call) != nil || call.Name == name+"_slow" {
				continue
			}
			if mode == "crash_on_tool" {
				os.Exit(5)
			}
			text.Text = "echo: " + call.Args.Text
			result.ID, result.Content = call.ID, contents
			emit(&result)
		case extwire.TypeEventInterceptFrame:
			var f struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(line, &f) != nil || mode == "hang_intercept" {
				continue
			}
			emit(&extwire.EventInterceptResponseFrame{ID: f.ID})
		case extwire.TypeCancelFrame:
			var f struct {
				ID     string `json:"id"`
				Reason string `json:"reason"`
			}
			if json.Unmarshal(line, &f) != nil {
				continue
			}
			note("cancel " + f.ID + " " + f.Reason)
		case extwire.TypeShutdownFrame:
			if mode == "stubborn" {
				note("shutdown ignored")
				break
			}
			emit(&extwire.ShutdownAckFrame{})
			flush()
			return
		default:
			continue
		}
		flush()
	}
	if mode == "stubborn" {
		sleepForever()
	}
}

// sleepForever blocks: a timer, unlike select {}, is no deadlock to the
// runtime.
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}
