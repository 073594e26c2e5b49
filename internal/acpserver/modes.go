package acpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
)

// Session modes are the engine's permission modes (engine.AllModes),
// chosen per session with session/set_mode or /mode and told with
// current_mode_update. The daemon's --permission gives the first mode of
// every session: ask (and --approve) → ask, allow → auto, deny →
// read_only; under deny read_only is the only mode.

func ptr[T any](v T) *T { return &v }

// sessionExtras is the state of a session that model choice, commands,
// plans and client terminals keep; guarded by session.mu.
type sessionExtras struct {
	terminals map[string]acp.TerminalId // tool call id → the client terminal it runs in
	title     string                    // the first line of the first prompt (plan.go)
	extTold   func()                    // stops telling the extensions' commands (commands.go)
	unheard   []item                    // notices no client heard yet (notify.go)
}

// acpModes returns the engine's modes in their ACP form.
func acpModes(list []engine.ModeInfo) []acp.SessionMode {
	out := make([]acp.SessionMode, len(list))
	for i, m := range list {
		out[i] = acp.SessionMode{ID: acp.SessionModeId(m.ID), Name: m.Name, Description: ptr(m.Description)}
	}
	return out
}

// mode returns the session's current mode.
func (s *acpSession) mode() string { return string(s.eng.Mode()) }

// modeState is the session's modes for session/new, load and resume.
func (s *acpSession) modeState() *acp.SessionModeState {
	return &acp.SessionModeState{CurrentModeID: acp.SessionModeId(s.mode()), AvailableModes: acpModes(s.eng.Modes())}
}

// setMode serves session/set_mode: the session's mode changes, and
// every client that has it open is told with current_mode_update.
func (h *conn) setMode(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SetSessionModeRequest
	if err := decode(req, &p, "sessionId", "modeId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(string(p.SessionID))
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if err := s.eng.SetMode(engine.PermissionMode(p.ModeID)); err != nil {
		return jsonrpc.Fail(s.agent.errorOf(err, s.id, "modeId"))
	}
	s.tellMode()
	return jsonrpc.Result(acp.SetSessionModeResponse{})
}

// tellMode tells every client of the session its mode.
func (s *acpSession) tellMode() {
	s.push(item{update: &acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: acp.SessionModeId(s.mode())}}})
}

// The ids of the config options: the model, and the reasoning level
// (ACP's thought_level category).
const (
	configModelID   = "model"
	configThoughtID = "thought_level"
	// thoughtDefault is the thought_level value for the model's own
	// default.
	thoughtDefault = "default"
)

// configOption is one session config option as ACP's schema has it, a
// select. It is written here rather than as acp.SessionConfigOption
// because the select's choices are an untagged union (values or groups)
// that the generated types keep as JSON text; tests validate it against
// the schema.
type configOption struct {
	Type         string         `json:"type"`
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Category     string         `json:"category,omitempty"`
	CurrentValue string         `json:"currentValue"`
	Options      []configChoice `json:"options"`
}

// configChoice is one value of a select option.
type configChoice struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// configOptions are the session's config options: the model, chosen
// among the catalog's models of the session's provider.
func (s *acpSession) configOptions() []configOption {
	current := s.eng.Model()
	list := s.eng.Models()
	choices := make([]configChoice, 0, len(list)+1)
	seen := false
	for _, m := range list {
		seen = seen || m.ID == current
		choices = append(choices, configChoice{Value: m.ID, Name: m.ID, Description: engine.ModelSummary(m)})
	}
	if !seen {
		choices = append([]configChoice{{Value: current, Name: current}}, choices...)
	}
	opts := []configOption{{
		Type: "select", ID: configModelID, Name: "Model", Category: "model",
		Description:  "The " + s.eng.Provider() + " model that answers",
		CurrentValue: current, Options: choices,
	}}
	if levels := s.levels(current); len(levels) > 0 {
		level := s.eng.Reasoning()
		if level == "" {
			level = thoughtDefault
		}
		thought := configOption{
			Type: "select", ID: configThoughtID, Name: "Thinking", Category: "thought_level",
			Description:  "How much the model reasons, among the levels it takes",
			CurrentValue: level, Options: []configChoice{{Value: thoughtDefault, Name: "default", Description: "the model's own default"}},
		}
		for _, l := range levels {
			thought.Options = append(thought.Options, configChoice{Value: l, Name: l})
		}
		opts = append(opts, thought)
	}
	return opts
}

