package doortest

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"
)

// hopsDir turns TestPromptHops on: it writes there, for each door, the
// package boundaries one prompt crosses (docs/architecture.md, "The
// hops of one prompt, counted").
var hopsDir = flag.String("hops", "", "count the hops of one prompt through each door and write them to this directory")

// hopRuns is how many times TestPromptHops measures each door.
const hopRuns = 5

// recorderHooks start and stop the recording of every call between two
// zot packages; set only in the instrumented copy of the tree that
// bench/cmd/zot-hops makes.
type recorderHooks struct {
	start func()
	stop  func() []string
}

// callRecorder is set by bench/cmd/zot-hops's copy of the tree.
var callRecorder recorderHooks

// hopCounts are the most hops a door's prompt may cross, as last
// measured (docs/architecture.md, "The hops of one prompt, counted"):
// on the stacks and, with the recorder, every call, in and out. Before
// the engine owned every door's features (1cef375) they were, every
// call in and out: zot rpc 73 and 11 (76 and 12 with an extension), ACP
// 56 and 12 (59 and 13); on the stacks 9 and 9 for zot rpc, 12 and 9 for
// ACP.
type hopCounts struct {
	in, out, inCalls, outCalls int
}

// hopWindows are what one run measures: by window (in, out), the hops on
// the stacks and, with the recorder, every call.
type hopWindows struct {
	in, out, inCalls, outCalls []string
}

// TestPromptHops counts the hops of one prompt through each door: the
// calls from a function of one zot package to a function of another on
// the stacks that carry it, stitched across goroutines by the runtime's
// execution tracer (a goroutine's creation and every wake-up record the
// stack of the goroutine that caused them, so a queue's hand-off shows
// who put the item in it).
//
// In: from the prompt's bytes reaching the door to the model request
// reaching the provider's server, and what the door does meanwhile (the
// server answers nothing until the door is quiet). Out: from the server
// writing one text delta to the client reading the frame that carries
// it, until the door is quiet. Each window is
// traced alone, after the door went quiet; the frames of every zot
// package but the transport (duplex, standing for the pipe or socket) and
// this package are kept, in order, and each adjacent pair of frames of
// two packages is one hop (counted once however often it recurs); the
// stacks of goroutines already waiting when a window opens are left out.
// A hop
// counts when every one of hopRuns runs shows it.
//
// It runs only with -hops DIR (a measurement, not a check): go test
// ./internal/doortest -run TestPromptHops -hops /tmp/hops
func TestPromptHops(t *testing.T) {
	if *hopsDir == "" {
		t.Skip("a measurement: run with -hops DIR")
	}
	if err := os.MkdirAll(*hopsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name  string
		ext   bool // the session runs the test extension
		start func(*testing.T, string, doorOptions) *door
		open  []string // frames that open a session, each answered before the next ("" waits for the extension's command to be listed)
		frame string   // the prompt
		reply string   // a pattern of the frame that ends the prompt
		most  hopCounts
	}{
		{"rpc", false, startRPC, []string{`{"type":"hello","id":"h"}`}, `{"type":"prompt","id":"p1","message":"hi"}`, `"type":"done"`,
			hopCounts{in: 7, out: 9, inCalls: 71, outCalls: 10}},
		{"rpc-ext", true, startRPC, []string{`{"type":"hello","id":"h"}`, `{"type":"get_commands","id":"c"}`}, `{"type":"prompt","id":"p1","message":"hi"}`, `"type":"done"`,
			hopCounts{in: 7, out: 9, inCalls: 74, outCalls: 11}},
		{"acp", false, startACP, []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"$DIR","mcpServers":[]}}`,
		}, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"$SID","prompt":[{"type":"text","text":"hi"}]}}`, `"stopReason"`,
			hopCounts{in: 11, out: 9, inCalls: 54, outCalls: 10}},
		{"acp-ext", true, startACP, []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"$DIR","mcpServers":[]}}`,
			"",
		}, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"$SID","prompt":[{"type":"text","text":"hi"}]}}`, `"stopReason"`,
			hopCounts{in: 11, out: 9, inCalls: 57, outCalls: 11}},
	} {
		t.Run(d.name, func(t *testing.T) {
			// A side call shows on a stack only when something blocks or
			// wakes inside it, which depends on timing: what every run
			// shows is the chain that carries the prompt. Likewise the
			// calls: those every run makes.
			var w hopWindows
			for i := range hopRuns {
				r := measureHops(t, d.start, d.ext, d.open, d.frame, d.reply)
				if i == 0 {
					w = r
					continue
				}
				w.in = intersect(w.in, r.in)
				w.out = intersect(w.out, r.out)
				w.inCalls = intersect(w.inCalls, r.inCalls)
				w.outCalls = intersect(w.outCalls, r.outCalls)
			}
			var b strings.Builder
			for _, sec := range []struct {
				name string
				hops []string
			}{{"in, every call", w.inCalls}, {"out, every call", w.outCalls}, {"in, on the stacks", w.in}, {"out, on the stacks", w.out}} {
				if sec.hops == nil {
					continue // no recorder: run through bench/cmd/zot-hops
				}
				fmt.Fprintf(&b, "## %s: %d hops across %d packages\n", sec.name, len(sec.hops), len(packagesOf(sec.hops)))
				fmt.Fprintf(&b, "packages: %s\n", strings.Join(packagesOf(sec.hops), ", "))
				for _, h := range sec.hops {
					fmt.Fprintf(&b, "- %s\n", h)
				}
			}
			in, out := w.in, w.out
			path := filepath.Join(*hopsDir, d.name+".md")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: on the stacks in %d, out %d; every call in %d, out %d (%s)", d.name, len(in), len(out), len(w.inCalls), len(w.outCalls), path)
			// No more hops than measured last (docs/architecture.md's
			// table): a change that adds one says so here and there.
			for _, c := range []struct {
				what string
				hops []string
				most int
			}{{"in, on the stacks", w.in, d.most.in}, {"out, on the stacks", w.out, d.most.out}, {"in, every call", w.inCalls, d.most.inCalls}, {"out, every call", w.outCalls, d.most.outCalls}} {
				if c.hops != nil && len(c.hops) > c.most {
					t.Errorf("%s: %d hops, more than the %d measured before (see %s)", c.what, len(c.hops), c.most, path)
				}
			}
			// The chains reach from the door to the provider and back.
			for _, want := range []string{"internal/engine", "internal/provider/"} {
				if !slices.ContainsFunc(in, func(h string) bool { return strings.Contains(h, want) }) {
					t.Errorf("in: no hop reaches %s", want)
				}
			}
		})
	}
}

