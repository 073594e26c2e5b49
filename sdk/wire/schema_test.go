package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"zot.dev/zot/schema"
)

// schemaDefs returns every definition of the embedded schema with its
// examples and whether it is a union.
func schemaDefs(t testing.TB) map[string]struct {
	Examples []json.RawMessage `json:"examples"`
	OneOf    []any             `json:"oneOf"`
} {
	t.Helper()
	out := map[string]struct {
		Examples []json.RawMessage `json:"examples"`
		OneOf    []any             `json:"oneOf"`
	}{}
	names, err := fs.Glob(schema.FS, "rpc/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		data, _ := schema.FS.ReadFile(n)
		var doc struct {
			Defs map[string]struct {
				Examples []json.RawMessage `json:"examples"`
				OneOf    []any             `json:"oneOf"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for k, v := range doc.Defs {
			out[k] = v
		}
	}
	return out
}

var unionDecoders = map[string]func([]byte) (any, error){
	"Command":      func(b []byte) (any, error) { return DecodeCommand(b) },
	"Event":        func(b []byte) (any, error) { return DecodeEvent(b) },
	"ContentBlock": func(b []byte) (any, error) { return DecodeContentBlock(b) },
}

// normalize decodes JSON text into generic values with exact numbers.
func normalize(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("normalize %s: %v", data, err)
	}
	return v
}

func TestExamplesValidateAndRoundTrip(t *testing.T) {
	defs := schemaDefs(t)
	if len(defs) < 40 {
		t.Fatalf("only %d definitions found", len(defs))
	}
	count := 0
	for name, d := range defs {
		for i, ex := range d.Examples {
			count++
			if err := ValidateDef(name, ex); err != nil {
				t.Errorf("%s example %d does not validate: %v", name, i, err)
				continue
			}
			var v any
			if d.OneOf != nil {
				dec, ok := unionDecoders[name]
				if !ok {
					t.Fatalf("no decoder for union %s", name)
				}
				var err error
				if v, err = dec(ex); err != nil {
					t.Errorf("%s example %d: decode: %v", name, i, err)
					continue
				}
			} else {
				v = newByDef(name)
				if v == nil {
					t.Fatalf("no Go type for %s", name)
				}
				if err := json.Unmarshal(ex, v); err != nil {
					t.Errorf("%s example %d: decode: %v", name, i, err)
					continue
				}
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Errorf("%s example %d: encode: %v", name, i, err)
				continue
			}
			if !reflect.DeepEqual(normalize(t, out), normalize(t, ex)) {
				t.Errorf("%s example %d does not round-trip:\n got %s\nwant %s", name, i, out, ex)
			}
			if bytes.ContainsAny(out, "\n\r") {
				t.Errorf("%s example %d encodes to more than one line", name, i)
			}
		}
	}
	t.Logf("%d examples of %d definitions", count, len(defs))
}

func TestInvalidMessagesAreRejected(t *testing.T) {
	cases := []struct {
		name, line string
		validate   func([]byte) error
		want       []string // substrings of the one-line error
	}{
		{"wrong type", `{"type":"prompt","message":["hi"]}`, ValidateCommand, []string{"/message", "string"}},
		{"number for string", `{"type":"hello","token":123}`, ValidateCommand, []string{"/token", "number", "string"}},
		{"missing required", `{"id":"7","type":"set_model"}`, ValidateCommand, []string{"missing", "model"}},
		{"unknown type", `{"type":"launch"}`, ValidateCommand, []string{`unknown command type "launch"`}},
		// What zot writes stays strict; commands allow members they do not
		// define (see TestReadCommandIsLenient).
		{"extra field", `{"type":"done","seq":1,"verbose":true}`, ValidateEvent, []string{"verbose", "additional"}},
		{"null for a required field", `{"type":"prompt","message":null}`, ValidateCommand, []string{"/message", "null", "string"}},
		{"id of the wrong type", `{"id":{"n":1},"type":"ping"}`, ValidateCommand, []string{"/id"}},
		{"image without data", `{"type":"prompt","message":"x","images":[{"mime_type":"image/png"}]}`, ValidateCommand, []string{"/images/0", "data"}},
		{"missing type", `{"message":"hi"}`, ValidateCommand, []string{"type", "missing"}},
		{"type not a string", `{"type":7}`, ValidateCommand, []string{"type", "string"}},
		{"not an object", `[1,2]`, ValidateCommand, []string{"object", "array"}},
		{"bad stop reason", `{"type":"turn_end","seq":3,"stop":"end"}`, ValidateEvent, []string{"/stop", "end_turn"}},
		{"seq zero", `{"type":"done","seq":0}`, ValidateEvent, []string{"/seq", "minimum"}},
		{"local time", `{"type":"assistant_message","seq":2,"content":[],"time":"2026-11-23T10:00:00+01:00"}`, ValidateEvent, []string{"/time"}},
		{"nested block", `{"type":"tool_result","call_id":"a","is_error":false,"content":[{"type":"text"}]}`, ValidateContentBlock, []string{"/content/0", "text"}},
		{"failure without code", `{"type":"response","command":"ping","success":false,"error":"x"}`, ValidateResponse, []string{"code"}},
		{"result of the wrong shape", `{"type":"response","command":"ping","success":true,"data":{"pong":false}}`, ValidateResponse, []string{"/pong"}},
		{"missing result", `{"type":"response","command":"get_state","success":true}`, ValidateResponse, []string{"/data"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.validate([]byte(c.line))
			if err == nil {
				t.Fatalf("%s accepted", c.line)
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"type":"prompt","message":5}`, "prompt: field message: expected string, got number"},
		{`{"type":"nope"}`, `unknown command type "nope"`},
		{`{"id":"1"}`, "field type: missing required field"},
		{`"prompt"`, "expected a JSON object, got string"},
		{`{"type":"prompt","message":"x"`, "prompt: invalid JSON"},
		{`{"id":true,"type":"ping"}`, "ping: field id: expected string or number, got boolean"},
	}
	for _, c := range cases {
		_, err := DecodeCommand([]byte(c.line))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeCommand(%s) = %v, want error containing %q", c.line, err, c.want)
		}
	}
	var ut *UnknownTypeError
	if _, err := DecodeEvent([]byte(`{"type":"launch","seq":1}`)); !errors.As(err, &ut) || ut.Type != "launch" {
		t.Errorf("unknown event type: got %v", err)
	}
}

