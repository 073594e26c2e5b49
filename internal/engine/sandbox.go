package engine

import (
	"fmt"
	"os"

	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/sdk/wire"
)

// SandboxByMode, as SandboxConfig.Mode, lets the permission mode choose
// the sandbox: auto → workspace-write, read_only → read-only, ask and
// accept_edits (where the user sees each command) → full. It is what
// zot's command line gives a session unless --sandbox or config.json
// names a mode.
const SandboxByMode = "by-mode"

// SandboxConfig says what a session's tools may change (internal/sandbox,
// docs/sandbox.md). The zero value confines nothing, as before there was
// a sandbox: an embedder chooses one.
type SandboxConfig struct {
	// Mode is read-only, workspace-write, full, off, or SandboxByMode;
	// empty means off.
	Mode string
	// Network is "on" or "off"; empty means off when the mode confines
	// writes, else on.
	Network string
	// Writable are further paths bash, write and edit may change under
	// workspace-write (a build cache, say); the working directory and
	// the temporary directory always are.
	Writable []string
}

// sandboxState is what the session keeps about its sandbox: the choice
// as configured or last changed (/jail, /unjail), and the guard the tools
// consult.
type sandboxState struct {
	guard *sandbox.Guard
	// mode is a sandbox.Mode or SandboxByMode; network "", "on" or "off".
	mode, network string
	writable      []string
	cwd           string
}

// newSandboxState checks cfg and returns the state it starts in.
func newSandboxState(cfg SandboxConfig, cwd string) (*sandboxState, error) {
	st := &sandboxState{mode: cfg.Mode, network: cfg.Network, cwd: cwd}
	if st.mode == "" {
		st.mode = string(sandbox.Off)
	}
	if st.mode != SandboxByMode {
		if _, err := sandbox.ParseMode(st.mode); err != nil {
			return nil, fmt.Errorf("the sandbox (Sandbox.Mode): %w", err)
		}
	}
	if st.network != "" {
		if _, err := sandbox.ParseNetwork(st.network); err != nil {
			return nil, fmt.Errorf("the sandbox (Sandbox.Network): %w", err)
		}
	}
	st.writable = append([]string{os.TempDir()}, cfg.Writable...)
	st.guard = sandbox.NewGuard(sandbox.Policy{Mode: sandbox.Off, Network: true})
	return st, nil
}

// policy is the policy of the state under permission mode pm.
func (st *sandboxState) policy(pm PermissionMode, allowed []string) sandbox.Policy {
	mode := sandbox.Mode(st.mode)
	if st.mode == SandboxByMode {
		switch pm {
		case ModeAuto:
			mode = sandbox.WorkspaceWrite
		case ModeReadOnly:
			mode = sandbox.ReadOnly
		default:
			mode = sandbox.Full
		}
	}
	network := !mode.Confines()
	if st.network != "" {
		network = st.network == "on"
	}
	return sandbox.Policy{Mode: mode, Network: network, Workspace: st.cwd,
		Writable: append(append([]string(nil), st.writable...), allowed...)}
}

// applySandbox puts the policy the session's choice and permission mode
// give into force; paths allowed always (answers to a sandbox's
// permission request) are kept.
func (s *Session) applySandbox() {
	st := s.sbox
	allowed := st.guard.Policy().Writable
	// What was allowed beyond the configured paths stays allowed.
	var extra []string
	for _, p := range allowed {
		if !contains(st.writable, p) {
			extra = append(extra, p)
		}
	}
	st.guard.Set(st.policy(s.Mode(), extra))
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Sandbox returns the sandbox of the session's tools as get_state shows it.
func (s *Session) Sandbox() wire.SandboxState {
	p := s.sbox.guard.Policy()
	by := sandbox.BackendNone
	if p.Restricts() {
		by = sandbox.Probe().Backend
	}
	return wire.SandboxState{
		Mode:       wire.SandboxMode(p.Mode),
		Network:    p.Network,
		Writable:   p.WritableRoots(),
		EnforcedBy: string(by),
	}
}

// SetSandbox changes the sandbox mode (read-only, workspace-write, full
// or off, the modes every door's schema names) when mode is not empty and
// the network ("on" or "off") when network is not empty; the next tool
// call sees it. An error says which value is wrong (invalid_params), and
// then nothing changes. SandboxByMode is a starting configuration only:
// once set, the mode no longer follows the permission mode.
func (s *Session) SetSandbox(mode, network string) error {
	if mode != "" {
		if _, err := sandbox.ParseMode(mode); err != nil {
			return &SandboxError{Err: err}
		}
	}
	if network != "" {
		if _, err := sandbox.ParseNetwork(network); err != nil {
			return &SandboxError{Err: err}
		}
	}
	s.sboxMu.Lock()
	if mode != "" {
		s.sbox.mode = mode
	}
	if network != "" {
		s.sbox.network = network
	}
	s.applySandbox()
	s.sboxMu.Unlock()
	return nil
}

// SandboxError is a sandbox setting that is not one.
type SandboxError struct{ Err error }

// Error returns the message.
func (e *SandboxError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *SandboxError) Unwrap() error { return e.Err }

// ErrorCode returns invalid_params: the setting is the caller's.
func (e *SandboxError) ErrorCode() wire.ErrorCode { return wire.CodeInvalidParams }

// sandboxWarning says, once at the start, that the sandbox chosen cannot
// be enforced on this system.
func (s *Session) sandboxWarning() {
	p := s.sbox.guard.Policy()
	if !p.Restricts() || sandbox.Probe().Backend != sandbox.BackendNone {
		return
	}
	s.settingsWarning(fmt.Sprintf("the sandbox (%s) cannot be enforced here: %s; bash refuses to run until the user runs zot with --sandbox off (write and edit still check their paths)", p.Mode, sandbox.Probe()))
}
