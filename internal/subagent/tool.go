package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// ToolName is the name of the task tool.
const ToolName = "task"

// Request is one call of the task tool: the work the child is given.
type Request struct {
	// CallID is the task call's id in the parent's transcript.
	CallID string
	// Description is the task's short title, shown to the user.
	Description string
	// Prompt is the child's first and only user message.
	Prompt string
	// Agent is the profile the model chose; nil for a general-purpose
	// child.
	Agent *Profile
	// Model is the model the call asked for, else the profile's; ""
	// means the parent's.
	Model string
}

// Outcome is what a child came to.
type Outcome struct {
	// Result is the child's result record (its done's result).
	Result *wire.PromptResult
	// Error is the message of the error that ended the child, if any.
	Error string
}

// Runner runs one child to its end and returns what it came to. progress
// receives a line for each step of the child, for the clients that see
// only the task call. An error is a child that could not start.
type Runner func(ctx context.Context, req Request, progress func(string)) (Outcome, error)

// Tool is the task tool.
type Tool struct {
	run      Runner
	profiles []Profile
	desc     string
	schema   json.RawMessage
}

// NewTool returns the task tool, which starts children through run and
// offers profiles to the model by name.
func NewTool(run Runner, profiles []Profile) *Tool {
	t := &Tool{run: run, profiles: profiles}
	t.desc = describe(profiles)
	t.schema = schemaOf(profiles)
	return t
}

// Name returns "task".
func (t *Tool) Name() string { return ToolName }

// Description tells the model what a sub-agent is and lists the profiles.
func (t *Tool) Description() string { return t.desc }

// Schema is the JSON Schema of the arguments.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// ReadOnly reports true: the task call itself changes nothing; each call
// of its child goes through the session's permission mode, rules and
// approvals as the session's own calls do.
func (t *Tool) ReadOnly() bool { return true }

// Concurrent reports true: the task calls of one step run side by side
// (bounded by the session).
func (t *Tool) Concurrent() bool { return true }

// Profiles returns the profiles the tool offers.
func (t *Tool) Profiles() []Profile { return t.profiles }

// args are the task tool's arguments.
type args struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Agent       string `json:"agent"`
	Model       string `json:"model"`
}

// Run starts the child and returns its result record as JSON; a child
// that failed, was aborted or was cut short is an error result that also
// says why.
func (t *Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a args
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return tools.Errorf("invalid arguments: " + strings.TrimPrefix(err.Error(), "json: ") + " (the fields are description, prompt, agent and model)"), nil
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return tools.Errorf(`invalid arguments: "prompt" is required: the whole task, since the sub-agent does not see this conversation`), nil
	}
	req := Request{CallID: call.ID, Description: strings.TrimSpace(a.Description), Prompt: a.Prompt, Model: a.Model}
	if a.Agent != "" && a.Agent != "general" {
		p, ok := Find(t.profiles, a.Agent)
		if !ok {
			return tools.Errorf(fmt.Sprintf("unknown agent %q; the agents are: %s", a.Agent, t.names())), nil
		}
		req.Agent = &p
		if req.Model == "" {
			req.Model = p.Model
		}
	}
	progress := call.Progress
	if progress == nil {
		progress = func(string) {}
	}
	out, err := t.run(ctx, req, progress)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return tools.Errorf(refused.Error()), nil
		}
		return tools.Result{}, err
	}
	return resultOf(out), nil
}

// names lists the profiles' names, general first.
func (t *Tool) names() string {
	names := []string{"general"}
	for _, p := range t.profiles {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// resultOf is the tool result of an outcome: the record as JSON, and
// for a child that did not finish its answer, why.
func resultOf(out Outcome) tools.Result {
	if out.Result == nil {
		return tools.Errorf("the sub-agent ended without a result: " + out.Error)
	}
	data, err := json.Marshal(out.Result)
	if err != nil {
		return tools.Errorf("the sub-agent's result could not be encoded: " + err.Error())
	}
	res := tools.Result{Content: []llm.Block{&llm.TextBlock{Text: string(data)}}}
	switch out.Result.Stop {
	case wire.StopEndTurn:
		if out.Error == "" {
			return res
		}
	}
	res.IsError = true
	why := "the sub-agent did not finish: it stopped with " + string(out.Result.Stop)
	if out.Error != "" {
		why += ": " + out.Error
	}
	res.Content = append(res.Content, &llm.TextBlock{Text: why})
	return res
}

// RefusedError is a task call the session refuses to run (too deep, too
// many children): the model is told why and no child starts.
type RefusedError struct{ Reason string }

// Error returns the reason.
func (e *RefusedError) Error() string { return e.Reason }

// describe is the tool's description: what a sub-agent is for, and the
// profiles.
func describe(profiles []Profile) string {
	var b strings.Builder
	b.WriteString("Start a sub-agent: a new agent with a transcript of its own that works on one task with your tools (or fewer) and returns its result record as JSON: stop, text (its final answer), turns, tool_calls, duration_ms, usage. " +
		"It does not see this conversation, so put everything it needs in prompt, and say what its answer should contain. " +
		"Use it for searches and investigations that would fill your context, and for independent pieces of work: several task calls in one message run side by side. " +
		"Its answer reaches you, not the user: tell the user what matters.")
	b.WriteString("\n\nAgents (the agent argument; general when absent):\n- general: a general-purpose agent with all of your tools.")
	for _, p := range profiles {
		fmt.Fprintf(&b, "\n- %s: %s", p.Name, p.Description)
		if p.Tools != nil {
			fmt.Fprintf(&b, " (tools: %s)", strings.Join(p.Tools, ", "))
		}
	}
	return b.String()
}

// schemaOf is the JSON Schema of the arguments.
func schemaOf(profiles []Profile) json.RawMessage {
	names := []string{"general"}
	for _, p := range profiles {
		names = append(names, p.Name)
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description": map[string]any{"type": "string", "description": "A short title of the task (3 to 7 words), shown to the user."},
			"prompt":      map[string]any{"type": "string", "description": "The task, complete: the sub-agent sees nothing else."},
			"agent":       map[string]any{"type": "string", "enum": names, "description": "The agent to run it; general when absent."},
			"model":       map[string]any{"type": "string", "description": "A model id of this provider for the sub-agent; absent: the agent's, else yours."},
		},
		"required":             []string{"description", "prompt"},
		"additionalProperties": false,
	}
	data, _ := json.Marshal(s)
	return data
}
