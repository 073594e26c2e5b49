package engine

import (
	"fmt"
	"slices"
	"strings"

	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/settings"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/wire"
)

// PermissionMode says what the calls a session's approval covers (write,
// edit, bash, and with SessionConfig.ApproveOtherTools every tool that
// may change things) need before they run. The engine decides what a mode
// lets through before anybody is asked; only what is left goes to the
// Approver or to the door. It is the wire's type (schema/rpc).
type PermissionMode = wire.PermissionMode

// The permission modes, in the order a client lists them.
const (
	// ModeAsk asks before each covered call.
	ModeAsk = wire.PermissionModeAsk
	// ModeAcceptEdits runs write and edit without asking and asks before
	// the other covered calls.
	ModeAcceptEdits = wire.PermissionModeAcceptEdits
	// ModeAuto runs every call without asking.
	ModeAuto = wire.PermissionModeAuto
	// ModeReadOnly refuses every covered call without asking.
	ModeReadOnly = wire.PermissionModeReadOnly
)

// ModeInfo describes one permission mode for people.
type ModeInfo struct {
	ID          PermissionMode
	Name        string
	Description string
}

// AllModes are the permission modes, in the order a client lists them.
var AllModes = []ModeInfo{
	{ModeAsk, "Ask", "Ask before every file change and command"},
	{ModeAcceptEdits, "Accept edits", "Change files without asking; ask before commands"},
	{ModeAuto, "Full auto", "Change files and run commands without asking"},
	{ModeReadOnly, "Read only", "Refuse file changes and commands"},
}

// editTools are the tools accept_edits runs without asking.
var editTools = []string{"write", "edit"}

// ModeOfPermission returns the first mode the command-line policy gives
// a session: ask (and --approve) → ask, allow → auto, deny → read_only;
// locked is true for deny, whose sessions offer no other mode.
func ModeOfPermission(policy string) (mode PermissionMode, locked bool, err error) {
	switch policy {
	case "ask":
		return ModeAsk, false, nil
	case "allow":
		return ModeAuto, false, nil
	case "deny":
		return ModeReadOnly, true, nil
	}
	return "", false, fmt.Errorf("permission %q: want ask, allow or deny", policy)
}

// ModeError says a session does not offer a mode.
type ModeError struct {
	Mode    PermissionMode
	Offered []PermissionMode
}

// Error returns the message of the ModeError.
func (e *ModeError) Error() string {
	ids := make([]string, len(e.Offered))
	for i, m := range e.Offered {
		ids[i] = string(m)
	}
	if len(e.Offered) == 1 {
		return fmt.Sprintf("%q is not a mode of this session: it is %s only (zot runs with --permission deny)", e.Mode, e.Offered[0])
	}
	return fmt.Sprintf("%q is not a permission mode (%s)", e.Mode, strings.Join(ids, ", "))
}

// ErrorCode returns invalid_params: the mode is the caller's to change.
func (e *ModeError) ErrorCode() wire.ErrorCode { return wire.CodeInvalidParams }

// modeVerdict is what the mode decides about a covered call of tool
// before anybody is asked: run it, refuse it (with why), or ask.
type modeVerdict int

const (
	modeRuns modeVerdict = iota
	modeRefuses
	modeAsks
)

// decide returns what mode m decides about a covered call of tool.
func decide(m PermissionMode, tool string) modeVerdict {
	switch m {
	case ModeAuto:
		return modeRuns
	case ModeReadOnly:
		return modeRefuses
	case ModeAcceptEdits:
		if slices.Contains(editTools, tool) {
			return modeRuns
		}
	}
	return modeAsks
}

// Mode returns the session's permission mode.
func (s *Session) Mode() PermissionMode {
	s.approval.mu.Lock()
	defer s.approval.mu.Unlock()
	return s.approval.mode
}

// Modes returns the modes the session offers, in the order a client lists
// them: all four, or only read_only under --permission deny.
func (s *Session) Modes() []ModeInfo {
	if s.approval.locked {
		mode := s.Mode()
		i := slices.IndexFunc(AllModes, func(m ModeInfo) bool { return m.ID == mode })
		return AllModes[i : i+1]
	}
	return AllModes
}

