package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFleetRelayRefusesStrangers: whoever reaches a zot-fleet client's
// relay without the client's secret (which only the workers read, from
// the blob store) can neither post events into a turn, nor show the
// session a call to approve or a step to gate, nor run a tool living in
// the daemon: each request is answered 401 and nothing reaches zot.
func TestFleetRelayRefusesStrangers(t *testing.T) {
	f := newFleet(t, slowAnswer("unused", 0))
	relay := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(f.tl.fleet, "client", "--temporal", f.addr(), "--blobs", f.blobs, "--relay", relay)
	cmd.Env = append(cmd.Environ(), "ZOT_HOME="+f.home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	frames := make(chan string, 16)
	go func() {
		defer close(frames)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			frames <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("zot-fleet client: %v\n%s", err, stderr.String())
		}
	})
	select {
	case line := <-frames:
		if !strings.Contains(line, `"ready"`) {
			t.Fatalf("the first frame is %s, want ready\n%s", line, stderr.String())
		}
	case <-time.After(hang):
		t.Fatalf("no ready frame:\n%s", stderr.String())
	}

	hc := &http.Client{Timeout: 3 * time.Second}
	for _, c := range []struct{ path, body, auth string }{
		{"/call", `{"Turn":"zot-s-1-x","Key":1,"Call":{"id":"c1","name":"bash","args":{"command":"touch /tmp/owned"}}}`, ""},
		{"/intercept", `{"turn":"zot-s-1-x","call":{"id":"c1","name":"bash","args":{"command":"true"}}}`, ""},
		{"/turn", `{"turn":"zot-s-1-x","step":1}`, ""},
		{"/events", `{"turn":"zot-s-1-x","seq":1,"event":{"type":"text_delta","delta":"hi"}}` + "\n", ""},
		{"/call", `{"Turn":"zot-s-1-x","Key":2,"Call":{"id":"c2","name":"bash","args":{}}}`, "Bearer guess"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+relay+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := hc.Do(req)
		switch {
		case err != nil:
			t.Errorf("POST %s (%q): %v (the relay held it: it reached zot)", c.path, c.auth, err)
		case resp.StatusCode != http.StatusUnauthorized:
			t.Errorf("POST %s (%q): %s, want 401 Unauthorized", c.path, c.auth, resp.Status)
		}
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
	}
	// Nothing of them reached zot: no frame came after ready.
	select {
	case line := <-frames:
		var fr struct{ Type string }
		_ = json.Unmarshal([]byte(line), &fr)
		t.Errorf("a stranger's request reached zot as a %s frame: %s", fr.Type, line)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestFleetWorkerOfAnotherProvider: a turn whose session asks for one
// provider's model, taken by workers of another provider, is not
// answered by the wrong model: the model call fails on them, the
// prompt ends with an error naming both providers, and the worker's
// provider is never paid.
func TestFleetWorkerOfAnotherProvider(t *testing.T) {
	f := newFleet(t, slowAnswer("the wrong model answered", 0))
	f.worker("w1") // --provider anthropic
	sock := filepath.Join(f.dir, "d.sock")
	d := start(t, "daemon", []string{"ZOT_HOME=" + f.home, "ZOT_SOCKET=" + sock},
		f.tl.zot, "daemon", "--provider", "openai", "--model", "gpt-4o", "--base-url", f.model.url, "--api-key", "test-key",
		"--permission", "allow", "--executor", "temporal", "--temporal", f.addr(), "--blobs", f.blobs)
	f.waitOutput(d, "listening")
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	res, err := c.try("session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	said := string(res) + text(c.taken())
	if err != nil {
		said += err.Error()
	}
	if strings.Contains(said, "the wrong model answered") {
		t.Errorf("an anthropic worker answered a turn that asked for openai: %s", said)
	}
	if !strings.Contains(said, "worker calls anthropic models; the turn asks for openai's gpt-4o") {
		t.Errorf("the prompt ended %s (err %v); want it to name both providers", res, err)
	}
	if n := f.model.count(0); n != 0 {
		t.Errorf("the worker's provider was paid %d calls for another provider's turn", n)
	}
}

// TestFleetRelayAddress: a daemon whose workers run on other machines
// gives its relay an address they reach (--temporal-relay, and
// --temporal-relay-url when it listens on every address): its turns'
// events come through it, and it answers strangers 401. One listening on
// every address without a URL would hand the workers an address they
// cannot post to: the daemon does not start, saying so.
func TestFleetRelayAddress(t *testing.T) {
	f := newFleet(t, slowAnswer("through the relay", 0))
	f.worker("w1")
	port := strconv.Itoa(freePort(t))
	_, sock := f.daemonAs("d1", false, "allow", "--temporal-relay", "0.0.0.0:"+port, "--temporal-relay-url", "http://127.0.0.1:"+port)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	if res := c.prompt(s, "hi"); !strings.Contains(string(res), "end_turn") {
		t.Fatalf("prompt answered %s", res)
	}
	if got := text(c.taken()); got != "through the relay" {
		t.Errorf("the client saw %q; want the answer's chunks, relayed", got)
	}
	resp, err := http.Post("http://127.0.0.1:"+port+"/events", "application/x-ndjson", strings.NewReader("{}\n"))
	if err != nil {
		t.Fatalf("the relay does not listen on --temporal-relay: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a stranger's post to the relay: %s, want 401", resp.Status)
	}

	sock2 := filepath.Join(f.dir, "d2.sock")
	d2 := start(t, "d2", []string{"ZOT_HOME=" + f.home, "ZOT_SOCKET=" + sock2},
		f.tl.zot, "daemon", "--provider", "anthropic", "--base-url", f.model.url, "--api-key", "test-key",
		"--executor", "temporal", "--temporal", f.addr(), "--blobs", f.blobs, "--temporal-relay", "0.0.0.0:"+strconv.Itoa(freePort(t)))
	if code := exited(t, d2); code == 0 {
		t.Errorf("a daemon whose relay has no address workers reach started")
	}
	if !strings.Contains(d2.out.String(), "give --temporal-relay-url") {
		t.Errorf("the daemon said %q; want it to ask for the relay's URL", d2.out.String())
	}
}

// TestFleetClientKilledUnderDaemon: the zot-fleet client that a daemon
// started, killed mid-turn, is started again: the prompt it was running
// ends as the turn did in the fleet (its answer kept in the session),
// not with the client's death, and the session's next prompt runs.
func TestFleetClientKilledUnderDaemon(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	f.worker("w1")
	d, sock := f.daemon("d1", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	wait := promptAsync(t, c, s, "go")
	<-firstChunk(c)
	// The daemon's child: each thread lists the children it started.
	var kids []string
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(d.cmd.Process.Pid) + "/task/*/children")
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		kids = append(kids, strings.Fields(string(b))...)
	}
	if len(kids) != 1 {
		t.Fatalf("the daemon's children: %q; want its client", kids)
	}
	client, err := strconv.Atoi(kids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(client, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res := wait()
	if !strings.Contains(string(res), `"stopReason":"end_turn"`) || !strings.Contains(string(res), "twenty.") {
		t.Errorf("the prompt whose client was killed answered %s; want the turn's end, as the fleet ran it", res)
	}
	c.taken()
	if res := c.prompt(s, "again"); !strings.Contains(string(res), `"stopReason":"end_turn"`) {
		t.Errorf("the next prompt answered %s", res)
	}
	if got := text(c.taken()); got != longText {
		t.Errorf("the next prompt's answer: %q", got)
	}
	if n := f.model.count(0); n != 2 {
		t.Errorf("the model was paid %d calls for two prompts", n)
	}
	if !strings.Contains(d.out.String(), "started it again") {
		t.Errorf("the daemon did not say it started the client again:\n%s", d.out.String())
	}
}

// TestFleetNoWorkerForTheDirectory: a tool call no worker of the tool
// queue takes (none holds the session's working directory) is answered,
// after the daemon's --temporal-tool-start-timeout, as not run, naming
// the queue: never as interrupted work that may have done part of its
// effects. The turn goes on: the model reads it.
func TestFleetNoWorkerForTheDirectory(t *testing.T) {
	f := newFleet(t, toolThenAnswer("echo ran >> log.txt", 0))
	f.worker("w1") // serves zot only
	_, sock := f.daemonAs("d1", false, "allow", "--tool-queue", "nobody-holds-it", "--temporal-tool-start-timeout", "3s")
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	began := time.Now()
	if res := c.prompt(s, "run it"); !strings.Contains(string(res), `"stopReason":"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	took := time.Since(began)
	var said string
	for _, u := range c.taken() {
		if strings.Contains(string(u), `"status":"failed"`) {
			said += string(u)
		}
	}
	if !strings.Contains(said, `not run: no worker of the tool queue \"nobody-holds-it\"`) || strings.Contains(said, "interrupted") {
		t.Errorf("the call no worker took was answered %s; want it not run, naming the queue", said)
	}
	if took > 30*time.Second {
		t.Errorf("the turn took %v with a tool start timeout of 3s", took)
	}
	if n := f.model.count(1); n != 1 {
		t.Errorf("the model was asked %d times to go on after the call; want once", n)
	}
}

// TestFleetBlobStoreEmptied: a blob store emptied while a daemon runs
// (cleaned by hand, a new volume mounted) holds the next turn's values
// again: its events reach the client through the relay, whose secret
// is stored anew with the turn.
func TestFleetBlobStoreEmptied(t *testing.T) {
	f := newFleet(t, slowAnswer("after the store was emptied", 0))
	_, sock := f.daemon("d1", false)
	if err := os.RemoveAll(f.blobs); err != nil {
		t.Fatal(err)
	}
	f.worker("w1") // reads nothing of the store before the turn
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	if res := c.prompt(s, "hi"); !strings.Contains(string(res), `"stopReason":"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	if got := text(c.taken()); got != "after the store was emptied" {
		t.Errorf("the client saw %q; want the answer's chunks", got)
	}
}

// TestFleetPromptAfterClusterOutage: a prompt sent just as the cluster
// comes back from a long outage (its dev server away 45 s) runs: the
// client waits for the cluster to take the turn instead of failing the
// prompt at its first refusal.
func TestFleetPromptAfterClusterOutage(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	chunk := firstChunk(c)
	wait := promptAsync(t, c, s, "before")
	waitChan(t, "the first chunk", chunk)
	f.server.kill() // mid-answer
	time.Sleep(45 * time.Second)
	f.startServer()
	if res := wait(); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("the prompt the outage cut answered %s", res)
	}
	c.taken()
	res, err := c.try("session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "text", "text": "after"}}})
	if err != nil || !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("the prompt sent as the cluster came back answered %s %v", res, err)
	}
	if got := text(c.taken()); got != longText {
		t.Errorf("the client saw %q", got)
	}
}
