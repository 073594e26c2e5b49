package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// exited waits for p to end and returns its exit code.
func exited(t *testing.T, p *proc) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(hang):
		t.Fatalf("%s did not exit:\n%s", p.name, p.out.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// TestFleetWorkerCannotStart: a worker pointed at a cluster that is not
// there, or at a namespace the cluster does not have, exits 1 at once
// with a line that says which and what to do.
func TestFleetWorkerCannotStart(t *testing.T) {
	f := newFleet(t, slowAnswer("unused", 0))
	base := []string{f.tl.fleet, "worker", "--provider", "anthropic", "--base-url", f.model.url, "--api-key", "test-key", "--blobs", f.blobs}
	for _, c := range []struct {
		name  string
		flags []string
		says  []string
	}{
		{"unreachable", []string{"--temporal", "127.0.0.1:" + strconv.Itoa(freePort(t))}, []string{"connecting to Temporal at 127.0.0.1:", "connection refused"}},
		{"no such namespace", []string{"--temporal", f.addr(), "--namespace", "nosuch"}, []string{`no namespace "nosuch"`, "temporal operator namespace create --namespace nosuch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			p := start(t, "worker", []string{"ZOT_HOME=" + f.home}, append(base, c.flags...)...)
			if code := exited(t, p); code != 1 {
				t.Errorf("exit code %d, want 1:\n%s", code, p.out.String())
			}
			if took := time.Since(began); took > 20*time.Second {
				t.Errorf("took %v to give up", took)
			}
			for _, want := range c.says {
				if !strings.Contains(p.out.String(), want) {
					t.Errorf("the worker said %q; want it to say %q", p.out.String(), want)
				}
			}
		})
	}
}

// TestFleetWorkerGracefulStop: SIGTERM to the worker running a bash call
// lets the call finish (the command runs to its end, once, and the model
// reads its real result, not an interruption), takes no more work (the
// next model call goes to the other worker), and the worker exits 0.
func TestFleetWorkerGracefulStop(t *testing.T) {
	marks := "marks.txt"
	answers := toolThenAnswer("echo start >> "+marks+"; sleep 3; echo end >> "+marks+"; echo finished", 0)
	var mu sync.Mutex
	var results []string
	f := newFleet(t, func(r modelRequest) []answerPart {
		if r.Results > 0 {
			mu.Lock()
			results = append(results, r.LastResult)
			mu.Unlock()
		}
		return answers(r)
	})
	w1 := f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	s := c.newSession(work)
	wait := promptAsync(t, c, s, "run it")
	deadline := time.Now().Add(hang)
	for {
		if b, _ := os.ReadFile(filepath.Join(work, marks)); strings.Contains(string(b), "start") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.worker("w2")
	if err := w1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exited(t, w1); code != 0 {
		t.Errorf("the worker exited %d after SIGTERM, want 0:\n%s", code, w1.out.String())
	}
	if !strings.Contains(w1.out.String(), "stopping") {
		t.Errorf("the worker did not say it was stopping:\n%s", w1.out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(work, marks)); string(b) != "start\nend\n" {
		t.Errorf("the command's marks when the worker exited: %q, want it run once to its end", b)
	}
	if res := wait(); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 1 || !strings.Contains(results[0], "finished") {
		t.Errorf("the model read %q; want the command's own result once", results)
	}
}

// TestFleetWorkerHealth: a worker's --health answers GET /healthz with
// 200 while it serves and the cluster answers, 503 naming the cluster
// while the cluster is away, and 200 again once it is back.
func TestFleetWorkerHealth(t *testing.T) {
	f := newFleet(t, slowAnswer("unused", 0))
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	f.worker("w1", "--health", addr)
	check := func() (int, string) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// until polls the check until it answers code.
	until := func(code int) string {
		t.Helper()
		deadline := time.Now().Add(hang)
		for {
			got, body := check()
			if got == code {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("/healthz answered %d %q; want %d", got, body, code)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if body := until(http.StatusOK); !strings.Contains(body, "serving zot") {
		t.Errorf("/healthz while serving: %q", body)
	}
	f.server.kill()
	if body := until(http.StatusServiceUnavailable); !strings.Contains(body, "the cluster at "+f.addr()+" does not answer") {
		t.Errorf("/healthz with the cluster away: %q", body)
	}
	f.startServer()
	until(http.StatusOK)
}
