// guard is an extension of intercepts and event observers written against
// upstream zot's Go extension package; only its import line names
// zot.dev/zot's compatibility package instead. The tests of cmd/zot build
// it and drive it through `zot rpc`.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	ext "zot.dev/zot/sdk/ext/compat"
)

var (
	deleteAll = regexp.MustCompile(`\brm\s+-[a-z]*r[a-z]*f?\s+/`)
	secretKey = regexp.MustCompile(`sk-[A-Za-z0-9]+`)
)

type journal struct {
	mu     sync.Mutex
	lines  []string
	locked bool
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
}

func main() {
	e := ext.New("guard", "2.1.0")
	j := &journal{}

	var onTool ext.ToolCallHandler = func(toolName string, args json.RawMessage) ext.ToolCallDecision {
		if toolName != "bash" {
			return ext.ToolCallDecision{}
		}
		var in struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return ext.ToolCallDecision{Block: true, Reason: "guard cannot read the bash arguments"}
		}
		if deleteAll.MatchString(in.Command) {
			e.Notify("warn", "guard refused: "+in.Command)
			return ext.ToolCallDecision{Block: true, Reason: "guard: deleting from / is not allowed"}
		}
		if rest, ok := strings.CutPrefix(in.Command, "sudo "); ok {
			out, _ := json.Marshal(map[string]string{"command": rest})
			return ext.ToolCallDecision{Reason: "dropped sudo", ModifiedArgs: out}
		}
		if strings.Contains(in.Command, "#raw") {
			// Not an object: the rewrite is ignored and the call runs as is.
			return ext.ToolCallDecision{ModifiedArgs: json.RawMessage(`["not","an","object"]`)}
		}
		return ext.ToolCallDecision{}
	}
	e.InterceptToolCallX(onTool)

	var onTurn ext.TurnStartHandler = func(step int) ext.TurnStartDecision {
		j.mu.Lock()
		locked := j.locked
		j.mu.Unlock()
		if locked {
			return ext.TurnStartDecision{Block: true, Reason: "guard: the workspace is locked"}
		}
		return ext.TurnStartDecision{}
	}
	e.InterceptTurnStart(onTurn)

	var onMessage ext.AssistantMessageHandler = func(text string) ext.AssistantMessageDecision {
		if strings.Contains(text, "CLASSIFIED") {
			return ext.AssistantMessageDecision{Block: true, Reason: "classified"}
		}
		return ext.AssistantMessageDecision{ReplaceText: secretKey.ReplaceAllString(text, "[redacted]")}
	}
	e.InterceptAssistantMessage(onMessage)

	var onStart ext.BeforeAgentStartHandler = func(ev ext.BeforeAgentStartEvent) *string {
		p := ev.SystemPrompt + "\nNever run rm -rf."
		return &p
	}
	e.InterceptBeforeAgentStart(onStart)

	var observe ext.EventHandler = func(ev ext.Event) {
		switch ev.Name {
		case "session_start":
			j.add("session_start")
		case "turn_start":
			j.add("turn_start %d", ev.Step)
		case "turn_end":
			j.add("turn_end %s%s", ev.Stop, ev.Error)
		case "tool_call":
			j.add("tool_call %v %s %s", ev.ToolID != "", ev.ToolName, ev.ToolArgs)
		case "assistant_message":
			j.add("assistant_message %s", ev.Text)
		}
	}
	for _, name := range []string{"session_start", "turn_start", "turn_end", "tool_call", "assistant_message"} {
		e.On(name, observe)
	}
	// Events upstream zot emits and zot does not: the handler never runs.
	e.On("tool_result", func(ev ext.Event) {
		var r *ext.EventResult = ev.Result
		if r != nil && !r.Truncated && !r.IsError && ev.Executed != nil && len(r.Content) > 0 {
			j.add("tool_result %s", r.Content[0].Text)
		}
	})
	e.On("subagent_start", func(ev ext.Event) {
		j.add("%s %s %s %s %d %s %d %s %s %s %s %s %s %v %v %s %s %v %s",
			ev.AgentID, ev.AgentName, ev.AgentRunID, ev.SessionID, ev.Sequence, ev.CWD, ev.ImageCount,
			ev.Status, ev.Reason, ev.Source, ev.Decision, ev.Stage, ev.CompactionID, ev.MessageCount,
			ev.TokenEstimate, ev.ToolPreview, ev.ToolArgsRaw, ev.Queued, ev.Name)
	})

	e.Command("guard-lock", "refuse every model call", func(args string) ext.Response {
		j.mu.Lock()
		j.locked = args != "off"
		j.mu.Unlock()
		return ext.Display("locked: " + fmt.Sprint(args != "off"))
	})
	e.Command("guard-log", "what the guard saw", func(args string) ext.Response {
		j.mu.Lock()
		defer j.mu.Unlock()
		return ext.Display(strings.Join(j.lines, "\n"))
	})

	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}
