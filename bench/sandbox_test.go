package bench

import (
	"strings"
	"testing"
)

// TestSandboxSectionAgainstZot measures the sandbox section on the real
// zot with small counts: both sides have every round trip, and the
// report shows them and what the sandbox adds. (What it adds is a
// benchmark's number, not this test's.)
func TestSandboxSectionAgainstZot(t *testing.T) {
	zot, floor := buildZot(t), buildFloor(t)
	cfg := smallConfig(zot, floor)
	cfg.Providers = []string{ProviderAnthropic}
	cfg.Sandbox, cfg.Reps, cfg.Trips = true, 2, 3
	r := run(t, cfg)
	md := r.Markdown()
	t.Log("\n" + md)
	s := r.Sandbox
	if s == nil || s.Err != "" || len(s.On) != 6 || len(s.Off) != 6 {
		t.Fatalf("sandbox section %+v", s)
	}
	for _, v := range append(append([]float64(nil), s.On...), s.Off...) {
		if v <= 0 {
			t.Errorf("a round trip of %v ms", v)
		}
	}
	for _, want := range []string{"### sandbox (anthropic format, zot only)", "| bash round trip (ms, 6 and 6 samples) | added < 5 ms | ", " ms |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
