//go:build unix

package bench

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunAgainstFloor(t *testing.T) {
	floor := buildFloor(t)
	cfg := smallConfig(floor, floor)
	cfg.Vs = []string{floor}
	r := run(t, cfg)
	if len(r.Sections) != 2 || r.Sections[0].Provider != ProviderAnthropic || r.Sections[1].Provider != ProviderOpenAI {
		t.Fatalf("sections %+v", r.Sections)
	}
	for _, name := range []string{"floor", "zot", "vs zot-floor"} {
		for provider, byMetric := range cells(t, r, name) {
			if len(byMetric) != len(Metrics()) {
				t.Errorf("%s %s: %d rows", name, provider, len(byMetric))
			}
			for m, c := range byMetric {
				if !c.OK() || c.Value <= 0 && m != StreamCPU && m != SeqCPU || c.Value < 0 {
					t.Errorf("%s %s %s: %+v", name, provider, m.label(cfg), c)
				}
				wantSamples := 1
				switch m {
				case SpawnPing, PingRSSFile, PingRSSAnon, EndRSSFile, EndRSSAnon:
					wantSamples = int(numSessions) // every process is pinged and ends its work
				}
				if c.Samples != wantSamples {
					t.Errorf("%s %s %s: %d samples, want %d", name, provider, m.label(cfg), c.Samples, wantSamples)
				}
			}
		}
	}
	if len(r.Inits) != 3 {
		t.Fatalf("init rows %+v, want one per binary", r.Inits)
	}
	for i, row := range r.Inits {
		if row.Err != "" || row.Packages == 0 || row.Bytes <= 0 || row.Allocs <= 0 || len(row.Heaviest) == 0 {
			t.Errorf("inits of %s: %+v", r.Binaries[i].Name, row)
		}
	}
	md := r.Markdown()
	t.Log("\n" + md)
	if strings.Contains(md, "error") || strings.Contains(md, "n/a") {
		t.Errorf("table has unfilled cells:\n%s", md)
	}
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		fields := strings.Split(strings.Trim(line, "| "), " | ")
		if len(fields) != 7 || fields[0] == "metric" || strings.HasPrefix(fields[0], "---") {
			continue
		}
		rows++
		// metric | target | floor | zot | zot ÷ floor | vs | vs ÷ floor
		for _, i := range []int{2, 3, 5} {
			if v, err := strconv.ParseFloat(fields[i], 64); err != nil || v < 0 {
				t.Errorf("value cell %d of %q is %q", i, line, fields[i])
			}
		}
		for _, i := range []int{4, 6} {
			if !strings.Contains(fields[i], "×") {
				t.Errorf("ratio cell %d of %q is %q", i, line, fields[i])
			}
		}
	}
	if want := 2 * len(Metrics()); rows != want {
		t.Errorf("table has %d metric rows, want %d", rows, want)
	}
}

func TestBinaryThatExitsAtOnce(t *testing.T) {
	floor := buildFloor(t)
	gone := script(t, "gone", "echo 'no rpc here' >&2\nexit 3\n")
	cfg := smallConfig(gone, floor)
	start := time.Now()
	r := run(t, cfg)
	if d := time.Since(start); d > cfg.Timeout {
		t.Errorf("a binary that exits at once held the run for %v", d)
	}
	for provider, byMetric := range cells(t, r, "zot") {
		for m, c := range byMetric {
			if c.OK() || !strings.Contains(c.Err, "exit status 3") || !strings.Contains(c.Err, "no rpc here") {
				t.Errorf("zot %s %s: %+v", provider, m.label(cfg), c)
			}
		}
	}
	for provider, byMetric := range cells(t, r, "floor") {
		for m, c := range byMetric {
			if !c.OK() {
				t.Errorf("floor %s %s: %+v", provider, m.label(cfg), c)
			}
		}
	}
	if len(r.Inits) != 2 || r.Inits[0].Err != "" || r.Inits[0].Bytes <= 0 || !strings.Contains(r.Inits[1].Err, "answered no ping") {
		t.Errorf("init rows %+v, want the floor's measured and zot's left out", r.Inits)
	}
	md := r.Markdown()
	t.Log("\n" + md)
	if !strings.Contains(md, "| error [1] |") || !strings.Contains(md, "1. zot, anthropic: ping: ") {
		t.Errorf("no error cell and note:\n%s", md)
	}
	if !strings.Contains(md, "| zot | — | — | — | — | not measured: it answered no ping above |") {
		t.Errorf("no error row in the init table:\n%s", md)
	}
}

