package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"zot.dev/zot/internal/zotbin"
)

// benchConn is one client connection to zot daemon, over the socket or
// over WebSocket: a JSON-RPC message out, the next message in.
type benchConn interface {
	send(msg []byte) error
	next() ([]byte, error)
	close()
}

type lineConn struct {
	c net.Conn
	r *bufio.Reader
}

func (l *lineConn) send(msg []byte) error { _, err := l.c.Write(append(msg, '\n')); return err }
func (l *lineConn) next() ([]byte, error) {
	line, err := l.r.ReadBytes('\n')
	return line, err
}
func (l *lineConn) close() { _ = l.c.Close() }

type wsConn struct {
	c   *websocket.Conn
	buf []byte
}

func (w *wsConn) send(msg []byte) error {
	return w.c.Write(context.Background(), websocket.MessageText, msg)
}

// next reads the next message into a buffer kept from one to the next,
// as a client that streams reads.
func (w *wsConn) next() ([]byte, error) {
	_, r, err := w.c.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	w.buf = w.buf[:0]
	for {
		if len(w.buf) == cap(w.buf) {
			w.buf = append(w.buf, 0)[:len(w.buf)]
		}
		n, err := r.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+n]
		if err == io.EOF {
			return w.buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
func (w *wsConn) close() { _ = w.c.CloseNow() }

// benchDaemon is a zot daemon with a socket and a WebSocket listener.
type benchDaemon struct {
	d    *daemonProc
	sock string
	url  string
}

var benchListen = regexp.MustCompile(`listening on (ws://[^ \n]+/acp)`)

func startBenchDaemon(b *testing.B, script string, extra ...string) *benchDaemon {
	b.Helper()
	dir, err := os.MkdirTemp("", "zb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	// The session files in memory where there is a tmpfs: the doors are
	// measured, not the disk's syncs.
	home := filepath.Join(dir, "home")
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if h, err := os.MkdirTemp("/dev/shm", "zot-bench-"); err == nil {
			home = h
			b.Cleanup(func() { os.RemoveAll(h) })
		}
	}
	sock := filepath.Join(dir, "s")
	args := append([]string{"--script", script, "--listen", "ws://127.0.0.1:0", "--max-connections", "1000", "--max-sessions", "1000"}, extra...)
	cmd := exec.Command(zotBin, append([]string{"daemon", "--provider", "scripted"}, args...)...)
	cmd.Env = doorEnv(home, "ZOT_SOCKET="+sock, "ZOT_VALIDATE=0")
	d := &daemonProc{cmd: cmd, stderr: new(zotbin.Buffer), done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.done
	})
	deadline := time.Now().Add(hangGuard)
	for {
		if m := benchListen.FindStringSubmatch(d.stderr.String()); m != nil && strings.Contains(d.stderr.String(), "listening on "+sock) {
			return &benchDaemon{d: d, sock: sock, url: m[1]}
		}
		if time.Now().After(deadline) {
			b.Fatalf("the daemon did not listen:\n%s", d.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (bd *benchDaemon) dial(b *testing.B, ws bool) benchConn {
	b.Helper()
	var c benchConn
	if ws {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w, _, err := websocket.Dial(ctx, bd.url, &websocket.DialOptions{HTTPClient: &http.Client{}})
		if err != nil {
			b.Fatal(err)
		}
		w.SetReadLimit(-1)
		c = &wsConn{c: w}
	} else {
		u, err := net.Dial("unix", bd.sock)
		if err != nil {
			b.Fatal(err)
		}
		c = &lineConn{c: u, r: bufio.NewReaderSize(u, 64<<10)}
	}
	b.Cleanup(c.close)
	return c
}

// benchCall sends a request and reads to its answer, calling seen with
// every message before it.
func benchCall(c benchConn, id int, method, params string, seen func([]byte)) (json.RawMessage, error) {
	if err := c.send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)); err != nil {
		return nil, err
	}
	want := []byte(`"id":` + strconv.Itoa(id) + `,`)
	for {
		msg, err := c.next()
		if err != nil {
			return nil, err
		}
		if !strings.Contains(string(msg), `"method"`) && strings.Contains(string(msg), string(want)) {
			var r struct {
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(msg, &r)
			if r.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, r.Error)
			}
			return r.Result, nil
		}
		if seen != nil {
			seen(msg)
		}
	}
}

func benchSession(c benchConn, cwd string) (string, error) {
	if _, err := benchCall(c, 1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, nil); err != nil {
		return "", err
	}
	res, err := benchCall(c, 2, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd), nil)
	if err != nil {
		return "", err
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	err = json.Unmarshal(res, &r)
	return r.SessionID, err
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRemote measures zot daemon's WebSocket listener against its
// Unix socket, in one daemon: a short prompt's round trip (median of
// 200, taking turns), the agent_message_chunk rate of a 20,000-chunk
// answer, the memory of idle WebSocket connections (RSS growth over 200
// initialized connections), and 200 WebSocket clients streaming at once
// (every chunk counted, in order). Goals: round trip ws/unix ≤ 1.2,
// chunk rate ws/unix ≥ 0.8.
func BenchmarkRemote(b *testing.B) {
	work := b.TempDir()
	// Round trips and chunk rate.
	const chunks = 20000
	long := strings.Repeat("abcd", chunks)
	sc := script(b, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	bd := startBenchDaemon(b, sc)
	var rt [2][]float64 // unix, ws
	conns := [2]benchConn{bd.dial(b, false), bd.dial(b, true)}
	var ids [2]string
	for i, c := range conns {
		id, err := benchSession(c, work)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = id
	}
	const trips = 200
	for n := range trips + 10 {
		for i, c := range conns {
			start := time.Now()
			if _, err := benchCall(c, 100+n, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, ids[i]), nil); err != nil {
				b.Fatal(err)
			}
			if n >= 10 {
				rt[i] = append(rt[i], float64(time.Since(start).Microseconds())/1000)
			}
		}
	}
	unixRT, wsRT := median(rt[0]), median(rt[1])
	b.ReportMetric(unixRT, "unix-roundtrip-ms")
	b.ReportMetric(wsRT, "ws-roundtrip-ms")
	b.ReportMetric(wsRT/unixRT, "ws/unix-roundtrip")

	// Idle connections' memory.
	rss0, err := readRSSOf(bd.d.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	const idle = 200
	for range idle {
		c := bd.dial(b, true)
		if _, err := benchCall(c, 1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, nil); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	rss1, _ := readRSSOf(bd.d.cmd.Process.Pid)
	b.ReportMetric(float64(rss1-rss0)/1024/idle, "KiB/idle-ws-conn")
	_ = bd.d.cmd.Process.Kill()

	// The chunk rate, in a daemon of its own.
	sc = script(b, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": long, "chunk": 4}}}}})
	bd = startBenchDaemon(b, sc)
	var rate [2][]float64
	for round := range 3 {
		for i, ws := range []bool{false, true} {
			c := bd.dial(b, ws)
			id, err := benchSession(c, work)
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			start := time.Now()
			var first time.Time
			if _, err := benchCall(c, 10, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), func(msg []byte) {
				if strings.Contains(string(msg), `"agent_message_chunk"`) {
					if got == 0 {
						first = time.Now()
					}
					got++
				}
			}); err != nil {
				b.Fatal(err)
			}
			_ = start
			if got != chunks {
				b.Fatalf("round %d: %d chunks, want %d", round, got, chunks)
			}
			rate[i] = append(rate[i], float64(got)/time.Since(first).Seconds())
			c.close()
		}
	}
	unixRate, wsRate := median(rate[0]), median(rate[1])
	b.ReportMetric(unixRate, "unix-chunks/s")
	b.ReportMetric(wsRate, "ws-chunks/s")
	b.ReportMetric(wsRate/unixRate, "ws/unix-chunk-rate")
	_ = bd.d.cmd.Process.Kill()

	// 200 clients streaming at once.
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("%03d", i))
	}
	answer := strings.Join(words, " ")
	sc = script(b, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": answer, "chunk": 4}}}}})
	bd = startBenchDaemon(b, sc)
	const clients = 200
	cs := make([]benchConn, clients)
	sids := make([]string, clients)
	for i := range cs {
		cs[i] = bd.dial(b, true)
		if sids[i], err = benchSession(cs[i], work); err != nil {
			b.Fatal(err)
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		bad     int
		updates int
	)
	start := time.Now()
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var text strings.Builder
			n := 0
			_, err := benchCall(c, 10, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"count"}]}`, sids[i]), func(msg []byte) {
				var u struct {
					Params struct {
						Update struct {
							Kind    string `json:"sessionUpdate"`
							Content struct {
								Text string `json:"text"`
							} `json:"content"`
						} `json:"update"`
					} `json:"params"`
				}
				if json.Unmarshal(msg, &u) == nil && u.Params.Update.Kind == "agent_message_chunk" {
					text.WriteString(u.Params.Update.Content.Text)
					n++
				}
			})
			mu.Lock()
			defer mu.Unlock()
			updates += n
			if err != nil || text.String() != answer {
				bad++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if bad > 0 {
		b.Errorf("%d of %d clients got their answer's text lost, doubled or out of order", bad, clients)
	}
	b.ReportMetric(float64(clients-bad), "clients-whole-and-in-order")
	b.ReportMetric(float64(updates)/elapsed.Seconds(), "chunks/s-200-clients")
}

func readRSSOf(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n * 1024, err
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}
