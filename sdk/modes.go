package sdk

import (
	"context"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// Mode is a permission mode: what a call of write, edit, bash (or another
// of Config.ApprovalTools) needs before it runs. The mode decides first;
// only what it leaves to ask reaches Config.Approve.
type Mode = engine.PermissionMode

// The permission modes, as every door of zot names them.
const (
	// ModeAsk asks Config.Approve before each call (a session without
	// Approve refuses them, since nobody can answer).
	ModeAsk = engine.ModeAsk
	// ModeAcceptEdits runs write and edit without asking and asks before
	// the others.
	ModeAcceptEdits = engine.ModeAcceptEdits
	// ModeAuto runs every call without asking.
	ModeAuto = engine.ModeAuto
	// ModeReadOnly refuses every call without asking.
	ModeReadOnly = engine.ModeReadOnly
)

// ModeInfo names and describes one permission mode.
type ModeInfo = engine.ModeInfo

// ModeError is returned by SetMode for a mode the runtime does not offer.
type ModeError = engine.ModeError

// Mode returns the runtime's permission mode.
func (r *Runtime) Mode() Mode { return r.sess.Mode() }

// Modes returns the modes SetMode takes, in the order a client lists
// them: all four, or only read_only under Config.Permission "deny".
func (r *Runtime) Modes() []ModeInfo { return r.sess.Modes() }

// SetMode switches the permission mode; the next call that needs a
// decision sees it, also in a prompt that runs. It fails with a
// *ModeError for a mode the runtime does not offer, and with ErrClosed
// after Close.
func (r *Runtime) SetMode(ctx context.Context, mode Mode) error {
	if r.isClosed() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.sess.SetMode(mode)
}

// SetSandbox changes the sandbox of the runtime's tools (docs/sandbox.md),
// as /jail and /unjail do: the mode (read-only, workspace-write, full,
// off) unless it is empty, and whether commands reach the network unless
// network is nil. The next tool call sees it, also in a prompt that runs.
// It returns the sandbox in force; it fails with an error of code
// invalid_params for a mode that is not one, and with ErrClosed after
// Close.
func (r *Runtime) SetSandbox(ctx context.Context, mode wire.SandboxMode, network *bool) (wire.SandboxState, error) {
	if r.isClosed() {
		return wire.SandboxState{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return wire.SandboxState{}, err
	}
	net := ""
	if network != nil {
		net = "off"
		if *network {
			net = "on"
		}
	}
	if err := r.sess.SetSandbox(string(mode), net); err != nil {
		return wire.SandboxState{}, err
	}
	return r.sess.Sandbox(), nil
}