func TestBinaryThatNeverAnswersIsKilled(t *testing.T) {
	pids := t.TempDir() + "/pids"
	mute := script(t, "mute", "echo $$ >> "+pids+"\nexec sleep 600\n")
	cfg := smallConfig(mute, mute)
	cfg.Providers = []string{ProviderOpenAI}
	cfg.Timeout = 500 * time.Millisecond
	r := run(t, cfg)
	for _, name := range []string{"floor", "zot"} {
		for _, c := range cells(t, r, name)[ProviderOpenAI] {
			if c.OK() || !strings.Contains(c.Err, "no answer within 500ms") {
				t.Errorf("%s: %+v", name, c)
			}
		}
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 2 {
		t.Fatalf("started %d processes, want one per binary: %q", len(lines), b)
	}
	for _, l := range lines {
		pid, err := strconv.Atoi(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there (%v)", pid, err)
		}
	}
}

func TestBinaryThatStopsAfterPing(t *testing.T) {
	// Answers the first ping, then exits: spawn → ping is measured, the
	// sessions fail, nothing hangs.
	half := script(t, "half", `read line
echo '{"type":"response","id":"b1","command":"ping","success":true,"data":{"pong":true}}'
read line
`)
	floor := buildFloor(t)
	cfg := smallConfig(half, floor)
	cfg.Providers = []string{ProviderAnthropic}
	r := run(t, cfg)
	got := cells(t, r, "zot")[ProviderAnthropic]
	if c := got[SpawnPing]; !c.OK() || c.Samples != int(numSessions) {
		t.Errorf("spawn → ping: %+v", c)
	}
	for _, m := range []Metric{EventsPerSec, StreamCPU, SeqLatency, SeqCPU, ToolRoundTrip, PeakRSS} {
		if c := got[m]; c.OK() || !strings.Contains(c.Err, "session: ") || !strings.Contains(c.Err, "the process closed stdout") {
			t.Errorf("%s: %+v", m.label(cfg), c)
		}
	}
	// It is no Go program, and exits 1 once stdin ends: its inits are an
	// error, the floor's are measured.
	if len(r.Inits) != 2 || r.Inits[0].Err != "" || r.Inits[1].Err != "zot with GODEBUG=inittrace=1: exit status 1" {
		t.Errorf("init rows %+v", r.Inits)
	}
}

// TestExtrasAgainstZot measures the section on abort and large input on
// the real zot, with a small prompt line, and the floor (standing in for
// a --vs binary) without abort or read: its cells are errors, quickly.
func TestExtrasAgainstZot(t *testing.T) {
	zot, floor := buildZot(t), buildFloor(t)
	cfg := smallConfig(zot, floor)
	cfg.Vs = []string{floor}
	cfg.Providers = []string{ProviderOpenAI}
	cfg.Extras, cfg.BigPrompt = true, 4<<20
	cfg.Timeout = 20 * time.Second // a 4 MiB line under -race on a loaded machine
	r := run(t, cfg)
	md := r.Markdown()
	t.Log("\n" + md)
	if r.Extra == nil || r.Extra.Provider != ProviderOpenAI {
		t.Fatalf("extra section %+v", r.Extra)
	}
	got := map[Metric]Cell{}
	for _, row := range r.Extra.Rows {
		got[row.Metric] = row.Cells[1]
		if c := row.Cells[0]; c.Samples != 0 || c.Err != "" {
			t.Errorf("the floor has a %s cell: %+v", row.Metric.label(cfg), c)
		}
		if c := row.Cells[2]; row.Metric != BigPromptRSS && (c.OK() || c.Err == "") {
			t.Errorf("the floor as --vs: %s %+v", row.Metric.label(cfg), c)
		}
	}
	for _, m := range ExtraMetrics() {
		if c := got[m]; !c.OK() || c.Value <= 0 || c.Samples != 1 {
			t.Errorf("zot %s: %+v", m.label(cfg), c)
		}
	}
	if c := got[BigPromptRSS]; c.Value < 4 {
		t.Errorf("peak RSS %.1f MiB after a 4 MiB prompt", c.Value)
	}
	for _, want := range []string{"### abort and large input (openai format)", "| metric | goal | zot | vs zot-floor |", "peak RSS taking one 4 MiB prompt line (MiB) | ≤ 3× the line | "} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
