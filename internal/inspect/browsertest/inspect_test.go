package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

var docs = flag.String("docs", "", "also write the screenshots into this folder (docs/images)")

// guard bounds every wait; it catches hangs and times nothing.
const guard = 60 * time.Second

// chromium is Debian's browser; `make test-browser` installs it.
func chromium(t *testing.T) string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("ZOT_E2E_REQUIRED") == "1" {
		t.Fatal("no chromium: make test-browser installs Debian's package")
	}
	t.Skip("no chromium (make test-browser installs it)")
	return ""
}

// zot is a running `zot rpc --inspect` with its stdin, its stdout's
// lines and the inspector's address.
type zot struct {
	stdin io.WriteCloser
	lines chan string
	url   string // with the token
	base  string
	token string
}

func startZot(t *testing.T, script string, env ...string) *zot {
	t.Helper()
	bin := os.Getenv("ZOT_BIN")
	if bin == "" {
		t.Skip("ZOT_BIN names the zot binary under test (make test-browser sets it)")
	}
	home, work := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "rpc", "--provider", "scripted", "--script", script, "--cwd", work, "--inspect", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), append([]string{"ZOT_HOME=" + home}, env...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	z := &zot{stdin: stdin, lines: make(chan string, 4096)}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(z.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			z.lines <- sc.Text()
		}
	}()
	addr := make(chan []string, 1)
	go func() {
		defer wg.Done()
		re := regexp.MustCompile(`inspector at ((http://[^/\s]+)/inspect\?token=([0-9a-f]+))`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m
			}
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { wg.Wait(); _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(guard):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case m := <-addr:
		z.url, z.base, z.token = m[1], m[2], m[3]
	case <-time.After(guard):
		t.Fatal("zot printed no inspector address")
	}
	return z
}

func (z *zot) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(z.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// until reads stdout up to a line containing s.
func (z *zot) until(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case l, ok := <-z.lines:
			if !ok {
				t.Fatalf("zot's stdout ended before %q", s)
			}
			if strings.Contains(l, s) {
				return
			}
		case <-timeout:
			t.Fatalf("no %q on zot's stdout", s)
		}
	}
}

