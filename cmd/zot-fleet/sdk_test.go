package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// sdkRun prompts a Runtime of cfg, working in a new folder under the
// fleet's, and returns its events (as JSON, their times and the run's
// duration left out)
// and what the tool left in log.txt.
func sdkRun(t *testing.T, f *fleetSetup, name string, cfg sdk.Config) ([]string, string) {
	t.Helper()
	work := filepath.Join(f.dir, name+"-work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg.Provider, cfg.BaseURL, cfg.APIKey, cfg.CWD = "anthropic", f.model.url, "test-key", work
	log := &syncBuffer{}
	cfg.Log = log
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, log.String())
		}
	})
	rt, err := sdk.New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	ch, err := rt.Prompt(ctx, "run it", nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var events []string
	for ev := range ch {
		// The fields that differ from run to run: when, how long.
		switch e := ev.(type) {
		case *wire.DoneEvent:
			if e.Result != nil {
				e.Result.DurationMs = 0
			}
		case *wire.UserMessageEvent:
			e.Time = ""
		case *wire.AssistantMessageEvent:
			e.Time = ""
		}
		events = append(events, string(ev.AppendJSON(nil)))
	}
	if err := rt.Close(); err != nil {
		t.Errorf("%s: Close: %v", name, err)
	}
	out, _ := os.ReadFile(filepath.Join(work, "log.txt"))
	return events, string(out)
}

// workflows lists the cluster's workflows as the Temporal CLI shows
// them: id → status.
func (f *fleetSetup) workflows() map[string]string {
	f.t.Helper()
	out, err := exec.Command(f.tl.temporal, "workflow", "list", "--address", f.addr(), "--output", "json").Output()
	if err != nil {
		f.t.Fatalf("temporal workflow list: %v", err)
	}
	var list []struct {
		Execution struct {
			WorkflowID string `json:"workflowId"`
		} `json:"execution"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		f.t.Fatalf("temporal workflow list: %v\n%s", err, out)
	}
	m := map[string]string{}
	for _, w := range list {
		m[w.Execution.WorkflowID] = w.Status
	}
	return m
}

// TestFleetSDK: a Go program embedding zot with sdk.Config.Fleet runs a
// prompt with a tool call on the fleet: the turn is a workflow of the
// cluster that completed, the tool ran once, and the program sees the
// same events as from the same prompt in process.
func TestFleetSDK(t *testing.T) {
	f := newFleet(t, toolThenAnswer("echo ran >> log.txt", 0))
	t.Setenv("ZOT_HOME", f.home)
	f.worker("w1")
	want, wantLog := sdkRun(t, f, "inprocess", sdk.Config{})
	got, gotLog := sdkRun(t, f, "fleet", sdk.Config{Fleet: &sdk.Fleet{Binary: f.tl.fleet, Temporal: f.addr(), Blobs: f.blobs}})
	if !slices.Equal(want, got) {
		t.Errorf("events differ:\nin process:\n%s\nfleet:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if wantLog != "ran\n" || gotLog != "ran\n" {
		t.Errorf("the tool's effect: in process %q, fleet %q; want it once each", wantLog, gotLog)
	}
	if n0, n1 := f.model.count(0), f.model.count(1); n0 != 2 || n1 != 2 {
		t.Errorf("model requests: %d first calls and %d second calls for two prompts; want 2 and 2", n0, n1)
	}
	// The cluster's visibility store lags its histories a little, and
	// the prompt is answered with the end its last step posts, a moment
	// before the workflow closes.
	var flows map[string]string
	for deadline := time.Now().Add(hang); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if flows = f.workflows(); len(flows) > 0 && !slices.ContainsFunc(slices.Collect(maps.Values(flows)), func(s string) bool { return strings.Contains(strings.ToLower(s), "running") }) {
			break
		}
	}
	if len(flows) != 1 {
		t.Fatalf("the cluster's workflows: %v; want the prompt's turn", flows)
	}
	for id, status := range flows {
		if !strings.HasPrefix(id, "zot-memory-") || !strings.Contains(strings.ToLower(status), "completed") {
			t.Errorf("the cluster's workflow %s is %s; want a turn of a session kept in memory, completed", id, status)
		}
	}
}

// TestFleetSDKProgram is the Go program TestFleetSDKKilledMidTurn kills:
// it runs only when that test starts it (ZOT_FLEET_SDK_PROGRAM=1). It
// prints its stored session's id, then prompts and prints each chunk of
// the answer as it comes.
func TestFleetSDKProgram(t *testing.T) {
	if os.Getenv("ZOT_FLEET_SDK_PROGRAM") != "1" {
		t.Skip("run by TestFleetSDKKilledMidTurn")
	}
	rt, err := sdk.New(programConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	fmt.Printf("session %s\n", rt.SessionID())
	ch, err := rt.Prompt(context.Background(), "count", nil)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if d, ok := ev.(*wire.TextDeltaEvent); ok {
			fmt.Printf("chunk %q\n", d.Delta)
		}
	}
}

// programConfig is the Config of the program of TestFleetSDKKilledMidTurn,
// from its environment.
func programConfig() sdk.Config {
	return sdk.Config{
		Provider: "anthropic", BaseURL: os.Getenv("ZOT_TEST_MODEL"), APIKey: "test-key",
		CWD: os.Getenv("ZOT_TEST_CWD"), SessionStore: os.Getenv("ZOT_TEST_STORE"),
		Fleet: &sdk.Fleet{Binary: os.Getenv("ZOT_FLEET_BIN"), Temporal: os.Getenv("ZOT_TEST_TEMPORAL"), Blobs: os.Getenv("ZOT_TEST_BLOBS")},
	}
}

// TestFleetSDKKilledMidTurn: kill -9 of a Go program (and the zot-fleet
// client its Runtime started) mid-answer. The turn finishes in the fleet;
// the program started again on its stored session (Config.SessionID)
// waits for the turn's end in New and holds all of it, in memory and in
// the session's file; the model was asked once.
func TestFleetSDKKilledMidTurn(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	f.worker("w1")
	env := []string{"ZOT_HOME=" + f.home, "ZOT_FLEET_BIN=" + f.tl.fleet, "ZOT_TEST_MODEL=" + f.model.url, "ZOT_TEST_CWD=" + f.dir,
		"ZOT_TEST_STORE=" + filepath.Join(f.home, "sessions"), "ZOT_TEST_TEMPORAL=" + f.addr(), "ZOT_TEST_BLOBS=" + f.blobs}
	p := start(t, "program", append(env, "ZOT_FLEET_SDK_PROGRAM=1"), os.Args[0], "-test.run=^TestFleetSDKProgram$", "-test.v")
	f.waitOutput(p, "chunk ")
	p.kill()
	m := regexp.MustCompile(`session (\S+)`).FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("the program named no session:\n%s", p.out.String())
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cfg := programConfig()
	cfg.SessionID = m[1]
	rt, err := sdk.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	msgs, err := rt.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Content.Text() != longText {
		t.Fatalf("the session after the restart holds %+v; want the prompt and the whole answer %q", msgs, longText)
	}
	if n := f.model.count(0); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	// The session's file keeps the answer: a Runtime without the fleet reads it.
	cfg.Fleet = nil
	again, err := sdk.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if msgs, _ := again.Messages(context.Background()); len(msgs) != 2 || msgs[1].Content.Text() != longText {
		t.Errorf("the session's file holds %d messages; want the prompt and the whole answer", len(msgs))
	}
}
