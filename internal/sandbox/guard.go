package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
)

// Guard is a session's policy, which its commands may change while tools
// run (/jail, /unjail, a path allowed always). Its methods are safe for
// concurrent use.
type Guard struct {
	mu     sync.Mutex
	policy Policy
	once   map[string]int // real paths the next write of each may write once
	// changed are called after each change, outside mu, by their key.
	changed map[int]func()
	next    int
}

// NewGuard returns a guard holding p.
func NewGuard(p Policy) *Guard { return &Guard{policy: p} }

// Policy returns the policy in force.
func (g *Guard) Policy() Policy {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.policy
	p.Writable = slices.Clone(p.Writable)
	return p
}

// OnChange makes f be called after every change of the policy (Set,
// Allow), outside the guard's lock: to offer the model bash's new
// description, say. The function it returns stops that.
func (g *Guard) OnChange(f func()) (remove func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.changed == nil {
		g.changed = map[int]func(){}
	}
	key := g.next
	g.next++
	g.changed[key] = f
	return func() {
		g.mu.Lock()
		delete(g.changed, key)
		g.mu.Unlock()
	}
}

// listeners returns the functions OnChange was given. The caller holds
// g.mu.
func (g *Guard) listeners() []func() {
	fs := make([]func(), 0, len(g.changed))
	for _, f := range g.changed {
		fs = append(fs, f)
	}
	return fs
}

// Set replaces the policy.
func (g *Guard) Set(p Policy) {
	g.mu.Lock()
	g.policy = p
	fs := g.listeners()
	g.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Allow adds dir to the writable paths.
func (g *Guard) Allow(dir string) {
	g.mu.Lock()
	added := !slices.Contains(g.policy.Writable, dir)
	if added {
		g.policy.Writable = append(g.policy.Writable, dir)
	}
	fs := g.listeners()
	g.mu.Unlock()
	if added {
		for _, f := range fs {
			f()
		}
	}
}

// Describe says, for the model, what the policy in force lets commands
// do (Policy.Describe).
func (g *Guard) Describe() string { return g.Policy().Describe() }

// Explain says, for a command that failed, what the policy in force
// refuses and how the user can allow it; "" when it confines nothing.
func (g *Guard) Explain() string { return g.Policy().Explain() }

// Restricts reports whether the policy in force confines anything.
func (g *Guard) Restricts() bool { return g.Policy().Restricts() }

// AllowOnce lets the next write of path (a real path, as Denied.Real)
// through, whatever the policy.
func (g *Guard) AllowOnce(path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.once == nil {
		g.once = map[string]int{}
	}
	g.once[path]++
}

// CheckWrite applies the policy in force to a write of path; a write
// AllowOnce let through is used up. grant is then the real path it was
// allowed for ("" when the policy itself allows the write): the caller
// hands it to Beneath for that write and no other, so that the grant
// ends with the call it was given for, whether or not the write is made.
func (g *Guard) CheckWrite(path string) (grant string, err error) {
	err = g.Policy().CheckWrite(path)
	var d *Denied
	if err == nil || !errors.As(err, &d) {
		return "", err
	}
	real := d.Real
	if real == "" {
		real = d.Path
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.once[real] > 0 {
		if g.once[real]--; g.once[real] == 0 {
			delete(g.once, real)
		}
		return real, nil
	}
	return "", err
}

// Beneath says where to make a write of path that CheckWrite allowed, so
// that a symbolic link swapped in since the check cannot lead it out of
// the writable folders: root, the real path of the writable folder path's
// real location lies under, and rel, that location relative to root; the
// write then resolves rel beneath root and nothing outside it. For a
// file allowed by itself (always, or once by CheckWrite just before),
// root is its folder and own is true: it may be written in place, hard
// links and all. grant is what CheckWrite returned for this write: the
// file it allowed once is written only when path still leads to it. root is "" when the policy confines no writes (full,
// off). A path whose real location is none of these now (a link swapped
// in since the check) is refused with a *Denied.
func (g *Guard) Beneath(path, grant string) (root, rel string, own bool, err error) {
	p := g.Policy()
	if !p.Mode.Confines() {
		return "", "", false, nil
	}
	real, err := realPath(path)
	if err != nil {
		return "", "", false, &Denied{Path: path, Mode: p.Mode, Why: "its real location cannot be resolved: " + err.Error()}
	}
	roots := p.WritableRoots()
	if (grant != "" && real == grant) || (p.Mode == WorkspaceWrite && slices.Contains(roots, real)) {
		return filepath.Dir(real), filepath.Base(real), true, nil
	}
	for _, r := range roots {
		if real != r && within(real, r) && len(r) > len(root) {
			root = r
		}
	}
	if root != "" {
		if rel, err := filepath.Rel(root, real); err == nil {
			return root, rel, false, nil
		}
	}
	return "", "", false, &Denied{Path: path, Real: real, Mode: p.Mode,
		Why: "it leads outside the writable folders now: a symbolic link on its path changed after the sandbox checked it"}
}

// Prepare says how to start prog with args under the policy in force:
// the program and arguments to start (prog and args themselves, or
// bubblewrap's around them), and, with Landlock, confine, which the
// caller calls on the OS thread that forks the command (locked to its
// goroutine, and never unlocked: subproc.Command.Confine), whose
// restrictions the command inherits. It fails with an error wrapping
// ErrUnavailable when the policy cannot be enforced here.
func (g *Guard) Prepare(prog string, args []string) (string, []string, func() error, error) {
	return prepareWith(g.Policy(), Probe(), prog, args)
}

// prepareWith is Prepare of p on a system that offers s.
func prepareWith(p Policy, s Support, prog string, args []string) (string, []string, func() error, error) {
	if !p.Restricts() {
		return prog, args, nil, nil
	}
	switch s.Backend {
	case BackendBwrap:
		return s.Bwrap, append(bwrapArgs(p, prog), args...), nil, nil
	case BackendLandlock:
		if !p.Network && !s.Seccomp && s.LandlockABI < 4 {
			return "", nil, nil, fmt.Errorf("%w: the network cannot be cut (Landlock ABI %d, no seccomp filter for this architecture); the user can run zot with --network on", ErrUnavailable, s.LandlockABI)
		}
		rules := rulesOf(p)
		return prog, args, func() error { return confine(rules) }, nil
	}
	return "", nil, nil, fmt.Errorf("%w: %s; the user can run zot with --sandbox off to run commands unconfined", ErrUnavailable, s)
}