// intersect keeps the hops of a that b has too.
func intersect(a, b []string) []string {
	if a == nil {
		return nil
	}
	return slices.DeleteFunc(a, func(h string) bool { return !slices.Contains(b, h) })
}

// measureHops runs one prompt through a door whose anthropic provider is
// a loopback server, tracing the in and out windows (and recording their
// calls, with the recorder), and returns the hops of each.
func measureHops(t *testing.T, start func(*testing.T, string, doorOptions) *door, ext bool, open []string, prompt, reply string) hopWindows {
	// Anthropic's Messages stream, from the anthropic provider's fixture
	// (text.sse): before the first delta, the delta, the rest.
	sse, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.Index(sse, []byte("event: content_block_delta"))
	second := first + bytes.Index(sse[first+1:], []byte("event: ")) + 1
	parts := [][]byte{sse[:first], sse[first:second], sse[second:]}

	arrived := make(chan struct{})
	send := make(chan int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range parts {
			<-send
			w.Write(parts[i])
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	d := start(t, dir, doorOptions{baseURL: srv.URL, permission: "allow", ext: ext})
	norm := newNormalizer(dir)
	quiet := func() { time.Sleep(300 * time.Millisecond) }
	readUntil := func(pattern string) {
		t.Helper()
		for {
			f := d.conn.next(0)
			if f == nil {
				t.Fatalf("the output ended before %s", pattern)
			}
			norm.value(f) // learns the session id
			if bytes.Contains(f, []byte(pattern)) {
				return
			}
		}
	}
	for _, f := range open {
		if f == "" {
			// The extension is ready: the prompt does not wait for it.
			readUntil(`"name":"greet"`)
			continue
		}
		d.conn.send([]byte(norm.expand(f, nil)))
		readUntil(`"id":`)
	}
	quiet()

	var w hopWindows
	inTrace := filepath.Join(t.TempDir(), "in.trace")
	stop := startTrace(t, inTrace)
	record(func() {
		d.conn.send([]byte(norm.expand(prompt, nil)))
		<-arrived
		quiet() // what the door sends meanwhile (a title, the prompt's first events)
	}, &w.inCalls)
	stop()

	send <- 0 // up to the first delta
	quiet()
	outTrace := filepath.Join(t.TempDir(), "out.trace")
	stop = startTrace(t, outTrace)
	record(func() {
		send <- 1
		readUntil(`Hello`)
		quiet()
	}, &w.outCalls)
	stop()
	send <- 2
	readUntil(reply)
	w.in, w.out = hopsOf(t, inTrace), hopsOf(t, outTrace)
	return w
}

// record runs window with the recorder on, when there is one, and sets
// *calls to the calls recorded, sorted.
func record(window func(), calls *[]string) {
	if callRecorder.start == nil {
		window()
		return
	}
	callRecorder.start()
	window()
	*calls = callRecorder.stop()
	if *calls == nil {
		*calls = []string{}
	}
	slices.Sort(*calls)
}

// startTrace starts the execution tracer writing to path and returns
// what stops it.
func startTrace(t *testing.T, path string) func() {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}
}

// hopsOf reads a trace's stacks (with go tool trace) and returns its
// hops, sorted: "caller → callee" for each adjacent pair of kept frames
// of two packages.
func hopsOf(t *testing.T, path string) []string {
	cmd := exec.Command("go", "tool", "trace", "-d=parsed", path)
	outp, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool trace: %v", err)
	}
	seen := map[string]bool{}
	var stack []string // innermost first
	flush := func() {
		var kept []string
		for i := len(stack) - 1; i >= 0; i-- {
			if keepFrame(stack[i]) {
				kept = append(kept, stack[i])
			}
		}
		for i := 1; i < len(kept); i++ {
			if pkgOf(kept[i-1]) != pkgOf(kept[i]) {
				seen[short(kept[i-1])+" → "+short(kept[i])] = true
			}
		}
		stack = stack[:0]
	}
	sc := bufio.NewScanner(bytes.NewReader(outp))
	sc.Buffer(nil, 1<<20)
	// The goroutines' states when tracing starts (transitions from
	// Undetermined) are what was under way before the window: left out.
	inStack, before := false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasSuffix(line, "Stack="):
			flush()
			inStack = true
		case inStack && strings.HasPrefix(line, "\t\t"):
		case inStack && strings.HasPrefix(line, "\t"):
			if before {
				continue
			}
			fn, _, _ := strings.Cut(strings.TrimPrefix(line, "\t"), " @ ")
			stack = append(stack, fn)
		default:
			flush()
			inStack = false
			if strings.HasPrefix(line, "M=") {
				before = strings.Contains(line, " Undetermined->")
			}
		}
	}
	flush()
	hops := make([]string, 0, len(seen))
	for h := range seen {
		hops = append(hops, h)
	}
	slices.Sort(hops)
	return hops
}

const module = "zot.dev/zot/"

// keepFrame says whether a frame is zot's own, outside the transport
// and the tests.
func keepFrame(fn string) bool {
	if !strings.HasPrefix(fn, module) {
		return false
	}
	p := pkgOf(fn)
	return p != "internal/duplex" && p != "internal/doortest"
}

// pkgOf is the package of a frame's function, relative to the module.
func pkgOf(fn string) string {
	fn = strings.TrimPrefix(fn, module)
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// short is a frame's function without the module.
func short(fn string) string { return strings.TrimPrefix(fn, module) }

// packagesOf lists the packages the hops cross, sorted.
func packagesOf(hops []string) []string {
	set := map[string]bool{}
	for _, h := range hops {
		a, b, _ := strings.Cut(h, " → ")
		set[pkgOf(module+a)] = true
		set[pkgOf(module+b)] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
