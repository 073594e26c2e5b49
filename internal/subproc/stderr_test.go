package subproc

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestStderrLongerThanItsBuffer: a child's stderr reaches a writer that
// is not a file whole and in order, however much longer it is than the
// buffer it is copied through; stdout and stderr given as one writer
// still share it (the bash tool's case).
func TestStderrLongerThanItsBuffer(t *testing.T) {
	var mu sync.Mutex
	var stderr strings.Builder
	p := sh(t, `i=0; while [ $i -lt 3000 ]; do echo "line $i of the log" >&2; i=$((i+1)); done`, Command{Stderr: lockedWriter{&mu, &stderr}})
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 3000 {
		want.WriteString("line " + strconv.Itoa(i) + " of the log\n")
	}
	mu.Lock()
	got := stderr.String()
	mu.Unlock()
	if got != want.String() {
		t.Errorf("stderr: %d bytes, want %d (%d KiB past the copy buffer)", len(got), want.Len(), (want.Len()-copyBufSize)>>10)
	}

	var both bytes.Buffer
	one := &onlyWrite{w: &both}
	p = sh(t, "echo out; echo err >&2; echo out2", Command{Stdout: one, Stderr: one})
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if both.String() != "out\nerr\nout2\n" {
		t.Errorf("one writer for both got %q", both.String())
	}
}

// TestSmallReads: the writers os/exec copies to through io.Copy are given
// a ReadFrom of their own; files and io.ReaderFroms are left as they are.
func TestSmallReads(t *testing.T) {
	var b bytes.Buffer
	if _, ok := smallReads(lockedWriter{new(sync.Mutex), &b}).(*smallCopy); !ok {
		t.Error("a plain writer was not given a small buffer")
	}
	for _, w := range []io.Writer{nil, os.Stderr, &b} {
		if got := smallReads(w); got != w {
			t.Errorf("smallReads(%T) = %T, want it unchanged", w, got)
		}
	}
	if !sameWriter(&b, &b) || sameWriter(nil, nil) || sameWriter(&b, os.Stderr) {
		t.Error("sameWriter")
	}
	if sameWriter(lockedWriter{new(sync.Mutex), &b}, lockedWriter{new(sync.Mutex), &b}) {
		t.Error("two writers taken as one")
	}
}

// onlyWrite hides every method of w but Write.
type onlyWrite struct{ w io.Writer }

func (o *onlyWrite) Write(b []byte) (int, error) { return o.w.Write(b) }
