package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"time"
)

// toolTimeout bounds one tool run.
const toolTimeout = 2 * time.Minute

// bashToolSchema is the JSON Schema of the bash tool's arguments.
const bashToolSchema = `{"type":"object","properties":{"command":{"type":"string","description":"The shell command to run"}},"required":["command"]}`

// runTool runs a bash tool call with sh -c and returns its combined output.
// Any other tool is an error result.
func runTool(ctx context.Context, c call) toolOutput {
	if c.name != "bash" {
		return toolOutput{call: c, text: "unknown tool " + c.name, isError: true}
	}
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
}
