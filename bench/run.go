package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"zot.dev/zot/bench/fakeprovider"
)

// apiKey is the key every binary is given; the fake provider ignores it.
const apiKey = "test-key"

// Binary is one program under test: one column of the report.
type Binary struct {
	// Name heads the binary's column.
	Name string
	Path string
	// Floor marks the floor program, the reference of every ratio.
	Floor bool
}

// binaries lists the floor, zot and the --vs binaries, in column order.
func (c Config) binaries() []Binary {
	bins := []Binary{{Name: "floor", Path: c.Floor, Floor: true}, {Name: "zot", Path: c.Zot}}
	seen := map[string]int{}
	for _, p := range c.Vs {
		name := "vs " + filepath.Base(p)
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s #%d", name, n)
		}
		bins = append(bins, Binary{Name: name, Path: p})
	}
	return bins
}

// resolve returns the path to execute for p: a path with a slash made
// absolute (children run in another directory), a bare name looked up in
// PATH. A name that cannot be found is returned as is, to fail at start.
func resolve(p string) string {
	if strings.ContainsRune(p, filepath.Separator) || strings.ContainsRune(p, '/') {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	if found, err := exec.LookPath(p); err == nil {
		return found
	}
	return p
}

// harness is one benchmark run in progress.
type harness struct {
	cfg  Config
	fake *fakeprovider.Server
	// dir holds what the run creates: the fixture, the daemon section's
	// zot home and socket, the files read.
	dir string
	// fx is where the children of the provider sections and of the
	// section on abort and large input run; env is their environment,
	// with the fixture's zot home.
	fx       fixture
	env      []string
	progress io.Writer
}

// Run measures every binary of cfg and returns the report. Progress lines
// go to progress when it is not nil. Run fails only when the benchmark
// itself cannot run or ctx ends; a binary that fails, hangs or exits gets
// error cells.
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fake, err := fakeprovider.New()
	if err != nil {
		return nil, err
	}
	defer fake.Close()
	fake.Prerender(cfg.Deltas)
	dir, err := os.MkdirTemp("", "zot-bench-")
	if err != nil {
		return nil, fmt.Errorf("creating the children's working directory: %w", err)
	}
	defer os.RemoveAll(dir)
	fx, err := makeFixture(dir, cfg)
	if err != nil {
		return nil, err
	}
	env := append(childEnv(), "ZOT_HOME="+fx.home)
	if cfg.Setup == SetupUser && cfg.TrustProject {
		if err := trustProject(ctx, resolve(cfg.Zot), fx.cwd, env); err != nil {
			return nil, err
		}
	}
	h := &harness{cfg: cfg, fake: fake, dir: dir, fx: fx, env: env, progress: progress}
	report := &Report{Config: cfg, Binaries: cfg.binaries()}
	if cfg.DaemonOnly {
		if err := h.daemonSection(ctx, report); err != nil {
			return nil, err
		}
		return report, nil
	}
	for _, p := range cfg.Providers {
		cols := make([]column, len(report.Binaries))
		// Repetitions go round the binaries, so that a slow spell of a
		// shared machine does not fall on one binary only.
		for rep := range cfg.Reps {
			status := make([]string, len(report.Binaries))
			for i, b := range report.Binaries {
				h.repetition(ctx, b, p, &cols[i])
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				status[i] = b.Name + " " + cols[i].status()
			}
			h.logf("%s rep %d/%d: %s", p, rep+1, cfg.Reps, strings.Join(status, ", "))
		}
		report.Sections = append(report.Sections, section(p, Metrics(), cols))
	}
	h.initSection(ctx, report)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Extras {
		if err := h.extraSection(ctx, report); err != nil {
			return nil, err
		}
	}
	if cfg.Sandbox {
		if err := h.sandboxSection(ctx, report); err != nil { // sandbox.go
			return nil, err
		}
	}
	if cfg.Daemon {
		if err := h.daemonSection(ctx, report); err != nil {
			return nil, err
		}
	}
	return report, nil
}

// trustProject runs `zot trust dir` with env, so that zot runs the
// project's own extensions and MCP servers.
func trustProject(ctx context.Context, zot, dir string, env []string) error {
	cmd := exec.CommandContext(ctx, zot, "trust", dir)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("zot trust %s: %w: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// childEnv is the harness's environment without the rpc token, which would
// make every binary wait for a hello, and without a zot home or socket of
// the user's: the harness gives its own.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZOTCORE_RPC_TOKEN=") && !strings.HasPrefix(kv, "ZOT_HOME=") && !strings.HasPrefix(kv, "ZOT_SOCKET=") {
			env = append(env, kv)
		}
	}
	return env
}

func (h *harness) logf(format string, args ...any) {
	if h.progress != nil {
		fmt.Fprintf(h.progress, format+"\n", args...)
	}
}

// args are the command-line arguments of every binary for provider p.
func (h *harness) args(p string) []string {
	url := h.fake.AnthropicURL()
	if p == ProviderOpenAI {
		url = h.fake.OpenAIURL()
	}
	return []string{"rpc", "--provider", p, "--model", h.cfg.model(p), "--base-url", url, "--api-key", apiKey}
}
