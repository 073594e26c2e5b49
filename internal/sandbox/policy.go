// Package sandbox confines what zot's tools may change: the shell bash
// starts runs under kernel rules (Landlock on Linux, with a seccomp filter
// that cuts the network, or bubblewrap where Landlock is missing), applied
// in a small re-exec of the zot binary before the shell starts, and the
// built-in file tools check the same policy on the real paths they are
// about to write. docs/sandbox.md says what is enforced where.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much of the file system the tools may change.
type Mode string

// The modes, from the tightest.
const (
	// ReadOnly refuses every write, anywhere.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite lets the tools write under the working directory, the
	// temporary directory and the paths allowed besides, and nowhere else.
	WorkspaceWrite Mode = "workspace-write"
	// Full confines nothing: the tools may do what zot's user may do.
	Full Mode = "full"
	// Off is Full, named for running where no sandbox can be enforced.
	Off Mode = "off"
)

// Modes are the modes in the order they are listed.
var Modes = []Mode{ReadOnly, WorkspaceWrite, Full, Off}

// ParseMode checks a mode's name.
func ParseMode(s string) (Mode, error) {
	m := Mode(s)
	if slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("sandbox %q: want read-only, workspace-write, full or off", s)
}

// ParseNetwork reads "on" or "off".
func ParseNetwork(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("network %q: want on or off", s)
}

// Confines reports whether m restricts writes.
func (m Mode) Confines() bool { return m == ReadOnly || m == WorkspaceWrite }

// Policy is what one session's tools may do.
type Policy struct {
	// Mode is how much of the file system they may change.
	Mode Mode
	// Network lets commands open network sockets.
	Network bool
	// Workspace is the working directory (absolute): writable under
	// WorkspaceWrite.
	Workspace string
	// Writable are further directories or files writable under
	// WorkspaceWrite: the temporary directory, a build cache, paths the
	// user allowed.
	Writable []string
}

// Restricts reports whether p confines anything at all.
func (p Policy) Restricts() bool { return p.Mode.Confines() || !p.Network }

// Explain says what p refuses and how the user can allow it; "" when it
// confines nothing.
func (p Policy) Explain() string {
	if !p.Restricts() {
		return ""
	}
	var parts []string
	switch p.Mode {
	case ReadOnly:
		parts = append(parts, "no file may be written")
	case WorkspaceWrite:
		parts = append(parts, "files may be written only under "+strings.Join(p.WritableRoots(), ", "))
	}
	if !p.Network {
		parts = append(parts, "the network is off")
	}
	allow := "the user can lift this with /unjail or --sandbox full"
	if p.Mode.Confines() && !p.Network {
		allow += ", and allow the network with --network on"
	} else if !p.Network {
		allow = "the user can allow the network with --network on"
	}
	return fmt.Sprintf("sandbox (%s, network %s): %s; %s", p.Mode, onOff(p.Network), strings.Join(parts, "; "), allow)
}

// onOff names a switch.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// WritableRoots are the real paths writable under p: none under ReadOnly,
// the workspace and Writable under WorkspaceWrite, each resolved through
// its symbolic links (a path not there yet through its deepest existing
// folder's).
func (p Policy) WritableRoots() []string {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	var roots []string
	for _, d := range append([]string{p.Workspace}, p.Writable...) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if real, err := realPath(d); err == nil && !slices.Contains(roots, real) {
			roots = append(roots, real)
		}
	}
	return roots
}

// Denied is a write the policy refuses: the error a tool returns, which
// names the path, the rule and how the user can allow it.
type Denied struct {
	// Path is the path the tool was given; Real is where it leads.
	Path, Real string
	// Mode is the sandbox mode that refuses it.
	Mode Mode
	// Why says which rule refuses it.
	Why string
}

// Error returns the message the model reads.
func (d *Denied) Error() string {
	where := d.Path
	if d.Real != "" && d.Real != d.Path {
		where += " (which is " + d.Real + ")"
	}
	var allow string
	switch d.Mode {
	case ReadOnly:
		allow = "the user can allow writes with /unjail or --sandbox workspace-write (or full)"
	default:
		allow = "the user can allow it with /unjail, --sandbox full, or by adding the folder to the sandbox's writable paths"
	}
	return fmt.Sprintf("sandbox (%s): writing %s is not allowed: %s; %s", d.Mode, where, d.Why, allow)
}

