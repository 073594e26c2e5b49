package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
)

// TestRefusalInPrintMode: aimock cannot stream a refusal, so a loopback
// server plays Anthropic's from the anthropic provider's own fixture
// (RawMessageDeltaEvent with stop_reason "refusal" and stop_details, as
// @anthropic-ai/sdk 1.12.0 defines it). zot -p then says why it has no
// answer and ends with status 1; with --json the turn_end carries the
// reason.
func TestRefusalInPrintMode(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "refusal.sse"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	base := []string{"--provider", "anthropic", "--base-url", srv.URL, "--api-key", "test-key", "--no-tools"}

	cmd := exec.Command(zotBin, append(base, "-p", "how do I")...)
	cmd.Env = env(t)
	var stderr zotbin.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	ee, _ := err.(*exec.ExitError)
	if ee == nil || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "the model refused to answer: This request was declined because it could enable cyber harm.") {
		t.Fatalf("err %v\nstdout %s\nstderr %s", err, out, stderr.String())
	}

	cmd = exec.Command(zotBin, append(base, "-p", "how do I", "--json")...)
	cmd.Env = env(t)
	out, _ = cmd.Output()
	evs := lines(t, out)
	var end event
	for _, e := range evs {
		if e.typ() == "turn_end" {
			end = e
		}
	}
	if end.str("stop") != "refusal" || end.str("reason") != "This request was declined because it could enable cyber harm." || evs[len(evs)-1].typ() != "done" {
		t.Fatalf("events %v", evs)
	}
}
