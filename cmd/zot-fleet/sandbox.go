package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"zot.dev/zot/internal/sandbox"
)

// sandboxFlags are a worker's --sandbox, --network and
// --sandbox-writable: the least confinement of every tool call it runs,
// whatever the session's sandbox (docs/sandbox.md, docs/fleet.md).
type sandboxFlags struct {
	mode, network string
	writable      paths
}

// paths is a flag given once per path.
type paths []string

func (p *paths) String() string { return strings.Join(*p, ",") }

func (p *paths) Set(v string) error {
	abs, err := filepath.Abs(v)
	if err != nil {
		return err
	}
	*p = append(*p, abs)
	return nil
}

func (s *sandboxFlags) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.mode, "sandbox", "off", "the least confinement of the tool calls this worker runs: read-only, workspace-write, full or off (a session's own sandbox applies within it)")
	fs.StringVar(&s.network, "network", "", "on or off: whether the commands this worker runs may reach the network (default: off under read-only and workspace-write, else on)")
	fs.Var(&s.writable, "sandbox-writable", "a path commands may write under --sandbox workspace-write besides the working directory and the temporary directory (repeatable)")
}

// policy is the floor the flags give; its workspace is each call's.
func (s *sandboxFlags) policy() (sandbox.Policy, error) {
	mode, err := sandbox.ParseMode(s.mode)
	if err != nil {
		return sandbox.Policy{}, usageError{"--" + err.Error()}
	}
	network := !mode.Confines()
	if s.network != "" {
		if network, err = sandbox.ParseNetwork(s.network); err != nil {
			return sandbox.Policy{}, usageError{"--" + err.Error()}
		}
	}
	p := sandbox.Policy{Mode: mode, Network: network, Writable: append([]string{os.TempDir()}, s.writable...)}
	if p.Restricts() {
		if sup := sandbox.Probe(); sup.Backend == sandbox.BackendNone {
			return sandbox.Policy{}, fmt.Errorf("--sandbox %s, network %s: %w: %s; start the worker with --sandbox off --network on to run tools unconfined", mode, onOff(network), sandbox.ErrUnavailable, sup)
		}
	}
	return p, nil
}

// describeFloor says, in the worker's first line, what confines its tool
// calls.
func describeFloor(p sandbox.Policy) string {
	if !p.Restricts() {
		return "tools confined by each session's sandbox"
	}
	return fmt.Sprintf("tools confined to at least --sandbox %s, network %s (%s)", p.Mode, onOff(p.Network), sandbox.Probe())
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
