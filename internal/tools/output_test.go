package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

func TestOutputCaptureSmallOutputIsWhole(t *testing.T) {
	dir := t.TempDir()
	c := newOutputCapture(spillIn(dir), nil)
	fmt.Fprint(c, "hello\n")
	fmt.Fprint(c, "world\n")
	if got := c.finish(); got != "hello\nworld\n" {
		t.Errorf("got %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("spill files left: %v", entries)
	}
}

func TestOutputCaptureJustOverTheHeadNeedsNoSpill(t *testing.T) {
	dir := t.TempDir()
	c := newOutputCapture(spillIn(dir), nil)
	var sb strings.Builder
	for i := 0; i < 1500; i++ { // head holds 1000 lines, tail the other 500
		fmt.Fprintf(&sb, "%d\n", i)
	}
	fmt.Fprint(c, sb.String())
	if got := c.finish(); got != sb.String() {
		t.Errorf("output changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("spill files left: %v", entries)
	}
}

func TestOutputCaptureHeadTailAndSpill(t *testing.T) {
	dir := t.TempDir()
	c := newOutputCapture(spillIn(dir), nil)
	var full strings.Builder
	for i := 0; i < 5000; i++ {
		line := fmt.Sprintf("line %d\n", i)
		full.WriteString(line)
		c.Write([]byte(line))
	}
	got := c.finish()
	head, tail, ok := strings.Cut(got, "\n[... ")
	if !ok {
		t.Fatalf("no marker in %q", got[:200])
	}
	if strings.Count(head, "\n") != 1000 || !strings.HasPrefix(head, "line 0\n") || !strings.HasSuffix(head, "line 999\n") {
		t.Errorf("head: %d lines, ends %q", strings.Count(head, "\n"), head[len(head)-20:])
	}
	m := regexp.MustCompile(`^(\d+) bytes \((\d+) lines\) omitted; full output \((\d+) bytes\) saved to (\S+) \.\.\.\]\n\n`).FindStringSubmatch(tail)
	if m == nil {
		t.Fatalf("marker: %q", tail[:200])
	}
	if m[2] != "3000" || m[3] != fmt.Sprint(full.Len()) {
		t.Errorf("marker numbers: %v", m[1:4])
	}
	rest := tail[len(m[0]):]
	if strings.Count(rest, "\n") != 1000 || !strings.HasPrefix(rest, "line 4000\n") || !strings.HasSuffix(rest, "line 4999\n") {
		t.Errorf("tail: %d lines starting %q", strings.Count(rest, "\n"), rest[:20])
	}
	if filepath.Dir(m[4]) != dir || !strings.HasPrefix(filepath.Base(m[4]), "zot-bash-") || !strings.HasSuffix(m[4], ".log") {
		t.Errorf("spill file name %q", m[4])
	}
	spilled, err := os.ReadFile(m[4])
	if err != nil || string(spilled) != full.String() {
		t.Errorf("spill file holds %d bytes, want %d (%v)", len(spilled), full.Len(), err)
	}
}

func TestOutputCaptureByteLimitsAndUTF8Boundaries(t *testing.T) {
	dir := t.TempDir()
	c := newOutputCapture(spillIn(dir), nil)
	// One huge line of 3-byte characters, written in odd-sized pieces.
	data := []byte(strings.Repeat("€", 50000))
	for i := 0; i < len(data); i += 7 {
		c.Write(data[i:min(i+7, len(data))])
	}
	got := c.finish()
	head, tail, _ := strings.Cut(got, "\n\n[... ")
	if len(head) > captureBytes || len(head) < captureBytes-3 {
		t.Errorf("head is %d bytes", len(head))
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Error("a UTF-8 sequence was split")
	}
	_, after, _ := strings.Cut(tail, "...]\n\n")
	if len(after) > captureBytes || len(after) < captureBytes-3 {
		t.Errorf("tail is %d bytes", len(after))
	}
}

func TestLastLines(t *testing.T) {
	cases := []struct {
		in       string
		maxBytes int
		maxLines int
		want     string
	}{
		{"a\nb\nc\n", 100, 2, "b\nc\n"},
		{"a\nb\nc", 100, 2, "b\nc"},
		{"a\nb\nc\n", 100, 5, "a\nb\nc\n"},
		{"abcdef", 3, 5, "def"},
		{"x€", 2, 5, ""}, // cut inside the euro sign: drop the partial bytes
	}
	for _, c := range cases {
		if got := string(lastLines([]byte(c.in), c.maxBytes, c.maxLines)); got != c.want {
			t.Errorf("lastLines(%q, %d, %d) = %q, want %q", c.in, c.maxBytes, c.maxLines, got, c.want)
		}
	}
}

func TestOutputCaptureCapsTheSpill(t *testing.T) {
	const limit = 64 << 20 // the documented cap of one call's spill file
	dir := t.TempDir()
	c := newOutputCapture(spillIn(dir), nil)
	chunk := []byte(strings.Repeat(strings.Repeat("x", 1023)+"\n", 1024)) // 1 MiB
	// Whole lines to the end, so that the tail shown ends with one.
	const total = limit + 5<<20 + 3<<10
	for n := 0; n < total; {
		p := chunk[:min(len(chunk), total-n)]
		c.Write(p)
		n += len(p)
	}
	got := c.finish()
	m := regexp.MustCompile(`omitted; the first (\d+) bytes of the output \((\d+) bytes\) saved to (\S+); the (\d+) bytes after them were not saved \(the limit is 64 MiB\) \.\.\.\]`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no capped spill marker in %q", got[strings.Index(got, "[... "):][:300])
	}
	if m[1] != fmt.Sprint(limit) || m[2] != fmt.Sprint(total) || m[4] != fmt.Sprint(total-limit) {
		t.Errorf("marker numbers %v, want %d, %d, %d", m[1:], limit, total, total-limit)
	}
	st, err := os.Stat(m[3])
	if err != nil || st.Size() != limit {
		t.Errorf("spill file: %v, %v; want %d bytes", st, err, limit)
	}
	if !strings.HasSuffix(got, strings.Repeat("x", 1023)+"\n") {
		t.Error("the tail of the output is not shown")
	}
}

func TestSpillsCloseRemovesTheirFiles(t *testing.T) {
	parent := t.TempDir()
	s := NewSpills(parent)
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("NewSpills made files before any spill: %v", entries)
	}
	c := newOutputCapture(s.create, nil)
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(c, "line %d\n", i)
	}
	got := c.finish()
	m := regexp.MustCompile(`saved to (\S+) \.\.\.\]`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no spill file named in %q", got[:200])
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Fatalf("spill file gone before Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left after Close: %v", entries)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// A call after Close saves nothing and says so.
	c = newOutputCapture(s.create, nil)
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(c, "line %d\n", i)
	}
	if got := c.finish(); !strings.Contains(got, "the full output could not be saved") {
		t.Errorf("after Close: %q", got[strings.Index(got, "[... "):][:200])
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a spill after Close left %v", entries)
	}
}

// os/exec copies a command's output through ReadFrom when the writer has
// one: every chunk must land as through Write, and a failed read must be
// returned, not taken for the end.
func TestOutputCaptureReadFrom(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&sb, "%d\n", i)
	}
	c := newOutputCapture(spillIn(t.TempDir()), nil)
	n, err := io.Copy(c, iotest.HalfReader(strings.NewReader(sb.String())))
	if err != nil || n != int64(sb.Len()) {
		t.Fatalf("io.Copy = %d, %v; want %d, nil", n, err, sb.Len())
	}
	if got := c.finish(); got != sb.String() {
		t.Errorf("output changed")
	}

	c = newOutputCapture(spillIn(t.TempDir()), nil)
	boom := errors.New("boom")
	n, err = c.ReadFrom(io.MultiReader(strings.NewReader("partial\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) || n != 8 {
		t.Fatalf("ReadFrom = %d, %v; want 8, %v", n, err, boom)
	}
	if got := c.finish(); got != "partial\n" {
		t.Errorf("got %q", got)
	}
}