// levels returns the reasoning levels model takes, as the catalog says.
func (s *acpSession) levels(model string) []string {
	for _, m := range s.eng.Models() {
		if m.ID == model {
			out := make([]string, len(m.ReasoningLevels))
			for i, l := range m.ReasoningLevels {
				out[i] = string(l)
			}
			return out
		}
	}
	return nil
}

// rawConfigOptions returns the config options as JSON, for the answers
// whose generated types cannot hold them.
func (s *acpSession) rawConfigOptions() json.RawMessage {
	b, err := json.Marshal(s.configOptions())
	if err != nil {
		panic(fmt.Sprintf("acpserver: encoding config options: %v", err)) // plain structs always encode
	}
	return b
}

// setConfigOption serves session/set_config_option: the model changes
// (refused as busy while a turn runs); the answer and a
// config_option_update to every client that has the session open carry
// every option.
func (h *conn) setConfigOption(req *jsonrpc.Request) jsonrpc.Reply {
	var p struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Value     json.RawMessage `json:"value"`
	}
	if err := decode(req, &p, "sessionId", "configId", "value"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	opts := s.configOptions()
	i := slices.IndexFunc(opts, func(o configOption) bool { return o.ID == p.ConfigID })
	if i < 0 {
		ids := make([]string, len(opts))
		for j, o := range opts {
			ids[j] = o.ID
		}
		return jsonrpc.Fail(jsonrpc.InvalidParams("configId", "%q is not an option of this session (%s)", p.ConfigID, strings.Join(ids, ", ")))
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil {
		return jsonrpc.Fail(jsonrpc.InvalidParams("value", "must be one of the option's values (a string)"))
	}
	if !slices.ContainsFunc(opts[i].Options, func(c configChoice) bool { return c.Value == value }) {
		if p.ConfigID == configThoughtID {
			return jsonrpc.Fail(jsonrpc.InvalidParams("value", "%q is not a reasoning level of %s", value, s.eng.Model()))
		}
		return jsonrpc.Fail(jsonrpc.InvalidParams("value", "%q is not a %s model of the catalog", value, s.eng.Provider()))
	}
	model, level := value, (*string)(nil)
	if p.ConfigID == configThoughtID {
		model = s.eng.Model()
		if value == thoughtDefault {
			value = ""
		}
		level = &value
	} else if cur := s.eng.Reasoning(); cur != "" && !slices.Contains(s.levels(model), cur) {
		// The new model does not take the current level: it goes back to
		// the model's default rather than refusing the switch.
		empty := ""
		level = &empty
	}
	if err := s.eng.SetModelReasoning(model, level); err != nil {
		return jsonrpc.Fail(s.agent.errorOf(err, s.id, "value"))
	}
	raw := s.rawConfigOptions()
	s.push(item{note: configUpdate{SessionID: s.id, Update: configUpdateBody{Kind: "config_option_update", ConfigOptions: raw}}})
	return jsonrpc.Result(struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
	}{raw})
}

// configUpdate is a session/update carrying config_option_update, whose
// generated type cannot hold the options' ids.
type configUpdate struct {
	SessionID string           `json:"sessionId"`
	Update    configUpdateBody `json:"update"`
}

type configUpdateBody struct {
	Kind          string          `json:"sessionUpdate"`
	ConfigOptions json.RawMessage `json:"configOptions"`
}

// newAnswer is the answer to session/new: the id, the modes and the
// config options.
func (s *acpSession) newAnswer() any {
	return struct {
		SessionID     string                `json:"sessionId"`
		Modes         *acp.SessionModeState `json:"modes"`
		ConfigOptions json.RawMessage       `json:"configOptions"`
	}{s.id, s.modeState(), s.rawConfigOptions()}
}

// openAnswer is the answer to session/load and session/resume: the modes
// and the config options.
func (s *acpSession) openAnswer() any {
	return struct {
		Modes         *acp.SessionModeState `json:"modes"`
		ConfigOptions json.RawMessage       `json:"configOptions"`
	}{s.modeState(), s.rawConfigOptions()}
}
