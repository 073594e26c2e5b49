package bench

import (
	"strings"
	"testing"
	"time"
)

// TestDaemonAgainstZot measures the daemon section on the real zot with
// small counts: every row has samples of the door and of its baseline.
func TestDaemonAgainstZot(t *testing.T) {
	zot, floor := buildZot(t), buildFloor(t)
	cfg := smallConfig(zot, floor)
	cfg.Providers = []string{ProviderAnthropic}
	cfg.Daemon, cfg.DaemonIdle, cfg.DaemonStreams, cfg.DaemonDeltas = true, 20, 4, 50
	cfg.Timeout = 20 * time.Second
	r := run(t, cfg)
	md := r.Markdown()
	t.Log("\n" + md)
	if r.Daemon == nil || len(r.Daemon.Rows) != int(daemonMetrics) {
		t.Fatalf("daemon section %+v", r.Daemon)
	}
	for _, row := range r.Daemon.Rows {
		if row.Err != "" || len(row.Value) == 0 || row.Value[0] <= 0 {
			t.Errorf("%s: %+v", row.Metric.label(cfg), row)
		}
		if row.Metric != IdleSessionKiB && (len(row.Base) == 0 || row.Base[0] <= 0) {
			t.Errorf("%s: no baseline: %+v", row.Metric.label(cfg), row)
		}
	}
	chunks := r.Daemon.Rows[ChunkRate]
	if n := chunkSamples * cfg.Reps; len(chunks.Value) != n || len(chunks.Base) != n {
		t.Errorf("chunk rate: %d and %d samples, want %d each", len(chunks.Value), len(chunks.Base), n)
	}
	for _, want := range []string{"### daemon (anthropic format)", "| RSS per idle session (20 sessions in one daemon) | ≤ 50 KiB | "} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestDaemonSectionOfABinaryWithoutIt: a binary that serves no daemon
// gets an error in every row, quickly.
func TestDaemonSectionOfABinaryWithoutIt(t *testing.T) {
	floor := buildFloor(t)
	cfg := smallConfig(floor, floor)
	cfg.Providers = []string{ProviderAnthropic}
	cfg.Daemon, cfg.DaemonIdle, cfg.DaemonStreams, cfg.DaemonDeltas = true, 2, 2, 5
	cfg.Timeout = 5 * time.Second
	start := time.Now()
	r := run(t, cfg)
	if d := time.Since(start); d > 4*cfg.Timeout {
		t.Errorf("the run took %v", d)
	}
	for _, row := range r.Daemon.Rows {
		if row.Err == "" {
			t.Errorf("%s: no error for a binary without zot daemon: %+v", row.Metric.label(cfg), row)
		}
	}
}
