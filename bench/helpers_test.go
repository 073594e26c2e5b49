//go:build unix

package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// hangGuard bounds a whole test run of the harness; it guards against
// hangs and says nothing about speed.
const hangGuard = 3 * time.Minute

// buildFloor builds the floor program into a fresh temporary directory.
func buildFloor(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "zot-floor")
	cmd := exec.Command("go", "build", "-o", out, "zot.dev/zot/bench/cmd/zot-floor")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the floor: %v\n%s", err, b)
	}
	return out
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// smallConfig is a quick run of the harness.
func smallConfig(zot, floor string) Config {
	cfg := DefaultConfig()
	cfg.Zot, cfg.Floor = zot, floor
	cfg.Reps, cfg.Deltas, cfg.Seq = 1, 200, 5
	cfg.Timeout = 30 * time.Second
	cfg.Extras = false
	cfg.Daemon = false
	cfg.Sandbox = false
	cfg.Setup = SetupBare
	cfg.Trips = 2
	return cfg
}

// buildZot returns $ZOT_BIN, or builds zot into a fresh temporary
// directory.
func buildZot(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ZOT_BIN"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "zot")
	cmd := exec.Command("go", "build", "-o", out, "zot.dev/zot/cmd/zot")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building zot: %v\n%s", err, b)
	}
	return out
}

// run runs the harness under the hang guard.
func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	report, err := Run(ctx, cfg, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// column returns the cells of binary name, by provider and metric.
func cells(t *testing.T, r *Report, name string) map[string]map[Metric]Cell {
	t.Helper()
	idx := -1
	for i, b := range r.Binaries {
		if b.Name == name {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no binary %q in %+v", name, r.Binaries)
	}
	out := map[string]map[Metric]Cell{}
	for _, s := range r.Sections {
		out[s.Provider] = map[Metric]Cell{}
		for _, row := range s.Rows {
			out[s.Provider][row.Metric] = row.Cells[idx]
		}
	}
	return out
}
