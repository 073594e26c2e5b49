package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Plans and titles. zot recognises a plan by one tool, todo, that every
// ACP session offers the model: its arguments are the whole plan (each
// step's text, status and priority), and each call replaces the plan,
// which goes to the clients as a plan update. The plan is thus part of
// the transcript: session/load tells the last one again. A session's
// title is the first line of its first prompt, sent as
// session_info_update when that prompt is sent and when the session is
// loaded or resumed.

// planToolName is the name of the plan tool.
const planToolName = "todo"

// planTool is the todo tool of one session.
type planTool struct{ s *acpSession }

func (*planTool) Name() string { return planToolName }

// ReadOnly implements tools.ReadOnly: the plan changes nothing outside
// the session, so it is kept in every mode without asking.
func (*planTool) ReadOnly() bool { return true }

func (*planTool) Description() string {
	return "Keep the plan of a task of several steps, shown to the user as a checklist. Call it with " +
		"the whole plan each time: every step with its status (pending, in_progress or completed) and, " +
		"optionally, its priority (high, medium or low). Mark a step in_progress before you start it and " +
		"completed as soon as it is done; keep one step in_progress at a time. Skip it for a task of one " +
		"or two steps."
}

func (*planTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "entries": {
      "type": "array",
      "description": "The whole plan, in order.",
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "description": "What the step does, in a few words."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
          "priority": {"type": "string", "enum": ["high", "medium", "low"]}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["entries"],
  "additionalProperties": false
}`)
}

// Run replaces the plan and sends it to the session's clients.
func (t *planTool) Run(_ context.Context, call tools.Call) (tools.Result, error) {
	plan, err := decodePlan(call.Args)
	if err != nil {
		return tools.Errorf("invalid arguments: " + err.Error()), nil
	}
	t.s.push(item{update: &acp.SessionUpdate{Plan: plan}})
	done := 0
	for _, e := range plan.Entries {
		if e.Status == acp.PlanEntryStatusCompleted {
			done++
		}
	}
	return tools.Text(fmt.Sprintf("The plan has %d steps, %d completed.", len(plan.Entries), done)), nil
}

// decodePlan checks and reads the arguments of a todo call.
func decodePlan(args json.RawMessage) (*acp.Plan, error) {
	var in struct {
		Entries *[]struct {
			Content  *string `json:"content"`
			Status   string  `json:"status"`
			Priority string  `json:"priority"`
		} `json:"entries"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	if in.Entries == nil {
		return nil, fmt.Errorf(`missing required field "entries"`)
	}
	plan := &acp.Plan{Entries: make([]acp.PlanEntry, 0, len(*in.Entries))}
	for i, e := range *in.Entries {
		if e.Content == nil || strings.TrimSpace(*e.Content) == "" {
			return nil, fmt.Errorf("entries[%d].content must be a step's text", i)
		}
		switch acp.PlanEntryStatus(e.Status) {
		case acp.PlanEntryStatusPending, acp.PlanEntryStatusInProgress, acp.PlanEntryStatusCompleted:
		default:
			return nil, fmt.Errorf("entries[%d].status must be pending, in_progress or completed, got %q", i, e.Status)
		}
		prio := acp.PlanEntryPriority(e.Priority)
		switch prio {
		case "":
			prio = acp.PlanEntryPriorityMedium
		case acp.PlanEntryPriorityHigh, acp.PlanEntryPriorityMedium, acp.PlanEntryPriorityLow:
		default:
			return nil, fmt.Errorf("entries[%d].priority must be high, medium or low, got %q", i, e.Priority)
		}
		plan.Entries = append(plan.Entries, acp.PlanEntry{Content: *e.Content, Status: acp.PlanEntryStatus(e.Status), Priority: prio})
	}
	return plan, nil
}

// addPlanTool offers the session's model the todo tool.
func (s *acpSession) addPlanTool() {
	s.eng.Tools().Set("acp:plan", []tools.Tool{&planTool{s: s}})
}

// lastPlan returns the plan of the transcript's last todo call, or nil.
func lastPlan(msgs []llm.Message) *acp.Plan {
	for i := len(msgs) - 1; i >= 0; i-- {
		if !hasCall(&msgs[i], planToolName) {
			continue
		}
		m := agent.WireMessage(&msgs[i])
		for j := len(m.Content) - 1; j >= 0; j-- {
			if b, ok := m.Content[j].(*wire.ToolCallBlock); ok && b.Name == planToolName {
				if plan, err := decodePlan(b.Args); err == nil {
					return plan
				}
			}
		}
	}
	return nil
}

// titleOf makes a title of a prompt's text: its first line, at most 80
// characters.
func titleOf(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	// Counted rune by rune up to the 81st, never converted whole: the
	// first line of a huge prompt may be all of it.
	n, cut := 0, 0
	for i := range text {
		if n == 79 {
			cut = i
		}
		if n == 80 {
			return strings.TrimSpace(text[:cut]) + "…"
		}
		n++
	}
	return text
}

// title returns the session's title: the first line of its first
// prompt, or "" before it has one.
func (s *acpSession) title() string {
	s.mu.Lock()
	t := s.x.title
	s.mu.Unlock()
	if t != "" {
		return t
	}
	msgs := s.eng.Transcript()
	for i := range msgs {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		m := agent.WireMessage(&msgs[i]) // one at a time: a long transcript is not converted whole
		for _, b := range m.Content {
			if tb, ok := b.(*wire.TextBlock); ok && strings.TrimSpace(tb.Text) != "" {
				t = titleOf(tb.Text)
				s.mu.Lock()
				s.x.title = t
				s.mu.Unlock()
				return t
			}
		}
	}
	return ""
}

// titleFrom gives an untitled session the title of its first prompt and
// tells every client.
func (s *acpSession) titleFrom(prompt []acp.ContentBlock) {
	s.mu.Lock()
	if s.x.title != "" {
		s.mu.Unlock()
		return
	}
	for _, b := range prompt {
		if b.Text != nil && strings.TrimSpace(b.Text.Text) != "" {
			s.x.title = titleOf(b.Text.Text)
			break
		}
	}
	t := s.x.title
	s.mu.Unlock()
	if t != "" {
		s.push(item{update: &acp.SessionUpdate{SessionInfoUpdate: &acp.SessionInfoUpdate{Title: &t}}})
	}
}

// hasCall reports whether m calls the tool name.
func hasCall(m *llm.Message, name string) bool {
	for _, b := range m.Content {
		if c, ok := b.(*llm.ToolCallBlock); ok && c.Name == name {
			return true
		}
	}
	return false
}