// shot saves the viewport as name.png in the test's artifacts (and in
// -docs).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{t.ArtifactDir()}
	if *docs != "" {
		dirs = append(dirs, *docs)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "inspect-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// poll waits until the JavaScript expression is true.
func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(guard)))
	if err != nil || !ok {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// pollAcross is poll across a navigation the last action started.
func pollAcross(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(guard)))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s (%s): %v", what, expr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// The inspector in Chromium, through the binary: the token pasted into
// the page; a prompt with a tool call whose frames appear while it
// streams; a run of chunks folded, unfolded and folded again; a frame's
// JSON; filters; a frame that breaks the schema; the export, with the
// client's token and an API key redacted; the export imported again for
// offline viewing. Each view is a screenshot in the test's artifacts.
func TestInspectorInChromium(t *testing.T) {
	exe := chromium(t)
	const rpcToken = "hello-token-9f8e7d6c5b4a"
	const apiKey = "sk-ant-api03-EXAMPLEKEYexamplekey0123"
	script := filepath.Join(t.TempDir(), "script.json")
	words := strings.Repeat("Checking what the folder holds before answering. ", 4)
	sc, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"thinking": "The user wants to see a tool run.", "text": words, "chunk": 4, "delay_ms": 20,
			"tool_calls": []any{map[string]any{"id": "call_1", "name": "bash", "args": map[string]any{"command": "echo hello from the inspector"}}}},
		map[string]any{"text": "The command printed: hello from the inspector.", "chunk": 5},
	}}}})
	if err := os.WriteFile(script, sc, 0o644); err != nil {
		t.Fatal(err)
	}
	z := startZot(t, script, "ZOTCORE_RPC_TOKEN="+rpcToken)

	downloads := t.TempDir()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 860),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelTime()
	setup := chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
			return err
		}
		_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	})
	if err := chromedp.Do(ctx, setup, chromedp.Navigate(z.base+"/inspect")); err != nil {
		t.Fatal(err)
	}

	// Without the cookie the page asks for the token; pasted, it opens.
	poll(t, ctx, "the token form", `!document.getElementById('login').hidden`)
	// A wrong token is said to be wrong.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#login-token"), "not-the-token"),
		chromedp.Click(chromedp.CSS("#login-form button")),
	); err != nil {
		t.Fatal(err)
	}
	pollAcross(t, ctx, "the wrong token said", `!document.getElementById('login-error').hidden && document.getElementById('login-error').textContent.includes("not this zot's") && location.hash === ''`)
	shot(t, ctx, "login")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#login-token"), z.token),
		chromedp.Click(chromedp.CSS("#login-form button")),
	); err != nil {
		t.Fatal(err)
	}
	pollAcross(t, ctx, "the live stream", `document.getElementById('login').hidden && document.getElementById('status').classList.contains('live') && location.search === ''`)

	// A prompt: its frames appear while it streams, before its done.
	z.send(t, `{"type":"hello","id":"h1","token":"`+rpcToken+`"}`)
	z.send(t, `{"type":"prompt","id":"p1","message":"Show me a tool call. My key is `+apiKey+`"}`)
	poll(t, ctx, "frames while the answer streams", `document.querySelectorAll('#rows tr').length > 4`)
	streaming := eval[bool](t, ctx, `!Array.from(document.querySelectorAll('#rows td.c-method')).some(td => td.textContent.startsWith('done'))`)
	if !streaming {
		t.Error("the page showed the prompt's done at the first look: its frames did not arrive while it streamed")
	}
	shot(t, ctx, "live")
	z.until(t, `"type":"done"`)
	poll(t, ctx, "the done row", `Array.from(document.querySelectorAll('#rows td.c-method')).some(td => td.textContent.startsWith('done'))`)
	poll(t, ctx, "the tool call", `document.querySelector('#rows tr.k-tool') !== null && document.querySelectorAll('#rows tr.k-model').length === 2`)
	shot(t, ctx, "timeline")

	// The run of text deltas is one row; unfolded it shows each frame.
	runs := eval[int](t, ctx, `document.querySelectorAll('#rows tr.run').length`)
	if runs == 0 {
		t.Fatal("no folded chunk run")
	}
	n := eval[int](t, ctx, `(() => { const r = Array.from(document.querySelectorAll('#rows tr.run')).find(r => r.textContent.includes('text_delta')); r.scrollIntoView(); return parseInt(r.querySelector('.c-kind').textContent.replace(/[^0-9]/g, '')); })()`)
	if n < 10 {
		t.Fatalf("the text_delta run holds %d chunks, want the answer's many", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`//tr[contains(@class,'run')][.//td[contains(., 'text_delta')]]`)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the unfolded run", fmt.Sprintf(`document.querySelectorAll('#rows tr.in-run').length === %d`, n))
	shot(t, ctx, "unfolded")
	if err := chromedp.Do(ctx, chromedp.Click(`//tr[contains(@class,'run') and contains(@class,'open')]`)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the folded run", `document.querySelectorAll('#rows tr.in-run').length === 0`)

	// A frame: the tool_call event, its JSON pretty-printed.
	if err := chromedp.Do(ctx, chromedp.Click(`//tr[contains(@class,'rec')][./td[contains(@class,'c-method')][starts-with(., 'tool_call')]]`)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the frame's JSON", `!document.getElementById('detail').hidden && document.getElementById('d-json').textContent.includes('"echo hello from the inspector"')`)
	shot(t, ctx, "detail")

	// Filters: a method, then text; then back.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-method"), "tool_")); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "rows of tool_ methods only", `(() => { const m = Array.from(document.querySelectorAll('#rows tr.rec td.c-method, #rows tr.run td.c-method')).map(td => td.textContent); return m.length > 0 && m.every(x => x.includes('tool_')); })()`)
	shot(t, ctx, "filtered")
	clearInput(t, ctx, "f-method")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-text"), "hello from the inspector")); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "rows with the text", `(() => { const r = document.querySelectorAll('#rows tr.rec'); return r.length > 0 && r.length < 12; })()`)
	clearInput(t, ctx, "f-text")

	// A command that breaks the schema is marked, and found by "invalid only".
	z.send(t, `{"type":"prompt","id":"bad"}`)
	z.until(t, `"id":"bad"`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#f-bad"))); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the invalid frame alone", `document.querySelectorAll('#rows tr.rec').length === 1 && document.querySelector('#rows tr.rec .badge.bad') !== null`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#rows tr.rec`))); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the schema's complaint", `document.getElementById('d-problem').textContent.includes('message')`)
	shot(t, ctx, "invalid")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#f-bad"))); err != nil {
		t.Fatal(err)
	}

	// The export: a file, the token and the key redacted.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#export-all"))); err != nil {
		t.Fatal(err)
	}
	exported := waitFile(t, downloads)
	data, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{rpcToken, apiKey} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the export holds %q", secret)
		}
	}
	if !strings.Contains(string(data), "[redacted]") || !strings.Contains(string(data), "hello from the inspector") {
		t.Errorf("the export redacted nothing, or lost the traffic: %.500s", data)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "export.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	// Imported again: the page shows the file, offline.
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#import"), []string{exported})); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the imported file", `document.getElementById('status').classList.contains('file') && document.querySelectorAll('#rows tr').length > 5`)
	shot(t, ctx, "imported")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#live"))); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "live again", `document.getElementById('status').classList.contains('live') && document.getElementById('live').hidden`)
}

// clearInput empties a filter's input as a person would, so the page
// hears of it.
func clearInput(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	eval[bool](t, ctx, `(() => { const e = document.getElementById('`+id+`'); e.value = ''; e.dispatchEvent(new Event('input')); return true; })()`)
}

// waitFile waits for a finished download in dir.
func waitFile(t *testing.T, dir string) string {
	t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(m) > 0 {
			if info, err := os.Stat(m[0]); err == nil && info.Size() > 0 {
				return m[0]
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no download")
	return ""
}
