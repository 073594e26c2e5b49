package rpcserver

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

// fuzzMaxLine is the line limit of the fuzzed server: small, so that the
// fuzzer reaches line_too_long too.
const fuzzMaxLine = 2048

// fuzzSentinel is the ping sent after the fuzzed lines; its answer is the
// last response of the input.
const fuzzSentinel = `{"type":"ping","id":"fuzz-sentinel"}`

// expectedResponses counts the responses the lines of in must get: one
// per line, except blank lines (spaces, tabs and CRs only), which get
// none. in ends with a newline.
func expectedResponses(in []byte) int {
	n := 0
	for _, line := range bytes.SplitAfter(in, []byte("\n")) {
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > fuzzMaxLine || len(line) > 0 && !isBlank(line) {
			n++
		}
	}
	return n
}

// FuzzLines feeds arbitrary lines to an in-process server on a scripted
// session and checks the protocol's promises about them: every line that
// is not blank gets exactly one response, in order; every frame decodes
// and validates against the schema; event seqs only grow; every prompt or
// compact that was accepted ends with exactly one done, in the order they
// were sent, and the events between belong to it; and the server goes on
// serving (a ping sent after the lines is answered last).
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		`{"type":"ping","id":1}`,
		`{"type":"prompt","id":"p","message":"hi"}` + "\n" + `{"type":"get_state","id":2}`,
		`{"type":"prompt","id":"a","message":"one"}` + "\n" + `{"type":"prompt","id":"b","message":"two"}` + "\n" + `{"type":"abort","id":"x","all":true}`,
		`{"type":"compact","id":"c"}` + "\r\n" + `{"type":"get_messages"}`,
		`{"type":"clear","id":3}` + "\n" + `{"type":"set_model","id":4,"model":"scripted"}` + "\n" + `{"type":"set_model","model":"nope"}`,
		`{"type":"hello","id":5,"token":"t"}` + "\n" + `{"type":"get_models","id":6.5}`,
		`{"type":"prompt","message":"x","images":[{"mime_type":"image/png","data":"eA=="}]}`,
		`{"type":"prompt","message":"x","extra":{"n":null}}`,
		"{\n[1,2]\n\"x\"\nnull\n{\"type\":7}\n{\"type\":\"nope\",\"id\":true}\n\xff\xfe\n \t\r\n\n",
		`{"id":{"n":1},"type":"ping"}` + "\n" + `{"type":"abort"}`,
		strings.Repeat("x", fuzzMaxLine+1) + "\n" + `{"type":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || in[len(in)-1] != '\n' {
			in = append(in, '\n')
		}
		want := expectedResponses(in)
		s := serve(t, `{"turns":[{"steps":[{"echo":true,"chunk":64}]}]}`, Options{MaxLineBytes: fuzzMaxLine})
		frames := make(chan []byte, 64)
		go func() {
			defer close(frames)
			for s.lines.Scan() {
				frames <- bytes.Clone(s.lines.Bytes())
			}
		}()
		go func() {
			// The input may hold more than the pipe takes before the
			// server answers; the writes must not block the reads.
			_, _ = s.client.Write(append(in, fuzzSentinel+"\n"...))
		}()
		c := &lineChecker{t: t}
		deadline := time.After(guard)
		for !c.sentinel || len(c.work) > 0 {
			select {
			case b, ok := <-frames:
				if !ok {
					t.Fatalf("output ended after %d responses; want %d, then the sentinel's", c.responses, want)
				}
				c.frame(b, want)
			case <-deadline:
				t.Fatalf("after %d responses (want %d) and with %d works unfinished, nothing more came within %v", c.responses, want, len(c.work), guard)
			}
		}
	})
}

// lineChecker follows the frames the server writes for one fuzzed input.
type lineChecker struct {
	t         *testing.T
	responses int       // responses read, the sentinel's not counted
	sentinel  bool      // the sentinel's response was read
	work      []wire.ID // prompts and compacts accepted and not yet done, in order
	seq       int64
}

// frame checks one frame; want is the number of responses the fuzzed
// lines must get.
func (c *lineChecker) frame(b []byte, want int) {
	t := c.t
	t.Helper()
	if err := schemacheck.ValidateFrame(b); err != nil {
		t.Fatalf("frame breaks the schema: %v\n%s", err, b)
	}
	resp, ev, err := wire.DecodeFrame(b)
	if err != nil {
		t.Fatalf("frame does not decode: %v\n%s", err, b)
	}
	if ev != nil {
		if ev.GetSeq() <= c.seq {
			t.Fatalf("seq %d after %d: %s", ev.GetSeq(), c.seq, b)
		}
		c.seq = ev.GetSeq()
		if len(c.work) == 0 {
			t.Fatalf("an event when no work runs: %s", b)
		}
		if got := ev.GetPromptID(); got != c.work[0] {
			t.Fatalf("an event of %s while %s runs: %s", got, c.work[0], b)
		}
		if _, ok := ev.(*wire.DoneEvent); ok {
			c.work = c.work[1:]
		}
		return
	}
	if c.sentinel {
		t.Fatalf("a response after the sentinel's: %s", b)
	}
	if resp.ID.String() == `"fuzz-sentinel"` && resp.Command == "ping" && c.responses == want {
		c.sentinel = true
		return
	}
	c.responses++
	if c.responses > want {
		t.Fatalf("response %d, but the input has %d lines that need one: %s", c.responses, want, b)
	}
	if resp.Success && (resp.Command == "prompt" || resp.Command == "compact") {
		c.work = append(c.work, resp.ID)
	}
}
