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
	` { "type" : "tool_result" , "id" : "12" , "content" : [ { "text" : "a\n\"b\"\u00e9\u2028\/" , "type" : "text" } ] , "is_error" : false } `,
	`{"type":"tool_result","id":"13","content":[{"type":"text","text":"x"},]}`,
	`{"type":"tool_result","id":"14","id":"15"}`,
	`{"type":"tool_result","ID":"16"}`,
	`{"type":"tool_result","id":"17","content":[{"type":"text","text":"\ud83d\ude00 \udc00"}]}`,
	`{"type":"tool_result","id":"18","content":[{"type":"text","text":"bad \x"}]}`,
	"{\"type\":\"tool_result\",\"id\":\"19\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",
	`{"type":"tool_result","id":"20","content":[{"type":"text","text":"x","mime_type":"a"}]}`,
	`{"type":"tool_result","id":"21"} x`,
	`{"type":"tool_result","id":"22","is_error":tru}`,
	`{"type":"tool_result","id":"23",}`,
	`{"type":"tool_result","id":"24","content":[{"type":"image","mime_type":"image/png","data":"aGk=","text":"t"}]}`,
}

// TestFastPathAgreesWithGenerated: decoding a frame with the fast
// tool_result scanner accepts exactly what the generated decoder accepts,
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
	if f, ok := scanToolResult(line); ok {
		// What the scanner accepts, the generated decoder reads the same.
		gen, err := extwire.DecodeExtensionFrame(line)
		if err != nil {
			t.Fatalf("%s: the scanner reads it, the generated decoder says %v", line, err)
		}
		if !bytes.Equal(f.AppendJSON(nil), gen.AppendJSON(nil)) {
			t.Fatalf("%s: scanned as\n%s\nnot\n%s", line, f.AppendJSON(nil), gen.AppendJSON(nil))
		}
	}
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

// The scanner reads the plain ways of writing a tool_result itself, and
// leaves the rest to the general readers.
func TestScanToolResultTakesThePlainWay(t *testing.T) {
	for i, s := range fastpathSamples {
		_, ok := scanToolResult([]byte(s))
		want := i == 0 || i == 1 || i == 2 || i == 4 || i == 12
		if ok != want {
			t.Errorf("%s: scanned %v, want %v", s, ok, want)
		}
	}
	f, ok := scanToolResult([]byte(fastpathSamples[12]))
	if !ok || f.Content[0].(*extwire.TextContent).Text != "a\n\"b\"\u00e9\u2028/" || f.IsError == nil || *f.IsError {
		t.Fatalf("read as %s", f.AppendJSON(nil))
	}
}
