// Command todo is a zot extension in the shape of zot's own Go examples:
// `go run .` in its own folder, which is its own module with no
// dependencies. It offers the /todo command and the todo tool.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type frame map[string]any

func main() {
	out := json.NewEncoder(os.Stdout)
	send := func(f frame) { _ = out.Encode(f) }
	var items []string
	send(frame{"type": "hello", "name": "todo", "version": "1.0.0", "capabilities": []string{"commands", "tools"}})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var f struct {
			Type string          `json:"type"`
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		if json.Unmarshal(in.Bytes(), &f) != nil {
			continue
		}
		switch f.Type {
		case "hello_ack":
			send(frame{"type": "register_command", "name": "todo", "description": "add an item, or list them"})
			send(frame{"type": "register_tool", "name": "todo", "description": "list the todo items",
				"schema": frame{"type": "object", "properties": frame{}}})
			send(frame{"type": "ready"})
		case "command_invoked":
			var args string
			_ = json.Unmarshal(f.Args, &args)
			if args = strings.TrimSpace(args); args != "" {
				items = append(items, args)
			}
			wd, _ := os.Getwd()
			send(frame{"type": "command_response", "id": f.ID, "action": "display",
				"display": fmt.Sprintf("todo (%s): %d item(s): %s", wd, len(items), strings.Join(items, "; "))})
		case "tool_call":
			send(frame{"type": "tool_result", "id": f.ID, "content": []frame{{"type": "text", "text": strings.Join(items, "\n")}}})
		case "shutdown":
			return
		}
	}
}
