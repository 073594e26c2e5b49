package doortest

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/duplex"
)

// update rewrites the frames of the golden transcripts instead of
// comparing with them.
var update = flag.Bool("update", false, "rewrite the frames section of the golden transcripts")

// guard bounds every wait; it only catches hangs.
const guard = 60 * time.Second

// A transcript is a golden file of named sections, each opened by a line
// "-- name --":
//
//	script.json  the scripted provider's script
//	door         options of the door, one a line (see doorOptions)
//	steps        what the client does, one step a line:
//	               send <json>       write a frame ($DIR, $SID, $REQ expand)
//	               send-bad <json>   write a frame the schema refuses, on
//	                                 purpose (not checked)
//	               until <k=v>...    read frames up to one whose fields at
//	                                 the dotted paths k hold v (compared
//	                                 after normalising)
//	               until-all <k=v>... ; <k=v>...
//	                                 read frames until each pattern has
//	                                 matched one; the frames read are
//	                                 recorded in a canonical order
//	                                 (those without seq first, by text,
//	                                 then by seq), for frames from
//	                                 sources whose order is not defined
//	                                 (a door's answer and the events its
//	                                 command let the work go on to)
//	               close             end the input and read to the end
//	frames       every frame both ways, in order: "> " sent, "< " received,
//	             normalised (see normalizer); -update rewrites it
//
// Lines before the first section, and lines of steps that start with #,
// are comments.
type transcript struct {
	head     string
	names    []string
	sections map[string]string
}

func readTranscript(path string) (*transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tr := &transcript{sections: map[string]string{}}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur == "" {
			tr.head = b.String()
		} else {
			tr.sections[cur] = b.String()
		}
		b.Reset()
	}
	for line := range strings.Lines(string(data)) {
		if name, ok := sectionName(line); ok {
			flush()
			if _, dup := tr.sections[name]; dup {
				return nil, fmt.Errorf("%s: section %q twice", path, name)
			}
			cur = name
			tr.names = append(tr.names, name)
			tr.sections[name] = ""
			continue
		}
		b.WriteString(line)
	}
	flush()
	return tr, nil
}

func sectionName(line string) (string, bool) {
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < 7 {
		return "", false
	}
	return line[3 : len(line)-3], true
}

func (tr *transcript) bytes() []byte {
	var b bytes.Buffer
	b.WriteString(tr.head)
	for _, n := range tr.names {
		fmt.Fprintf(&b, "-- %s --\n", n)
		b.WriteString(tr.sections[n])
	}
	return b.Bytes()
}

// frameConn is the client's end of a door: frames written to it go to
// the door, frames the door writes are read from it, one a line.
type frameConn struct {
	t       *testing.T
	end     *duplex.End
	frames  chan []byte
	readErr error // set before frames is closed
}

// newFrameConn reads the client's end on a goroutine that ends when the
// door's output ends, or at the test's end, which closes it.
func newFrameConn(t *testing.T, end *duplex.End) *frameConn {
	fc := &frameConn{t: t, end: end, frames: make(chan []byte, 1024)}
	r := end
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(fc.frames)
		br := bufio.NewReaderSize(r, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				fc.frames <- bytes.TrimRight(line, "\r\n")
			}
			if err != nil {
				fc.readErr = err
				return
			}
		}
	}()
	t.Cleanup(func() {
		end.Close()
		select {
		case <-done:
		case <-time.After(guard):
			t.Error("the client's reader did not end")
		}
	})
	return fc
}

// send writes one frame.
func (fc *frameConn) send(frame []byte) {
	fc.t.Helper()
	if _, err := fc.end.Write(append(slices.Clip(frame), '\n')); err != nil {
		fc.t.Fatalf("sending %s: %v", frame, err)
	}
}

// next returns the next frame, or nil at the end of the output; step is
// the transcript's line that waits for it.
func (fc *frameConn) next(step int) []byte {
	fc.t.Helper()
	select {
	case f, ok := <-fc.frames:
		if !ok {
			return nil
		}
		return f
	case <-time.After(guard):
		fc.t.Fatalf("steps line %d: no frame came for %v", step, guard)
		return nil
	}
}

// door is one door started for a transcript.
type door struct {
	conn *frameConn
	dir  string // the session's working directory
	// check, when set, checks a frame against the door's schema.
	check func(fromClient bool, frame []byte) error
	// skip, when set, is told of a client frame sent unchecked.
	skip func(frame []byte)
}

// doorOptions are the lines of a transcript's door section.
type doorOptions struct {
	ext        bool   // "ext": the session runs testdata/ext
	mcp        bool   // "mcp": the session has the MCP server echoMCP serves
	approve    bool   // "approve": rpc's --approve
	permission string // "permission <mode>": acp's permission policy
	baseURL    string // not in transcripts: the anthropic provider's server
}

func parseDoorOptions(text string) (doorOptions, error) {
	var o doorOptions
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "ext" && len(f) == 1:
			o.ext = true
		case f[0] == "mcp" && len(f) == 1:
			o.mcp = true
		case f[0] == "approve" && len(f) == 1:
			o.approve = true
		case f[0] == "permission" && len(f) == 2:
			o.permission = f[1]
		default:
			return o, fmt.Errorf("unknown door option %q", strings.TrimSpace(line))
		}
	}
	return o, nil
}

// replayAll replays every transcript in testdata/<name> through the door
// start opens.
func replayAll(t *testing.T, name string, start func(t *testing.T, dir string, o doorOptions) *door) {
	files, err := filepath.Glob(filepath.Join("testdata", name, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no transcripts in testdata/%s", name)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			replay(t, f, start)
		})
	}
}