func TestIDKeepsItsJSONType(t *testing.T) {
	for _, in := range []string{`"1"`, `42`, `-3.5e2`, `"a\"b"`, `null`} {
		line := `{"id":` + in + `,"type":"ping"}`
		c, err := DecodeCommand([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		id := c.GetID()
		resp := Response{ID: id, Command: "ping", Success: true, Data: json.RawMessage(`{"pong":true}`)}
		out := string(resp.AppendJSON(nil))
		if in == "null" {
			if strings.Contains(out, `"id"`) {
				t.Errorf("null id echoed: %s", out)
			}
			continue
		}
		if !strings.Contains(out, `"id":`+in+`,`) {
			t.Errorf("id %s echoed as %s", in, out)
		}
	}
}

func TestEncodingIsOneSafeLine(t *testing.T) {
	ev := &TextDeltaEvent{Seq: 1, Delta: "a\nb\u2028c\u2029d\x00e\xffü\"\\"}
	out := ev.AppendJSON(nil)
	if bytes.ContainsAny(out, "\n\r") || bytes.Contains(out, []byte("\u2028")) || bytes.Contains(out, []byte("\u2029")) {
		t.Fatalf("line breaks leaked: %q", out)
	}
	var back TextDeltaEvent
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if want := "a\nb\u2028c\u2029d\x00e\ufffdü\"\\"; back.Delta != want {
		t.Errorf("delta = %q, want %q", back.Delta, want)
	}
	std, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Seq   int64  `json:"seq"`
		Delta string `json:"delta"`
	}{"text_delta", 1, "plain ascii"})
	if got := (&TextDeltaEvent{Seq: 1, Delta: "plain ascii"}).AppendJSON(nil); !bytes.Equal(got, std) {
		t.Errorf("got %s, encoding/json writes %s", got, std)
	}
	args := json.RawMessage("{\n  \"path\": \"a.go\"\n}")
	tc := (&ToolCallEvent{Seq: 2, ID: "t", Name: "read", Args: args}).AppendJSON(nil)
	if bytes.ContainsAny(tc, "\n") || !bytes.Contains(tc, []byte(`"args":{"path":"a.go"}`)) {
		t.Errorf("raw args not compacted: %s", tc)
	}
	bad := (&ToolCallEvent{Seq: 3, ID: "t", Name: "read", Args: json.RawMessage(`{"path":`)}).AppendJSON(nil)
	if !json.Valid(bad) {
		t.Errorf("invalid raw args broke the line: %s", bad)
	}
}

func TestAppendJSONEqualsJSONMarshal(t *testing.T) {
	evs := []Event{
		&TextDeltaEvent{Seq: 1, PromptID: StringID("a<b>&c"), Delta: "<script>&amp; \u2028 \x01 é \xff"},
		&ToolCallEvent{Seq: 2, ID: "t", Name: "bash", Args: json.RawMessage(`{"command": "a && b > c",
			"n": 1}`)},
		&UsageEvent{Seq: 3, CostUSD: 0.000001234, Input: 1},
	}
	for _, ev := range evs {
		std, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.AppendJSON(nil); !bytes.Equal(got, std) {
			t.Errorf("AppendJSON and json.Marshal differ:\n%s\n%s", got, std)
		}
	}
}

func TestUnknownEventKeepsTheLine(t *testing.T) {
	line := `{"type":"future_event","seq":3,"prompt_id":"p","payload":{"nested":[1,2]}}`
	_, err := DecodeEvent([]byte(line))
	var ut *UnknownTypeError
	if !errors.As(err, &ut) {
		t.Fatalf("DecodeEvent: got %v, want an *UnknownTypeError", err)
	}
	var ev Event = NewUnknownEvent(ut.Type, []byte(line), err)
	u := ev.(*UnknownEvent)
	if ev.Type() != "future_event" || ev.GetSeq() != 3 || ev.GetPromptID() != StringID("p") || u.Err != err {
		t.Errorf("got %+v", u)
	}
	if got := string(ev.AppendJSON(nil)); got != line {
		t.Errorf("AppendJSON = %s, want %s", got, line)
	}
	if got, _ := json.Marshal(ev); string(got) != line {
		t.Errorf("json.Marshal = %s, want %s", got, line)
	}
	// A common field of the wrong type is skipped; the others are read.
	u = NewUnknownEvent("x", []byte(`{"type":"x","seq":"three","prompt_id":7}`), nil)
	if u.Seq != 0 || u.PromptID != NumberID(7) {
		t.Errorf("got seq %d, prompt_id %s", u.Seq, u.PromptID)
	}
	if NewUnknownEvent("x", []byte(`{"type":"x"`), nil) != nil {
		t.Error("invalid JSON kept")
	}
	var c Command = NewUnknownCommand("launch", []byte(`{"type":"launch","id":4}`), nil)
	if c.GetID() != NumberID(4) || c.Type() != "launch" {
		t.Errorf("unknown command: %+v", c)
	}
}
