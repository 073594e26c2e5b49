// Package boundlog bounds what zot writes about its children (extensions,
// MCP servers) and its connections, so that no child and no client can
// fill the disk or the operator's terminal through zot, and reading a
// child that floods costs little.
//
// Three pieces, each for one bound:
//
//   - [Limiter]: at most so many lines per source in a window; the lines
//     over it are dropped and counted, and the count is told once the
//     window is over ("N lines dropped").
//
//   - [File]: a log file of bounded size: when a write would pass the
//     cap, the file becomes its one backup (<name>.1, replacing the last)
//     and a fresh file is started, so a child's log never takes more than
//     twice the cap.
//
//   - [Bucket]: a rate (bytes or lines per second) a reader or writer is
//     held to by waiting: a child that floods its stderr, or its stdout
//     with lines zot drops, is slowed to that rate (its writes block on a
//     full pipe) instead of holding a core.
//
//     lim := boundlog.NewLimiter(20, 10*time.Second, func(n int, w time.Duration) {
//     fmt.Fprintf(os.Stderr, "zot: extension x: %d more lines dropped in %s\n", n, w)
//     })
//     defer lim.Close()
//     if lim.Allow() {
//     fmt.Fprintf(os.Stderr, "zot: extension x: skipped a frame\n")
//     }
package boundlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Defaults zot's children and connections are bounded by.
const (
	// Lines and Window: at most Lines lines about one source reach a log
	// or zot's stderr in each Window.
	Lines  = 20
	Window = 10 * time.Second
	// FileCap is the size at which a child's log file is rotated: the
	// file and its backup take at most twice this.
	FileCap = 8 << 20
	// StderrRate is the rate in bytes per second, with a burst of as
	// much, a child's stderr is read at: a child that writes faster waits.
	StderrRate = 1 << 20
	// DroppedRate is the rate in lines per second, with a burst of as
	// much, at which zot reads lines of a child that it drops (garbage,
	// notices over their limit): a child that floods waits.
	DroppedRate = 2000
)

// Limiter lets at most max lines through in each window and counts the
// others; once a window in which lines were dropped is over, summary is
// called with their number (from a timer's goroutine, or from the caller
// of Allow or Close). Its methods are safe for concurrent use.
type Limiter struct {
	max     int
	window  time.Duration
	summary func(dropped int, window time.Duration)

	mu      sync.Mutex
	start   time.Time // the current window's start
	n       int       // lines let through in it
	dropped int       // lines dropped in it
	timer   *time.Timer
	closed  bool
}

// NewLimiter returns a Limiter of max lines per window; summary may be
// nil.
func NewLimiter(max int, window time.Duration, summary func(dropped int, window time.Duration)) *Limiter {
	if max <= 0 {
		max = Lines
	}
	if window <= 0 {
		window = Window
	}
	return &Limiter{max: max, window: window, summary: summary}
}

// Allow reports whether one more line may be written now, and counts it
// either way. After Close it reports false.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	now := time.Now()
	var told int
	if now.Sub(l.start) >= l.window {
		told = l.rollLocked(now)
	}
	ok := l.n < l.max
	if ok {
		l.n++
	} else {
		if l.dropped == 0 {
			// Tell the count when the window is over, even if no line
			// comes after it.
			wait := l.window - now.Sub(l.start)
			if l.timer == nil {
				l.timer = time.AfterFunc(wait, l.tick)
			} else {
				l.timer.Reset(wait)
			}
		}
		l.dropped++
	}
	l.mu.Unlock()
	l.tell(told)
	return ok
}

// Dropped returns how many lines were dropped in the current window and
// not told yet.
func (l *Limiter) Dropped() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// rollLocked starts a new window at now and returns the drops of the last
// one, to be told.
func (l *Limiter) rollLocked(now time.Time) int {
	d := l.dropped
	l.start, l.n, l.dropped = now, 0, 0
	return d
}

// tick runs when a window with drops is over.
func (l *Limiter) tick() {
	l.mu.Lock()
	var told int
	if !l.closed && time.Since(l.start) >= l.window {
		told = l.rollLocked(time.Now())
	}
	l.mu.Unlock()
	l.tell(told)
}