// SetMode switches the session's permission mode; the next covered call
// sees it (also while work runs). It fails with a *ModeError for a mode
// the session does not offer.
func (s *Session) SetMode(mode PermissionMode) error {
	offered := s.Modes()
	if !slices.ContainsFunc(offered, func(m ModeInfo) bool { return m.ID == mode }) {
		ids := make([]PermissionMode, len(offered))
		for i, m := range offered {
			ids[i] = m.ID
		}
		return &ModeError{Mode: mode, Offered: ids}
	}
	s.approval.mu.Lock()
	s.approval.mode = mode
	s.approval.mu.Unlock()
	// A sandbox chosen by the mode follows it (sandbox.go).
	s.sboxMu.Lock()
	s.applySandbox()
	s.sboxMu.Unlock()
	return nil
}

// RunsUnasked reports whether a call of tool runs without waiting for a
// decision under the current mode: it is not covered by the approval, or
// the mode lets it through (auto; write and edit under accept_edits).
// A call the mode refuses does not run unasked.
func (s *Session) RunsUnasked(tool string) bool {
	if !s.approval.covers(tool) {
		return true
	}
	return decide(s.Mode(), tool) == modeRuns
}

// firstMode is the mode a session starts in: cfg.Mode, else ask when
// somebody answers approvals, else auto.
func firstMode(cfg SessionConfig) (PermissionMode, error) {
	mode := cfg.Mode
	if mode == "" {
		if cfg.Approve != nil || cfg.AnswerApprovals {
			return ModeAsk, nil
		}
		return ModeAuto, nil
	}
	if !slices.ContainsFunc(AllModes, func(m ModeInfo) bool { return m.ID == mode }) {
		return "", &ModeError{Mode: mode, Offered: []PermissionMode{ModeAsk, ModeAcceptEdits, ModeAuto, ModeReadOnly}}
	}
	return mode, nil
}

// PermissionRules say which permission rules (internal/settings,
// docs/settings.md) a session applies: a rule allows or denies a tool,
// optionally only the bash commands or the paths a pattern matches. Deny
// wins over allow, wherever each is written, and over every mode; an
// allow rule runs a call without asking in the modes that would ask.
// The files are read again when they change.
type PermissionRules struct {
	// Home is a zot home: the rules of its config.json apply (those of
	// every folder, and those saved for the session's folder or one
	// above it), and an AllowAlways answer with Save is kept there.
	// Empty: no config.json, and no answer can be saved.
	Home string
	// Project also applies the rules of the session's CWD/.zot/
	// settings.json: its deny rules always, its allow rules only in a
	// folder Home's trust store trusts (zot trust), or with TrustProject.
	Project bool
	// TrustProject applies the project's allow rules whether or not the
	// folder is trusted, as --trust-project does.
	TrustProject bool
	// Allow and Deny are rules given here, written as in the files
	// (`bash(go test *)`, `edit(src/**)`, `read`); one that does not
	// parse fails the session's start.
	Allow, Deny []string
}

// on reports whether the configuration names any rule or file.
func (p PermissionRules) on() bool {
	return p.Home != "" || p.Project || len(p.Allow) > 0 || len(p.Deny) > 0
}

// rulesOf builds the rules of a session in cwd; warn tells the user what
// they leave out. nil when cfg names none.
func rulesOf(cfg PermissionRules, cwd string, warn func(string)) (*settings.Rules, error) {
	if !cfg.on() {
		return nil, nil
	}
	for _, list := range [][]string{cfg.Allow, cfg.Deny} {
		for _, r := range list {
			if _, err := settings.ParseRule(r); err != nil {
				return nil, fmt.Errorf("the permission rules (Permissions): %w", err)
			}
		}
	}
	r := &settings.Rules{Home: cfg.Home, Dir: cwd, Project: cfg.Project, Warn: warn,
		Given: settings.Permissions{Allow: cfg.Allow, Deny: cfg.Deny}}
	if cfg.Project {
		r.Trust = &trust.Gate{All: cfg.TrustProject}
		if cfg.Home != "" {
			r.Trust.Store = &trust.Store{File: home.Home{Dir: cfg.Home}.TrustFile()}
		}
	}
	return r, nil
}
