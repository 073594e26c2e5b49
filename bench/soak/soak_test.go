//go:build linux

package soak

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

var (
	soakDuration = flag.Duration("soak-duration", 20*time.Second, "how long TestSoak sends traffic (make soak: 10m)")
	soakSeed     = flag.Uint64("soak-seed", 0, "seed of TestSoak's choices; 0 picks one from the clock")
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the run.
var zotBin string

func TestMain(m *testing.M) {
	os.Exit(zotbin.Main(m, &zotBin, false))
}

// Limits the soak holds the long-lived process to.
const (
	// fdSlack is how many more descriptors the long-lived process may
	// hold at the end than after its warm-up.
	fdSlack = 3
	// maxGrowth bounds the growth of its resident memory between the
	// first and the last minute; it is checked on runs of at least
	// growthCheckedFrom, where the windows are a minute long.
	maxGrowth         = 0.10
	growthCheckedFrom = 5 * time.Minute
)

func TestSoak(t *testing.T) {
	d := *soakDuration
	seed := *soakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("soaking %s for %v, seed %d (-soak-seed %d repeats the traffic)", zotBin, d, seed, seed)
	ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Zot: zotBin, Duration: d, Seed: seed, Dir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	t.Logf("%v: %d processes (%d ended by closing stdin, %d by SIGTERM or SIGINT mid-turn, %d of them killed by it before answering anything); %d actions: %d bursts, %d mid-turn aborts",
		res.Elapsed.Round(time.Second), st.Processes, st.ExitsEOF, st.ExitsSignal, st.EarlySignals, st.Actions, st.Bursts, st.MidTurnAborts)
	t.Logf("%d commands (%d malformed lines), %d frames (%d events); %d prompts and %d compacts, %d dones; %d aborts cut work, %d queued items dropped; %d tool calls",
		st.Commands, st.Malformed, st.Frames, st.Events, st.Prompts, st.Compacts, st.Dones, st.Aborted, st.Dropped, st.ToolCalls)
	t.Logf("%d checks for processes left behind; the slowest to clear took %v", st.LeakChecks, st.MaxLeakWait.Round(time.Millisecond))
	for _, f := range res.Failures {
		t.Error(f)
	}
	if res.FailureCount > len(res.Failures) {
		t.Errorf("… and %d more failures", res.FailureCount-len(res.Failures))
	}
	checkLongLived(t, res, d)
	logDaemon(t, res.Daemon)
}

// logDaemon reports the daemon phase's figures (its failures are among
// the run's).
func logDaemon(t *testing.T, dr *DaemonResult) {
	if dr == nil {
		return
	}
	st := dr.Stats
	t.Logf("daemon: %d connections, %d prompts (%d read at %d B/s), %d answered; %d left mid-turn; %d session/load (%d left mid-replay); %d cancels; %d reconnects; %d notices read; at most %d children at once",
		st.Connections, st.Prompts, st.SlowPrompts, slowReaderRate, st.Answered, st.LeftMidTurn, st.Loads, st.LeftMidReplay, st.Cancels, st.Reconnects, st.Notices, st.MaxChildren)
	for _, s := range []DaemonSample{dr.Start, dr.End} {
		t.Logf("daemon idle at %v: VmRSS %.1f MiB, %d descriptors, %d goroutines, logs %d bytes, stderr %d bytes",
			s.At.Round(time.Second), mib(s.RSS), s.FDs, s.Goroutines, s.Logs, s.Stderr)
	}
	var most DaemonSample
	for _, s := range dr.Samples {
		most.RSS, most.FDs, most.Goroutines = max(most.RSS, s.RSS), max(most.FDs, s.FDs), max(most.Goroutines, s.Goroutines)
	}
	t.Logf("daemon under load (%d samples): at most VmRSS %.1f MiB, %d descriptors, %d goroutines; logs at most %d bytes",
		len(dr.Samples), mib(most.RSS), most.FDs, most.Goroutines, dr.MaxLogs)
}

// checkLongLived holds the long-lived process to its descriptor and
// memory limits.
func checkLongLived(t *testing.T, res *Result, d time.Duration) {
	warm := min(time.Minute, d/6)
	window := min(time.Minute, d/4)
	var after []Sample
	for _, s := range res.Samples {
		if s.At >= warm {
			after = append(after, s)
		}
	}
	if len(after) < 2 {
		t.Errorf("%d samples of the long-lived process after the %v warm-up; want at least 2", len(after), warm)
		return
	}
	first, last := after[0], after[len(after)-1]
	most := 0
	for _, s := range after {
		most = max(most, s.FDs)
	}
	t.Logf("long-lived process: %d idle samples; descriptors %d after the %v warm-up, %d at the end (at most %d)",
		len(res.Samples), first.FDs, warm, last.FDs, most)
	if last.FDs > first.FDs+fdSlack {
		t.Errorf("the long-lived process holds %d descriptors at the end, %d after its warm-up (slack %d)", last.FDs, first.FDs, fdSlack)
	}
	early, late, ok := Growth(res.Samples, last.At, warm, window)
	if !ok {
		t.Errorf("no memory samples in the first or last %v window", window)
		return
	}
	growth := float64(late)/float64(early) - 1
	t.Logf("long-lived process: median VmRSS %.1f MiB in [%v, %v], %.1f MiB in the last %v: %+.1f%%",
		mib(early), warm, warm+window, mib(late), window, 100*growth)
	if d >= growthCheckedFrom && growth > maxGrowth {
		t.Errorf("the long-lived process's memory grew %.1f%% between the first and the last minute (limit %.0f%%)", 100*growth, 100*maxGrowth)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
