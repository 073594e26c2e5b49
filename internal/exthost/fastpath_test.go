package exthost

import (
	"bytes"
	"testing"

	"zot.dev/zot/sdk/extwire"
)

// fastpathSamples are tool_result frames, good and broken.
var fastpathSamples = []string{
	`{"type":"tool_result","id":"1","content":[{"type":"text","text":"hi"}]}`,
	`{"type":"tool_result","id":"2","content":[{"type":"image","mime_type":"image/png","data":"aGk="}],"is_error":true}`,
	`{"type":"tool_result","id":"3","content":[]}`,
	`{"type":"tool_result","content":[{"type":"text","text":"no id"}]}`,
	`{"type":"tool_result","id":"4"}`,
	`{"type":"tool_result","id":"5","content":[{"type":"text"}]}`,
	`{"type":"tool_result","id":"6","content":[{"type":"video","data":"x"}]}`,
	`{"type":"tool_result","id":7,"content":[]}`,
	`{"type":"tool_result","id":"8","content":[{"type":"text","text":"x","extra":1}]}`,
	`{"type":"tool_result","id":"9","content":[],"extra":true}`,
	`{"type":"tool_result","id":"10","content":null}`,
	`{"type":"tool_result","id":"11","content":[{"type":"text","text":"x"}],"is_error":null}`,
}

// TestFastPathAgreesWithGenerated: decoding a frame with the one-pass
// tool_result reader accepts exactly what the generated decoder accepts,
// and reads it the same.
func TestFastPathAgreesWithGenerated(t *testing.T) {
	for _, s := range fastpathSamples {
		checkFastPath(t, []byte(s))
	}
}

func FuzzFastPathAgreesWithGenerated(f *testing.F) {
	for _, s := range fastpathSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFastPath(t, line) })
}

func checkFastPath(t *testing.T, line []byte) {
	t.Helper()
	fast, ferr := decodeFrame(line)
	gen, gerr := extwire.DecodeExtensionFrame(line)
	if (ferr == nil) != (gerr == nil) {
		t.Fatalf("%s: the fast path says %v, the generated decoder %v", line, ferr, gerr)
	}
	if ferr != nil {
		return
	}
	if !bytes.Equal(fast.AppendJSON(nil), gen.AppendJSON(nil)) {
		t.Fatalf("%s: read as\n%s\nnot\n%s", line, fast.AppendJSON(nil), gen.AppendJSON(nil))
	}
}
