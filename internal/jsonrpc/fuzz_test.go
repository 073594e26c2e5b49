package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/wirecodec"
)

// FuzzParse holds parse to its contract for any line: no panic; at most
// one outcome; an error answer that is one valid JSON object carrying an
// id that is null, a string or a number; a request with a method and, if
// present, an id and params of the allowed kinds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","id":"zot-1","result":{"outcome":{"outcome":"cancelled"}}}`,
		`{"jsonrpc":"2.0","id":"zot-2","error":{"code":-32603,"message":"x","data":7}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":3}`, `[1]`, `"s"`, `{`, "\xff", `{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":"m","jsonrpc":"1.0"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		// parse keeps the message it is given and leaves it as it is.
		msg := bytes.Clone(line)
		p := parse(msg)
		if !bytes.Equal(msg, line) {
			t.Fatalf("%q: parse changed the message to %q", line, msg)
		}
		outcomes := 0
		for _, set := range []bool{p.req != nil, p.resp != nil, p.fail != nil} {
			if set {
				outcomes++
			}
		}
		if outcomes > 1 {
			t.Fatalf("%q: %d outcomes", line, outcomes)
		}
		if p.fail != nil {
			frame := errorFrame(p.id, p.fail)
			var m map[string]json.RawMessage
			if err := json.Unmarshal(frame, &m); err != nil {
				t.Fatalf("%q: error frame %s: %v", line, frame, err)
			}
			if k := wirecodec.JSONKind(m["id"]); k != "null" && k != "string" && k != "number" {
				t.Fatalf("%q: answered with id %s", line, m["id"])
			}
		}
		if p.req != nil {
			if p.req.Method == "" {
				t.Fatalf("%q: request without a method", line)
			}
			if p.req.ID != nil && !validID(p.req.ID) {
				t.Fatalf("%q: request id %s", line, p.req.ID)
			}
			if k := wirecodec.JSONKind(p.req.Params); p.req.Params != nil && k != "object" && k != "array" {
				t.Fatalf("%q: params of kind %s", line, k)
			}
		}
	})
}
