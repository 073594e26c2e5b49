package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/settings"
)

// sandboxConfig is the sandbox of every session a command starts:
// --sandbox, --network and --sandbox-writable, else config.json's
// sandbox, else the permission mode's (engine.SandboxByMode).
func sandboxConfig(cmd *cli.Command, stderr io.Writer) (engine.SandboxConfig, error) {
	var saved settings.Sandbox
	if h, err := zotHome(stderr); err == nil {
		// A config.json that does not parse is told by the rules' loader.
		if c, err := settings.LoadConfig(settings.ConfigFile(h.Dir)); err == nil {
			saved = c.Sandbox
		}
	}
	sb := engine.SandboxConfig{Mode: engine.SandboxByMode, Network: saved.Network, Writable: saved.Writable}
	if saved.Mode != "" {
		sb.Mode = saved.Mode
	}
	if cmd.IsSet("sandbox") {
		sb.Mode = cmd.String("sandbox")
		if !slices.Contains(settings.SandboxModes, sb.Mode) {
			return sb, usagef("--sandbox must be read-only, workspace-write, full or off, got %q", sb.Mode)
		}
	}
	if cmd.IsSet("network") {
		sb.Network = cmd.String("network")
		if sb.Network != "on" && sb.Network != "off" {
			return sb, usagef("--network must be on or off, got %q", sb.Network)
		}
	}
	for _, w := range cmd.StringSlice("sandbox-writable") {
		abs, err := filepath.Abs(w)
		if err != nil {
			return sb, usagef("--sandbox-writable %s: %v", w, err)
		}
		sb.Writable = append(sb.Writable, abs)
	}
	if len(sb.Writable) > 0 && sb.Mode != engine.SandboxByMode && sb.Mode != "workspace-write" {
		fmt.Fprintf(stderr, "zot: the sandbox's writable paths apply under workspace-write only (the sandbox is %s)\n", sb.Mode)
	}
	return sb, nil
}
