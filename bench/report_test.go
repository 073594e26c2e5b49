package bench

import (
	"strings"
	"testing"
)

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		m     Metric
		ratio float64
		met   bool
	}{
		{SpawnPing, 1.5, true}, {SpawnPing, 1.51, false},
		{EventsPerSec, 0.9, true}, {EventsPerSec, 0.89, false},
		{SeqLatency, 1.3, true}, {SeqLatency, 1.31, false},
		{PeakRSS, 1.25, true}, {PeakRSS, 1.26, false},
	} {
		target, ok := tc.m.Target()
		if !ok || target.Met(tc.ratio) != tc.met {
			t.Errorf("metric %d ratio %v: target %v (%v), met %v", tc.m, tc.ratio, target, ok, target.Met(tc.ratio))
		}
	}
	for _, m := range []Metric{StreamCPU, SeqCPU, ToolRoundTrip} {
		if _, ok := m.Target(); ok {
			t.Errorf("metric %d has a target", m)
		}
	}
}

func TestMarkdown(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Reps, cfg.Deltas, cfg.Seq = 3, 500, 9
	cfg.Vs = []string{"/opt/other|impl"}
	r := &Report{Config: cfg, Binaries: cfg.binaries()}
	rows := []Row{
		{SpawnPing, []Cell{{Value: 2, Samples: 9}, {Value: 4, Samples: 9}, {Value: 2.5, Samples: 9}}},
		{EventsPerSec, []Cell{{Value: 1000, Samples: 3}, {Value: 950, Samples: 3}, {Err: "stream session: no answer\nwithin 1m", Samples: 0}}},
		{StreamCPU, []Cell{{Err: "floor broke", Samples: 0}, {Value: 12, Samples: 3}, {Value: 5, Samples: 3}}},
		{SeqLatency, []Cell{{Value: 1, Samples: 3}, {Value: 1.2, Samples: 3}, {Err: "stream session: no answer\nwithin 1m"}}},
		{ToolRoundTrip, []Cell{{Value: 3, Samples: 3}, {Value: 4, Samples: 3}, {Value: 5, Samples: 3}}},
		{ReadRoundTrip, []Cell{{Value: 2, Samples: 3}, {Value: 3, Samples: 3}, {Value: 3, Samples: 3}}},
	}
	r.Sections = []Section{{Provider: ProviderAnthropic, Rows: rows}}
	md := r.Markdown()
	t.Log("\n" + md)
	for _, want := range []string{
		"Medians of 3 repetitions; long answer 500 × 16 B text deltas; 9 sequential short prompts",
		"| vs other\\|impl | `/opt/other\\|impl` |",
		"| metric | target | floor | zot | zot ÷ floor | vs other\\|impl | vs other\\|impl ÷ floor |",
		"| spawn → ping (ms) | ≤ 1.5× | 2.00 | 4.00 | 2.00× **FAIL** | 2.50 | 1.25× pass |",
		"| stream 500 × 16 B deltas (text_delta events/s) | ≥ 0.9× | 1000 | 950 | 0.95× pass | error [1] | — |",
		"| CPU for the 500-delta prompt (ms) | — | error [2] | 12.0 | n/a | 5.00 | n/a |",
		"| 9 sequential short prompts (median ms per prompt) | ≤ 1.3× | 1.00 | 1.20 | 1.20× pass | error [1] | — |",
		"1. vs other|impl, anthropic: stream session: no answer within 1m\n",
		"2. floor, anthropic: floor broke\n",
		"### zot against the other binaries (anthropic)",
		"| metric | goal | zot | vs other\\|impl | zot ÷ vs other\\|impl |",
		"| spawn → ping (ms) | — | 4.00 | 2.50 | 1.60× |",
		"| 9 sequential short prompts (median ms per prompt) | — | 1.20 | — | — |",
		"| prompt with a bash tool round trip (median of 5, ms) | ≤ 1× | 4.00 | 5.00 | 0.80× pass |",
		"| prompt with a read tool round trip (median of 5, ms) | ≤ 0.8× | 3.00 | 3.00 | 1.00× **FAIL** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

func TestMarkdownExtra(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Vs = []string{"/opt/other"}
	r := &Report{Config: cfg, Binaries: cfg.binaries()}
	r.Extra = &Section{Provider: ProviderAnthropic, Rows: []Row{
		{AbortSleep, []Cell{{}, {Value: 2.5, Samples: 5}, {Err: "no abort", Samples: 0}}},
		{AbortRead, []Cell{{}, {Value: 0.75, Samples: 5}, {Err: "no abort", Samples: 0}}},
		{BigPromptRSS, []Cell{{}, {Value: 480, Samples: 5}, {Value: 150, Samples: 5}}},
	}}
	md := r.Markdown()
	t.Log("\n" + md)
	for _, want := range []string{
		"### abort and large input (anthropic format)",
		"| metric | goal | zot | vs other |\n| --- | --- | ---: | ---: |\n",
		"| abort → done while bash runs `sleep 30` (median ms) | — | 2.50 | error [1] |",
		"| abort → done while read scans a 1 GiB line (median ms) | — | 0.750 | error [1] |",
		"| peak RSS taking one 64 MiB prompt line (MiB) | ≤ 3× the line | 480.0 (7.50× **FAIL**) | 150.0 (2.34× pass) |",
		"1. vs other, anthropic: no abort\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
