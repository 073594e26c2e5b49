package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// toolThenAnswer is a model that calls bash with cmd and, given its
// result, answers.
func toolThenAnswer(cmd string, delay time.Duration) func(modelRequest) []answerPart {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return func(r modelRequest) []answerPart {
		if r.Results == 0 {
			return []answerPart{{Text: "Running it now. ", Delay: delay}, {Tool: "bash", Args: string(args)}}
		}
		return []answerPart{{Text: "Done: the command ran and said what it said.", Delay: delay}}
	}
}

// TestFleetEventsAsInProcess runs one turn with a tool call through zot
// daemon --executor temporal and through the in-process daemon: the
// client sees the same updates in the same order, the tool's effect
// happens once, and each model call is paid once.
func TestFleetEventsAsInProcess(t *testing.T) {
	f := newFleet(t, toolThenAnswer("echo ran >> log.txt", 0))
	f.worker("w1")
	run := func(name string, inProcess bool) ([]json.RawMessage, string) {
		_, sock := f.daemon(name, inProcess)
		work := filepath.Join(f.dir, name+"-work")
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		c := dialACP(t, sock)
		s := c.newSession(work)
		c.taken()
		res := c.prompt(s, "run it")
		if !strings.Contains(string(res), `"stopReason":"end_turn"`) {
			t.Fatalf("%s: prompt answered %s", name, res)
		}
		log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
		return c.taken(), string(log)
	}
	want, wantLog := run("inprocess", true)
	got, gotLog := run("fleet", false)
	norm := func(us []json.RawMessage) []string {
		var out []string
		for _, u := range us {
			var m map[string]any
			_ = json.Unmarshal(u, &m)
			delete(m, "_meta") // timings
			b, _ := json.Marshal(m)
			out = append(out, string(b))
		}
		return out
	}
	if w, g := norm(want), norm(got); !slices.Equal(w, g) {
		t.Errorf("updates differ:\nin process:\n%s\nfleet:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
	}
	if wantLog != "ran\n" || gotLog != "ran\n" {
		t.Errorf("the tool's effect: in process %q, fleet %q; want it once each", wantLog, gotLog)
	}
	if n0, n1 := f.model.count(0), f.model.count(1); n0 != 2 || n1 != 2 {
		t.Errorf("model requests: %d first calls and %d second calls for two turns; want 2 and 2 (none paid twice)", n0, n1)
	}
}

// TestFleetApproval: with --permission ask, a tool call a worker is about
// to run is first shown to the daemon's session, whose approval asks the
// client: allowed, it runs once; rejected, it never runs and the model
// is told so.
func TestFleetApproval(t *testing.T) {
	f := newFleet(t, toolThenAnswer("echo ran >> log.txt", 0))
	f.worker("w1")
	_, sock := f.daemonAs("d", false, "ask")
	for _, reject := range []bool{false, true} {
		work := filepath.Join(f.dir, fmt.Sprintf("work-%v", reject))
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		c := dialACP(t, sock)
		c.reject = reject
		s := c.newSession(work)
		if res := c.prompt(s, "run it"); !strings.Contains(string(res), `"end_turn"`) {
			t.Fatalf("reject=%v: prompt answered %s", reject, res)
		}
		log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
		want := "ran\n"
		if reject {
			want = ""
		}
		if c.asked != 1 || string(log) != want {
			t.Errorf("reject=%v: asked %d times, the command's effect %q; want asked once and %q", reject, c.asked, log, want)
		}
	}
}
