package ndjson

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// text is a frame that encodes as a JSON string.
type text string

func (s text) AppendJSON(b []byte) []byte { return strconv.AppendQuote(b, string(s)) }

// msg is a frame that says who sent it and its number among that
// sender's frames.
type msg struct{ From, N int }

func (m msg) AppendJSON(b []byte) []byte {
	b = append(b, `{"From":`...)
	b = strconv.AppendInt(b, int64(m.From), 10)
	b = append(b, `,"N":`...)
	b = strconv.AppendInt(b, int64(m.N), 10)
	return append(b, '}')
}

// closeNow closes w and fails the test if that does not end in time.
func closeNow(t *testing.T, w *Writer) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w.Close(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("Close did not end")
	}
	return err
}

func TestWriterOrderConcurrentSenders(t *testing.T) {
	const senders, each = 16, 2000
	var out bytes.Buffer
	w := NewWriter(&out, WriterOptions{HighWater: 64})
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for n := range each {
				if n%10 == 0 {
					if err := w.Wait(context.Background()); err != nil {
						t.Errorf("wait: %v", err)
						return
					}
				}
				w.Send(msg{From: s, N: n})
			}
		})
	}
	wg.Wait()
	if err := closeNow(t, w); err != nil {
		t.Fatal(err)
	}
	next := make([]int, senders)
	sc := bufio.NewScanner(&out)
	lines := 0
	for sc.Scan() {
		var m msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %q: %v", lines, sc.Bytes(), err)
		}
		if m.N != next[m.From] {
			t.Fatalf("line %d: sender %d's frame %d, want %d", lines, m.From, m.N, next[m.From])
		}
		next[m.From]++
		lines++
	}
	if lines != senders*each {
		t.Fatalf("got %d lines, want %d", lines, senders*each)
	}
}

// gate is an output whose writes block until released; entered gets a
// token as each write starts.
type gate struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	writes  int
	buf     bytes.Buffer
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (g *gate) Write(p []byte) (int, error) {
	g.entered <- struct{}{}
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes++
	return g.buf.Write(p)
}

func (g *gate) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

// TestWriterBurstIsOneWrite sends a burst while a write is in progress:
// the whole burst goes out in one write.
func TestWriterBurstIsOneWrite(t *testing.T) {
	g := newGate()
	w := NewWriter(g, WriterOptions{})
	w.Send(text("first"))
	<-g.entered
	var want strings.Builder
	want.WriteString("\"first\"\n")
	for i := range 100 {
		w.Send(text(strconv.Itoa(i)))
		fmt.Fprintf(&want, "%q\n", strconv.Itoa(i))
	}
	close(g.release)
	if err := closeNow(t, w); err != nil {
		t.Fatal(err)
	}
	if g.writes != 2 {
		t.Errorf("%d writes, want 2", g.writes)
	}
	if got := g.String(); got != want.String() {
		t.Errorf("got %q\nwant %q", got, want.String())
	}
}

// TestWriterLoneFrameIsFlushed checks that a frame is on the output
// without Close or SendSync.
func TestWriterLoneFrameIsFlushed(t *testing.T) {
	pr, pw := io.Pipe()
	w := NewWriter(pw, WriterOptions{})
	w.Send(text("hello"))
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || line != "\"hello\"\n" {
		t.Fatalf("got %q, %v", line, err)
	}
	if err := closeNow(t, w); err != nil {
		t.Fatal(err)
	}
}

// stall starts a writer on a pipe nobody reads, sends one frame and
// returns once the writer's goroutine is blocked writing it. Call it in
// a synctest bubble.
func stall(t *testing.T, opts WriterOptions) (*Writer, *io.PipeReader, *io.PipeWriter) {
	t.Helper()
	pr, pw := io.Pipe()
	w := NewWriter(pw, opts)
	w.Send(text("stuck"))
	synctest.Wait()
	if n := w.waiting(); n != 0 {
		t.Fatalf("%d frames waiting, want the first taken", n)
	}
	return w, pr, pw
}

