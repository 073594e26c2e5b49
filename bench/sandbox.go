package bench

import (
	"context"
	"fmt"
	"strings"

	"zot.dev/zot/bench/fakeprovider"
)

// The sandbox section times zot's bash round trip (prompt → bash tool
// call → result → answer, as the tool session does) with the sandbox on
// (workspace-write, the network off) and off (--sandbox off), in zot
// processes that take turns, and reports what the sandbox adds.

// sandboxTarget is what the sandbox may add to a bash round trip.
const sandboxTarget = 5.0 // ms

// SandboxSection is what the sandbox section measured with one provider.
type SandboxSection struct {
	Provider string
	// On and Off are the round trips with the sandbox on and off, in
	// milliseconds, every sample of every repetition.
	On, Off []float64
	// Err is why the section could not be measured in full.
	Err string
}

// sandboxArgs are zot's arguments beyond h.args for the sandbox on and
// off.
var sandboxArgs = map[bool][]string{
	true:  {"--sandbox", "workspace-write", "--network", "off"},
	false: {"--sandbox", "off"},
}

// sandboxSection measures the section with the first provider for zot
// only and adds it to report. A failure is the section's error cell; it
// fails only when ctx ends.
func (h *harness) sandboxSection(ctx context.Context, report *Report) error {
	p := h.cfg.Providers[0]
	s := &SandboxSection{Provider: p}
	report.Sandbox = s
	for rep := range h.cfg.Reps {
		// Which goes first alternates, so that a warm-up or a slow spell
		// of a shared machine falls on both.
		for _, on := range []bool{rep%2 == 0, rep%2 != 0} {
			trips, err := h.sandboxTrips(ctx, p, on)
			if err := ctx.Err(); err != nil {
				return err
			}
			if err != nil {
				s.Err = fmt.Sprintf("sandbox %s: %v", onOff(on), err)
				return nil
			}
			if on {
				s.On = append(s.On, trips...)
			} else {
				s.Off = append(s.Off, trips...)
			}
		}
		h.logf("sandbox rep %d/%d: on %.2f ms, off %.2f ms", rep+1, h.cfg.Reps, median(s.On), median(s.Off))
	}
	return nil
}

// sandboxTrips starts zot with the sandbox on or off, makes a first
// short prompt and then cfg.Trips bash round trips, and returns their
// times in milliseconds.
func (h *harness) sandboxTrips(ctx context.Context, p string, on bool) ([]float64, error) {
	c, err := spawn(ctx, resolve(h.cfg.Zot), append(h.args(p), sandboxArgs[on]...), h.fx.cwd, h.env, h.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if err := c.ping(); err != nil {
		return nil, c.fail(fmt.Errorf("ping: %w", err))
	}
	if _, err := c.prompt(fakeprovider.PromptShort); err != nil {
		return nil, c.fail(fmt.Errorf("first short prompt: %w", err))
	}
	trips := make([]float64, 0, h.cfg.Trips)
	for i := range h.cfg.Trips {
		d, err := h.bashTrip(c)
		if err != nil {
			return nil, c.fail(fmt.Errorf("bash round trip %d: %w", i+1, err))
		}
		trips = append(trips, d)
	}
	if err := c.reap(h.cfg.Timeout); err != nil {
		return nil, fmt.Errorf("after stdin closed: %w", err)
	}
	return trips, nil
}

// onOff names a switch.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// writeSandbox writes the sandbox section.
func (r *Report) writeSandbox(sb *strings.Builder) {
	s := r.Sandbox
	fmt.Fprintf(sb, "\n### sandbox (%s format, zot only)\n\n", s.Provider)
	fmt.Fprintf(sb, "A bash round trip (prompt → bash `%s` → result → answer) with the sandbox on "+
		"(`--sandbox workspace-write --network off`: Landlock and the seccomp filter on the thread that "+
		"forks the shell) and off (`--sandbox off`), in processes that take turns; medians of every round trip.\n\n",
		fakeprovider.ToolCommand)
	if s.Err != "" {
		fmt.Fprintf(sb, "error: %s\n", s.Err)
		return
	}
	on, off := median(s.On), median(s.Off)
	writeRow(sb, []string{"metric", "target", "on", "off", "added"})
	writeRow(sb, []string{"---", "---", "---:", "---:", "---:"})
	writeRow(sb, []string{fmt.Sprintf("bash round trip (ms, %d and %d samples)", len(s.On), len(s.Off)),
		fmt.Sprintf("added < %g ms", sandboxTarget), fmt.Sprintf("%.2f", on), fmt.Sprintf("%.2f", off), fmt.Sprintf("%+.2f ms", on-off)})
}
