package wire

import (
	"bytes"
	"testing"
)

// FuzzDecoders feeds arbitrary lines to every union decoder: none may
// panic, and whatever decodes must encode to a line that decodes to the
// same encoding again (decode → encode → decode is stable).
func FuzzDecoders(f *testing.F) {
	for _, d := range schemaDefs(f) {
		for _, ex := range d.Examples {
			f.Add([]byte(ex))
		}
	}
	f.Add([]byte(`{"type":"tool_result","call_id":"a","is_error":true,"content":[{"type":"image","mime_type":"image/png","bytes":1}]}`))
	f.Add([]byte(`{"type":"text_delta","seq":1,"delta":"\u2028\ud800"}`))
	f.Add([]byte(`{"type\u0000":1,"type":"ping"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		decoders := []func([]byte) (interface{ AppendJSON([]byte) []byte }, error){
			func(b []byte) (interface{ AppendJSON([]byte) []byte }, error) { return DecodeCommand(b) },
			func(b []byte) (interface{ AppendJSON([]byte) []byte }, error) { return DecodeEvent(b) },
			func(b []byte) (interface{ AppendJSON([]byte) []byte }, error) { return DecodeContentBlock(b) },
		}
		for _, decode := range decoders {
			v, err := decode(line)
			if err != nil {
				continue
			}
			first := v.AppendJSON(nil)
			v2, err := decode(first)
			if err != nil {
				t.Fatalf("re-decoding %s (from %q): %v", first, line, err)
			}
			second := v2.AppendJSON(nil)
			if !bytes.Equal(first, second) {
				t.Fatalf("unstable:\n first %s\nsecond %s", first, second)
			}
			if bytes.ContainsAny(first, "\n\r") {
				t.Fatalf("encoding spans lines: %q", first)
			}
		}
		_ = ValidateFrame(line)
		_ = ValidateCommand(line)
	})
}
