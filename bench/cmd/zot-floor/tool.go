package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"time"
)

// toolTimeout bounds one tool run.
const toolTimeout = 2 * time.Minute

// bashToolSchema and readToolSchema are the JSON Schemas of the tools'
// arguments.
const (
	bashToolSchema = `{"type":"object","properties":{"command":{"type":"string","description":"The shell command to run"}},"required":["command"]}`
	readToolSchema = `{"type":"object","properties":{"path":{"type":"string","description":"The file to read"}},"required":["path"]}`
)

// runTool runs a tool call: bash with sh -c, giving its combined output,
// or read, giving the file's contents. Any other tool is an error result.
func runTool(ctx context.Context, c call) toolOutput {
	switch c.name {
	case "bash":
		var args struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(c.args, &args); err != nil || args.Command == "" {
			return toolOutput{call: c, text: "bash needs a command argument", isError: true}
		}
		ctx, cancel := context.WithTimeout(ctx, toolTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "sh", "-c", args.Command).CombinedOutput()
		if err != nil {
			return toolOutput{call: c, text: string(out) + err.Error(), isError: true}
		}
		return toolOutput{call: c, text: string(out)}
	case "read":
		var args struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(c.args, &args); err != nil || args.Path == "" {
			return toolOutput{call: c, text: "read needs a path argument", isError: true}
		}
		b, err := os.ReadFile(args.Path)
		if err != nil {
			return toolOutput{call: c, text: err.Error(), isError: true}
		}
		return toolOutput{call: c, text: string(b)}
	}
	return toolOutput{call: c, text: "unknown tool " + c.name, isError: true}
}