func TestWriterWaitHighWater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, pr, _ := stall(t, WriterOptions{HighWater: 4})
		for i := range 3 {
			if err := w.Wait(t.Context()); err != nil {
				t.Fatalf("Wait below the mark: %v", err)
			}
			w.Send(text(strconv.Itoa(i)))
		}
		if err := w.Wait(t.Context()); err != nil {
			t.Fatalf("Wait below the mark: %v", err)
		}
		w.Send(text("3"))

		// At the mark: Wait blocks until a reader drains the pipe.
		released := make(chan error, 1)
		go func() { released <- w.Wait(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-released:
			t.Fatalf("Wait at the mark returned %v", err)
		default:
		}
		// ... or until its ctx ends.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if err := w.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait with a deadline: %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("Wait returned after %v", d)
		}

		br := bufio.NewReader(pr)
		if line, err := br.ReadString('\n'); err != nil || line != "\"stuck\"\n" {
			t.Fatalf("read %q, %v", line, err)
		}
		synctest.Wait()
		select {
		case err := <-released:
			if err != nil {
				t.Fatalf("Wait released with %v", err)
			}
		default:
			t.Fatal("Wait not released by the reader")
		}
		go io.Copy(io.Discard, br)
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		pr.Close()
	})
}

func TestWriterWaitReleasedByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, pr, _ := stall(t, WriterOptions{HighWater: 1})
		w.Send(text("queued"))
		released := make(chan error, 1)
		go func() { released <- w.Wait(t.Context()) }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := w.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close: %v", err)
		}
		if err := <-released; !errors.Is(err, ErrClosed) {
			t.Fatalf("Wait: %v, want ErrClosed", err)
		}
		pr.Close()
		<-w.Done()
	})
}

// TestWriterStalledOutput checks that a reader that stopped reading
// blocks neither Send nor, beyond its ctx, Close.
func TestWriterStalledOutput(t *testing.T) {
	for _, closeOnCancel := range []bool{false, true} {
		t.Run(fmt.Sprint("CloseOnCancel=", closeOnCancel), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, pr, _ := stall(t, WriterOptions{HighWater: 8, CloseOnCancel: closeOnCancel})
				for i := range 10000 { // far past the high-water mark
					w.Send(text(strconv.Itoa(i)))
				}
				var mu sync.Mutex // a caller's lock held across Send
				mu.Lock()
				w.Send(text("under a lock"))
				mu.Unlock()
				sync := make(chan error, 1)
				go func() { sync <- w.SendSync(t.Context(), text("sync")) }()
				synctest.Wait()

				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				defer cancel()
				start := time.Now()
				err := w.Close(ctx)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Close: %v", err)
				}
				if d := time.Since(start); d != 5*time.Second {
					t.Fatalf("Close returned after %v", d)
				}
				synctest.Wait()
				if closeOnCancel {
					// Closing the pipe ended the stuck write.
					select {
					case <-w.Done():
					default:
						t.Fatal("the goroutine is still running")
					}
					if err := w.Err(); !errors.Is(err, io.ErrClosedPipe) {
						t.Fatalf("Err: %v", err)
					}
				} else {
					select {
					case <-w.Done():
						t.Fatal("the goroutine ended with its write stuck")
					default:
					}
					ctx, cancel := context.WithTimeout(t.Context(), time.Second)
					defer cancel()
					if err := w.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("second Close while stuck: %v", err)
					}
					pr.CloseWithError(nil) // the reader goes away: the write fails
					<-w.Done()
				}
				if err := <-sync; err == nil {
					t.Fatal("SendSync of a dropped frame returned nil")
				}
				// Once the goroutine has ended, Close returns at once.
				if err := w.Close(t.Context()); !errors.Is(err, io.ErrClosedPipe) {
					t.Fatalf("Close after the end: %v, want the write error", err)
				}
			})
		})
	}
}

