package schemacheck

import (
	"encoding/json"
	"io/fs"
	"testing"

	"zot.dev/zot/schema"
	"zot.dev/zot/sdk/wire"
)

// samples are lines both validators must judge alike: every example of
// the schema, plus broken messages of every kind.
func samples(t testing.TB) []string {
	names, _ := fs.Glob(schema.FS, "rpc/*.json")
	var out []string
	for _, n := range names {
		examples, err := schema.Examples(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, exs := range examples {
			for _, e := range exs {
				out = append(out, string(e))
			}
		}
	}
	return append(out,
		`{"type":"prompt","message":["hi"]}`,
		`{"type":"hello","token":123}`,
		`{"id":"7","type":"set_model"}`,
		`{"id":"7","type":"set_model","model":""}`,
		`{"type":"ping","verbose":true}`,
		`{"type":"ping","id":null,"verbose":{"nested":[1]}}`,
		`{"type":"prompt","message":null}`,
		`{"type":"prompt","message":"x","images":null}`,
		`{"type":"prompt","message":"x","images":[null]}`,
		`{"type":"prompt","message":"x","images":[{"data":"eA==","mime_type":null,"note":1}]}`,
		`{"type":"prompt","message":"x","images":[{"data":null}]}`,
		`{"type":"abort","all":null}`,
		`{"type":"compact","instructions":null}`,
		`{"type":"hello","token":null,"protocol_version":null,"client":null}`,
		`{"type":"hello","protocol_version":2,"client":{"name":"x"}}`,
		`{"type":"hello","protocol_version":0}`,
		`{"type":"hello","protocol_version":1.5}`,
		`{"type":"hello","client":"me"}`,
		`{"type":"answer_permission","request_id":"perm-1","decision":"allow_once"}`,
		`{"type":"answer_permission","request_id":"perm-1","decision":"deny"}`,
		`{"type":"answer_permission","request_id":"perm-1"}`,
		`{"type":"answer_permission","request_id":null,"decision":"reject"}`,
		`{"type":"done","seq":1,"extra":null}`,
		`{"type":"permission_request","seq":3,"request_id":"perm-1","call_id":"c","tool":"bash","args":{}}`,
		`{"type":"permission_request","seq":3,"request_id":"perm-1","call_id":"c","tool":"bash","args":"x"}`,
		`{"type":"permission_request","seq":3,"request_id":"perm-1","call_id":"c","tool":"bash","args":{},"timeout_ms":null}`,
		`{"id":{"n":1},"type":"ping"}`,
		`{"id":true,"type":"ping"}`,
		`{"type":"prompt","message":"x","images":[{"mime_type":"image/png"}]}`,
		`{"type":"prompt","message":"x","images":[{"data":"eA==","extra":1}]}`,
		`{"type":"abort","all":"yes"}`,
		`{"type":"turn_end","seq":3,"stop":"end"}`,
		`{"type":"done","seq":0}`,
		`{"type":"done","seq":1.5}`,
		`{"type":"done","seq":2.0}`,
		`{"type":"done","seq":-1}`,
		`{"type":"assistant_message","seq":2,"content":[],"time":"2026-11-23T10:00:00+01:00"}`,
		`{"type":"assistant_message","seq":2,"content":[],"time":"yesterday Z"}`,
		`{"type":"user_message","seq":2,"content":[{"type":"text"}],"time":"2026-11-23T10:00:00Z"}`,
		`{"type":"user_message","seq":2,"content":[{"type":"video"}],"time":"2026-11-23T10:00:00Z"}`,
		`{"type":"user_message","seq":2,"content":[{"type":"image","mime_type":"image/bmp","bytes":3}],"time":"2026-11-23T10:00:00Z"}`,
		`{"type":"tool_result","seq":2,"id":"a","is_error":false,"content":[{"type":"tool_result","call_id":"b","is_error":true,"content":[{"type":"text","text":1}]}]}`,
		`{"type":"usage","seq":4,"input":1,"output":1,"cache_read":0,"cache_write":0,"cost_usd":-1,"cumulative":{"input":1,"output":1,"cache_read":0,"cache_write":0,"cost_usd":0}}`,
		`{"type":"usage","seq":4,"input":1,"output":1,"cache_read":0,"cache_write":0,"cost_usd":0,"cumulative":{}}`,
		`{"type":"ext_notify","seq":5,"extension":"x","level":"loud","message":"m"}`,
		`{"type":"response","command":"ping","success":false,"error":"x"}`,
		`{"type":"response","command":"ping","success":true,"error":"x","code":"busy"}`,
		`{"type":"response","command":"ping","success":false,"error":"x","code":"oops"}`,
		`{"type":"response","command":"ping","success":true,"data":{"pong":false}}`,
		`{"type":"response","command":"get_state","success":true}`,
		`{"type":"response","command":"get_state","success":true,"data":{"provider":"p","model":"m","cwd":"/","message_count":0,"busy":false,"usage":{"input":0,"output":0,"cache_read":0,"cache_write":0}}}`,
		`{"type":"launch"}`,
		`{"message":"no type"}`,
		`{"type":7}`,
		`[1,2]`,
		`"text"`,
		`{"type":"ping"} {"type":"ping"}`,
	)
}

// TestGeneratedChecksAgreeWithJSONSchema holds the generated validators
// (used at run time) to the verdicts of the full JSON Schema validator.
func TestGeneratedChecksAgreeWithJSONSchema(t *testing.T) {
	for _, s := range samples(t) {
		agree(t, []byte(s))
	}
}

func agree(t *testing.T, line []byte) {
	t.Helper()
	pairs := []struct {
		name      string
		generated func([]byte) error
		reference func([]byte) error
	}{
		{"command", wire.ValidateCommand, ValidateCommand},
		{"event", wire.ValidateEvent, ValidateEvent},
		{"frame", wire.ValidateFrame, ValidateFrame},
	}
	for _, p := range pairs {
		g, r := p.generated(line), p.reference(line)
		if (g == nil) != (r == nil) {
			t.Errorf("%s %s: generated says %v, JSON Schema says %v", p.name, line, g, r)
		}
	}
}

func FuzzAgreement(f *testing.F) {
	for _, s := range samples(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return
		}
		agree(t, line)
	})
}