func (l *Limiter) tell(n int) {
	if n > 0 && l.summary != nil {
		l.summary(n, l.window)
	}
}

// Close tells the drops not told yet and lets no line through any more.
// It may be called more than once.
func (l *Limiter) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	told := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	l.tell(told)
}

// Bucket is a token bucket: rate tokens a second, up to burst saved. It
// never refuses: Take runs into debt and says how long to wait for it to
// be paid. Its methods are safe for concurrent use.
type Bucket struct {
	rate, burst float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewBucket returns a full Bucket.
func NewBucket(rate, burst float64) *Bucket {
	return &Bucket{rate: rate, burst: burst, tokens: burst}
}

// Take takes n tokens and returns how long the caller should wait before
// going on, zero when it need not.
func (b *Bucket) Take(n float64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// Pace takes n tokens and sleeps the wait Take gives, when it is at least
// a millisecond (shorter waits are left to add up).
func (b *Bucket) Pace(n float64) {
	if d := b.Take(n); d >= time.Millisecond {
		time.Sleep(d)
	}
}

// Paced returns a writer that passes everything to w, waiting first so
// that the bytes go at most at rate bytes a second (with a burst of as
// much): given as a child's stderr, it slows a child that floods its
// stderr instead of taking a core to copy it.
func Paced(w io.Writer, rate int) io.Writer {
	return &paced{w: w, b: NewBucket(float64(rate), float64(rate))}
}

type paced struct {
	w io.Writer
	b *Bucket
}

func (p *paced) Write(b []byte) (int, error) {
	p.b.Pace(float64(len(b)))
	return p.w.Write(b)
}

// File is an append-only log file of bounded size: a write that would
// take it past its cap first renames it to its backup (<path>.1, the
// last backup replaced) and starts a fresh file. Several Files, in one
// process or more, may share a path: each write goes by the file's own
// size, and a file rotated by another is followed to the fresh one. Its methods are safe for
// concurrent use. A write that fails (the disk is full) drops what it
// was given and says so; the next write tries again.
type File struct {
	path string
	cap  int64

	mu     sync.Mutex
	f      *os.File // nil after a rotation that failed: the next write tries again
	size   int64
	closed bool
}

// OpenFile opens (or creates, mode 0600) the log file at path, to be kept
// under capBytes (FileCap when 0 or less).
func OpenFile(path string, capBytes int64) (*File, error) {
	if capBytes <= 0 {
		capBytes = FileCap
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{path: path, cap: capBytes, f: f, size: st.Size()}, nil
}

// Path returns the file's path.
func (l *File) Path() string { return l.path }

// Write appends p, rotating first when the file would pass its cap. A
// single write larger than the cap is cut to it.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, os.ErrClosed
	}
	n := len(p)
	if int64(n) > l.cap {
		p = p[:l.cap]
	}
	if l.f != nil {
		l.syncLocked()
	}
	if l.f == nil || (l.size > 0 && l.size+int64(len(p)) > l.cap) {
		if err := l.rotateLocked(); err != nil {
			return 0, err
		}
	}
	w, err := l.f.Write(p)
	l.size += int64(w)
	if err != nil {
		return w, fmt.Errorf("log %s: %w", l.path, err)
	}
	return n, nil
}

// syncLocked takes in what others did to the file: several Files (the
// sessions of one daemon running one extension) may append to one path.
// The size is the file's, not what this one wrote; a file another File
// has rotated away (the path names another file now) is left for the
// fresh one at the path.
func (l *File) syncLocked() {
	st, err := l.f.Stat()
	if err != nil {
		return
	}
	l.size = st.Size()
	if cur, err := os.Stat(l.path); err == nil && os.SameFile(st, cur) {
		return
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	_ = l.f.Close()
	l.f = f
	if st, err := f.Stat(); err == nil {
		l.size = st.Size()
	}
}

// rotateLocked makes the file its backup and starts a fresh one.
func (l *File) rotateLocked() error {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil && !errors.Is(err, os.ErrNotExist) {
		// Without a backup, the file starts again from nothing.
		_ = os.Remove(l.path)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log %s: %w", l.path, err)
	}
	l.f, l.size = f, 0
	return nil
}

// Close closes the file; later writes fail. It may be called more than
// once.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