// CheckWrite returns nil when p lets a tool create, replace or remove the
// file at path (absolute), and a *Denied otherwise. The path is judged
// where it really leads: its symbolic links and any ".." resolved (for a
// file not yet there, those of its deepest existing folder), and a file
// with more than one hard link is refused under WorkspaceWrite (its other
// names may lie outside, and zot writes such a file in place).
func (p Policy) CheckWrite(path string) error {
	switch p.Mode {
	case ReadOnly:
		real, _ := realPath(path)
		return &Denied{Path: path, Real: real, Mode: p.Mode, Why: "the sandbox is read-only: no file may be written"}
	case WorkspaceWrite:
	default:
		return nil
	}
	real, err := realPath(path)
	if err != nil {
		return &Denied{Path: path, Mode: p.Mode, Why: "its real location cannot be resolved: " + err.Error()}
	}
	roots := p.WritableRoots()
	if !slices.ContainsFunc(roots, func(r string) bool { return within(real, r) }) {
		return &Denied{Path: path, Real: real, Mode: p.Mode,
			Why: "it is outside the writable folders (" + strings.Join(roots, ", ") + ")"}
	}
	if links := hardLinks(real); links > 1 && !slices.Contains(roots, real) {
		return &Denied{Path: path, Real: real, Mode: p.Mode,
			Why: fmt.Sprintf("the file has %d hard links, and the others may be outside the writable folders", links)}
	}
	return nil
}

// within reports whether path is root or under it.
func within(path, root string) bool {
	if path == root || root == "/" {
		return true
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// realPath resolves path's symbolic links; for a path that does not
// exist, those of its deepest existing ancestor, joined to the rest.
func realPath(path string) (string, error) {
	path = filepath.Clean(path)
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !os.IsNotExist(err) {
			// A dangling symbolic link: where it points is what a write
			// would create.
			if target, lerr := os.Readlink(path); lerr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(path), target)
				}
				if len(rest) < 40 {
					return realPath(filepath.Join(append([]string{target}, rest...)...))
				}
			}
			return "", err
		}
		if lst, lerr := os.Lstat(path); lerr == nil && lst.Mode()&os.ModeSymlink != 0 {
			target, rerr := os.Readlink(path)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			if len(rest) > 40 {
				return "", fmt.Errorf("too many levels of symbolic links")
			}
			return realPath(filepath.Join(append([]string{target}, rest...)...))
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(append([]string{path}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(path)}, rest...)
		path = parent
	}
}

// Describe says, for the model (in bash's description), what p lets
// commands do and what enforces it on this system. It changes only when
// the policy does, so that a tool list sent with every model call stays
// the same from call to call.
func (p Policy) Describe() string { return p.describe(Probe()) }

// describe is Describe on a system that offers s.
func (p Policy) describe(s Support) string {
	if !p.Restricts() {
		return "Commands are not sandboxed: they run as the same user as zot and may change " +
			"whatever that user may, and reach the network."
	}
	var what []string
	switch p.Mode {
	case ReadOnly:
		what = append(what, "may write no file anywhere (read-only)")
	case WorkspaceWrite:
		what = append(what, "may write files only under "+strings.Join(p.WritableRoots(), ", ")+" (workspace-write)")
	default:
		what = append(what, "may write whatever zot's user may")
	}
	if p.Network {
		what = append(what, "may reach the network")
	} else {
		what = append(what, "cannot open network sockets (the network is off; Unix sockets work)")
	}
	text := "Commands run in a sandbox: they " + strings.Join(what, ", and ") + "; reading is not confined."
	if s.Backend == BackendNone {
		return text + " This system cannot enforce it, so bash refuses to run commands until the user runs zot with --sandbox off."
	}
	return text + " The kernel enforces it (" + string(s.Backend) + ") on every process a command starts: " +
		"a refused write fails with \"Permission denied\" or \"Read-only file system\". Do not try to " +
		"get around it; say what you need and the user can allow it (/unjail, --sandbox-writable, --network on)."
}

// rank orders the modes by what they let the tools change: read-only
// least, full and off most.
func (m Mode) rank() int {
	switch m {
	case ReadOnly:
		return 0
	case WorkspaceWrite:
		return 1
	}
	return 2
}

// Meet is p confined by floor as well: the policy that lets the tools do
// only what both let them do, for a machine (a fleet's worker) that
// never runs a session's tools with less confinement than it was started
// with. The tighter mode wins, the network is on only when both let it
// be, and under workspace-write the writable paths are those of the
// policy that confines writes (its workspace among them), or, when both
// do, p's that lie beneath a writable root of floor.
func (p Policy) Meet(floor Policy) Policy {
	out := Policy{Mode: p.Mode, Network: p.Network && floor.Network, Workspace: p.Workspace}
	if floor.Mode.rank() < p.Mode.rank() {
		out.Mode = floor.Mode
	}
	if out.Mode != WorkspaceWrite {
		return out
	}
	switch {
	case p.Mode != WorkspaceWrite:
		out.Workspace, out.Writable = floor.Workspace, slices.Clone(floor.Writable)
	case floor.Mode != WorkspaceWrite:
		out.Writable = slices.Clone(p.Writable)
	default:
		roots := floor.WritableRoots()
		if !beneathAny(p.Workspace, roots) {
			out.Workspace = ""
		}
		for _, w := range p.Writable {
			if beneathAny(w, roots) {
				out.Writable = append(out.Writable, w)
			}
		}
	}
	return out
}

// beneathAny reports whether path's real location is one of roots or
// under one.
func beneathAny(path string, roots []string) bool {
	if path == "" || !filepath.IsAbs(path) {
		return false
	}
	real, err := realPath(path)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(roots, func(r string) bool { return within(real, r) })
}
