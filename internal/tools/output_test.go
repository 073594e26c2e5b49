package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestOutputCaptureSmallOutputIsWhole(t *testing.T) {
	dir := t.TempDir()
	c := newOutputCapture(dir, nil)
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
	c := newOutputCapture(dir, nil)
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
	c := newOutputCapture(dir, nil)
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
	c := newOutputCapture(dir, nil)
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