// TestWriterCloseWritesQueue checks that Close writes everything queued,
// and drops what is sent after it.
func TestWriterCloseWritesQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		w := NewWriter(g, WriterOptions{})
		w.Send(text("a"))
		<-g.entered
		w.Send(text("b"))
		w.Send(text("c"))
		closed := make(chan error, 1)
		go func() { closed <- w.Close(context.Background()) }()
		synctest.Wait() // Close waits for the stuck write
		w.Send(text("late"))
		if err := w.SendSync(t.Context(), text("late")); !errors.Is(err, ErrClosed) {
			t.Fatalf("SendSync after Close: %v", err)
		}
		if err := w.Wait(t.Context()); !errors.Is(err, ErrClosed) {
			t.Fatalf("Wait after Close: %v", err)
		}
		close(g.release)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if got, want := g.String(), "\"a\"\n\"b\"\n\"c\"\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if err := w.Close(context.Background()); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

func TestWriterSendSync(t *testing.T) {
	g := newGate()
	close(g.release)
	w := NewWriter(g, WriterOptions{})
	defer closeNow(t, w)
	w.Send(text("before"))
	if err := w.SendSync(context.Background(), text("sync")); err != nil {
		t.Fatal(err)
	}
	if got, want := g.String(), "\"before\"\n\"sync\"\n"; got != want {
		t.Fatalf("after SendSync the output is %q, want %q", got, want)
	}
	w.Send(text("after"))
	if err := w.SendSync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := g.String(), "\"before\"\n\"sync\"\n\"after\"\n"; got != want {
		t.Fatalf("after a barrier the output is %q, want %q", got, want)
	}
}

func TestWriterSendSyncCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, pr, pw := stall(t, WriterOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.SendSync(ctx, text("sync")) }()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("SendSync: %v", err)
		}
		// The frame is still written once the reader reads.
		go func() {
			if err := w.Close(t.Context()); err != nil {
				t.Errorf("Close: %v", err)
			}
			pw.Close() // the writer's owner ends the output
		}()
		out, _ := io.ReadAll(pr)
		if got, want := string(out), "\"stuck\"\n\"sync\"\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// failing accepts budget bytes, then fails every write.
type failing struct {
	budget int
	writes int
	buf    bytes.Buffer
}

var errDisk = errors.New("disk full")

func (f *failing) Write(p []byte) (int, error) {
	f.writes++
	if len(p) > f.budget {
		n := f.budget
		f.buf.Write(p[:n])
		f.budget = 0
		return n, errDisk
	}
	f.budget -= len(p)
	return f.buf.Write(p)
}

func TestWriterWriteError(t *testing.T) {
	out := &failing{budget: 10}
	w := NewWriter(out, WriterOptions{})
	if err := w.SendSync(context.Background(), text("ok")); err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if err := w.SendSync(context.Background(), text("too long for the budget")); !errors.Is(err, errDisk) {
		t.Fatalf("SendSync: %v, want the write error", err)
	}
	if err := w.Err(); !errors.Is(err, errDisk) {
		t.Fatalf("Err: %v", err)
	}
	if err := w.Wait(context.Background()); !errors.Is(err, errDisk) {
		t.Fatalf("Wait: %v", err)
	}
	if err := w.SendSync(context.Background(), text("later")); !errors.Is(err, errDisk) {
		t.Fatalf("SendSync after the error: %v", err)
	}
	w.Send(text("dropped"))
	if err := closeNow(t, w); !errors.Is(err, errDisk) {
		t.Fatalf("Close: %v", err)
	}
	if out.writes != 2 {
		t.Fatalf("%d writes, want 2 (none after the error)", out.writes)
	}
}

// TestWriterWriteErrorQueued checks that frames queued when a write
// fails are dropped and their SendSync callers told.
func TestWriterWriteErrorQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, pr, _ := stall(t, WriterOptions{})
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if err := w.SendSync(t.Context(), text("queued")); !errors.Is(err, io.ErrClosedPipe) {
					t.Errorf("SendSync: %v", err)
				}
			})
		}
		synctest.Wait()
		pr.Close()
		wg.Wait()
		if err := w.Close(t.Context()); !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("Close: %v", err)
		}
	})
}