// replay plays the steps of the transcript at path through a new door and
// compares the frames with its frames section (or rewrites it).
func replay(t *testing.T, path string, start func(t *testing.T, dir string, o doorOptions) *door) {
	tr, err := readTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := parseDoorOptions(tr.sections["door"])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	dir := t.TempDir()
	// The session's directory is resolved (macOS's /var is a link), as
	// the door sees it.
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(tr.sections["script.json"]), 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, dir, opts)
	r := &player{t: t, d: d, norm: newNormalizer(dir)}
	for n, line := range strings.Split(tr.sections["steps"], "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch verb {
		case "send":
			r.send(arg, true)
		case "send-bad":
			r.send(arg, false)
		case "until":
			r.until(n+1, arg, false)
		case "until-all":
			r.until(n+1, arg, true)
		case "close":
			r.close()
		default:
			t.Fatalf("%s: steps line %d: unknown step %q", path, n+1, verb)
		}
	}
	if !r.closed {
		r.close()
	}
	got := strings.Join(r.record, "\n") + "\n"
	if *update {
		tr.sections["frames"] = got
		if !slices.Contains(tr.names, "frames") {
			tr.names = append(tr.names, "frames")
		}
		if err := os.WriteFile(path, tr.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := tr.sections["frames"]; got != want {
		t.Errorf("%s: the frames differ (go test -update rewrites them):\n%s", path, lineDiff(want, got))
	}
}

// player runs a transcript's steps.
type player struct {
	t      *testing.T
	d      *door
	norm   *normalizer
	record []string
	last   map[string]any // the last frame received that was a request to the client
	closed bool
}

func (p *player) send(arg string, check bool) {
	p.t.Helper()
	frame := []byte(p.norm.expand(arg, p.last))
	if !json.Valid(frame) {
		p.t.Fatalf("send: not JSON: %s", frame)
	}
	if !check && p.d.skip != nil {
		p.d.skip(frame)
	}
	if check && p.d.check != nil {
		if err := p.d.check(true, frame); err != nil {
			p.t.Errorf("the client's frame breaks the schema: %v: %s", err, frame)
		}
	}
	p.record = append(p.record, "> "+p.norm.line(frame))
	p.d.conn.send(frame)
}

// until reads frames up to one that matches every k=v of arg; with all,
// arg is patterns separated by ";", and it reads until each has matched
// a frame, recording the frames read in sorted order.
func (p *player) until(n int, arg string, all bool) {
	p.t.Helper()
	var pats [][][2]string
	for _, pat := range strings.Split(arg, ";") {
		var want [][2]string
		for _, kv := range strings.Fields(pat) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				p.t.Fatalf("steps line %d: %q is not key=value", n, kv)
			}
			want = append(want, [2]string{k, v})
		}
		if len(want) == 0 {
			p.t.Fatalf("steps line %d: an empty pattern", n)
		}
		pats = append(pats, want)
	}
	if !all && len(pats) != 1 {
		p.t.Fatalf("steps line %d: until takes one pattern (until-all takes several)", n)
	}
	from := len(p.record)
	matched := make([]bool, len(pats))
	for left := len(pats); left > 0; {
		frame := p.d.conn.next(n)
		if frame == nil {
			p.t.Fatalf("steps line %d: the output ended before a frame with %s (%v)\nso far:\n%s", n, arg, p.d.conn.readErr, strings.Join(p.record, "\n"))
		}
		v := p.receive(frame)
		for i, want := range pats {
			if !matched[i] && matches(v, want) {
				matched[i] = true
				left--
				break
			}
		}
	}
	if all {
		slices.SortStableFunc(p.record[from:], func(a, b string) int {
			sa, oka := seqOf(a)
			sb, okb := seqOf(b)
			switch {
			case oka != okb && oka:
				return 1
			case oka != okb:
				return -1
			case oka && sa != sb:
				return cmp.Compare(sa, sb)
			}
			return strings.Compare(a, b)
		})
	}
}

// seqOf returns the seq of a recorded frame that has one.
func seqOf(line string) (int64, bool) {
	var f struct {
		Seq *int64 `json:"seq"`
	}
	if json.Unmarshal([]byte(line[2:]), &f) != nil || f.Seq == nil {
		return 0, false
	}
	return *f.Seq, true
}

// receive records a frame and returns it normalised.
func (p *player) receive(frame []byte) any {
	p.t.Helper()
	if p.d.check != nil {
		if err := p.d.check(false, frame); err != nil {
			p.t.Errorf("the door's frame breaks the schema: %v: %s", err, frame)
		}
	}
	v, err := p.norm.value(frame)
	if err != nil {
		p.t.Fatalf("the door wrote a frame that is not JSON: %v: %s", err, frame)
	}
	p.record = append(p.record, "< "+encode(v))
	if m, ok := v.(map[string]any); ok && m["method"] != nil && m["id"] != nil {
		p.last = m
	}
	return v
}

// close ends the door's input and records what it writes until its end.
func (p *player) close() {
	p.closed = true
	p.d.conn.end.CloseWrite()
	for {
		frame := p.d.conn.next(0)
		if frame == nil {
			return
		}
		p.receive(frame)
	}
}

func matches(v any, want [][2]string) bool {
	for _, kv := range want {
		got, ok := at(v, kv[0])
		if !ok || scalar(got) != kv[1] {
			return false
		}
	}
	return true
}

// at returns the value at a dotted path.
func at(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return encode(v)
}

func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// lineDiff shows where two texts part, line by line.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}