func TestWriterCheck(t *testing.T) {
	var out, log bytes.Buffer
	var seen []string
	w := NewWriter(&out, WriterOptions{
		Log: &log,
		Check: func(frame []byte) error {
			seen = append(seen, string(frame))
			if bytes.Contains(frame, []byte("bad")) {
				return errors.New("no bad words")
			}
			return nil
		},
	})
	w.Send(text("good"))
	w.Send(text("bad"))
	if err := closeNow(t, w); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "\"good\"\n\"bad\"\n"; got != want {
		t.Errorf("output %q, want %q (a failed frame is still written)", got, want)
	}
	if want := []string{`"good"`, `"bad"`}; !equal(seen, want) {
		t.Errorf("Check saw %q, want %q", seen, want)
	}
	if got := log.String(); !strings.Contains(got, "no bad words") || !strings.Contains(got, `"bad"`) || strings.Contains(got, "good") {
		t.Errorf("log %q", got)
	}
}

// TestWriterScratch checks that the encode buffer is reused, and dropped
// after a frame bigger than 1 MiB.
func TestWriterScratch(t *testing.T) {
	w := NewWriter(io.Discard, WriterOptions{})
	defer closeNow(t, w)
	if err := w.SendSync(context.Background(), text("small")); err != nil {
		t.Fatal(err)
	}
	if cap(w.scratch) == 0 {
		t.Fatal("the buffer was not kept")
	}
	if err := w.SendSync(context.Background(), text(strings.Repeat("x", 2<<20))); err != nil {
		t.Fatal(err)
	}
	if cap(w.scratch) > maxKeep {
		t.Fatalf("the buffer keeps %d bytes", cap(w.scratch))
	}
}

func TestWriterNilSendIsDropped(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, WriterOptions{})
	w.Send(nil)
	w.Send(text("x"))
	if err := closeNow(t, w); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "\"x\"\n" {
		t.Fatalf("got %q", got)
	}
}

// countWriter counts writes and bytes.
type countWriter struct{ writes, bytes int }

func (c *countWriter) Write(p []byte) (int, error) {
	c.writes++
	c.bytes += len(p)
	return len(p), nil
}

func BenchmarkWriter(b *testing.B) {
	frame := msg{From: 12, N: 345678}
	b.Run("serial", func(b *testing.B) {
		out := &countWriter{}
		w := NewWriter(out, WriterOptions{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%256 == 0 {
				_ = w.Wait(context.Background())
			}
			w.Send(frame)
		}
		if err := w.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(out.writes)/float64(b.N), "writes/frame")
	})
	b.Run("parallel", func(b *testing.B) {
		out := &countWriter{}
		w := NewWriter(out, WriterOptions{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if i%256 == 0 {
					_ = w.Wait(context.Background())
				}
				w.Send(frame)
			}
		})
		if err := w.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(out.writes)/float64(b.N), "writes/frame")
	})
}

// TestWriterCloseGaveUp checks that once a Close gave up, what was
// queued is dropped, and a later Close says so even though no write
// failed.
func TestWriterCloseGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		w := NewWriter(g, WriterOptions{CloseOnCancel: true}) // not a Closer: nothing to close
		w.Send(text("a"))
		<-g.entered
		w.Send(text("b"))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := w.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close: %v", err)
		}
		close(g.release)
		<-w.Done()
		if err := w.Close(t.Context()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close after giving up: %v", err)
		}
		if err := w.Err(); err != nil {
			t.Fatalf("Err: %v, want no write error", err)
		}
		if got, want := g.String(), "\"a\"\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// hinted is a frame that says how long its encoding is, rightly or not.
type hinted struct {
	s    string
	hint int
}

func (h hinted) AppendJSON(b []byte) []byte { return strconv.AppendQuote(b, h.s) }
func (h hinted) SizeHint() int              { return h.hint }

// TestWriterSizeHint: a frame's size hint makes the buffer it is encoded
// into; a hint too small, zero or negative only loses the head start, and
// every frame is written whole, in order.
func TestWriterSizeHint(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	frames := []hinted{{long, len(long) + 2}, {long, 10}, {"short", 0}, {long, -1}, {"a", 1 << 20}}
	var out bytes.Buffer
	w := NewWriter(&out, WriterOptions{})
	for _, f := range frames {
		w.Send(f)
	}
	if err := closeNow(t, w); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, f := range frames {
		want.WriteString(strconv.Quote(f.s) + "\n")
	}
	if out.String() != want.String() {
		t.Fatalf("wrote %d bytes, want %d", out.Len(), want.Len())
	}
}
