package main

import (
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestCommandsAreReadLeniently: a member a command does not define is
// ignored (and named on stderr, once per command and member), an optional
// member sent as null is absent, so a client newer than the server (or
// Python's images=None) is served.
func TestCommandsAreReadLeniently(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	ok := func(line, command string) *wire.Response {
		t.Helper()
		p.send(line)
		resp, evs := p.response()
		if len(evs) > 0 {
			t.Errorf("%s: events before the response: %v", line, types(evs))
		}
		wantResponse(t, resp, command, true, "")
		return resp
	}
	ok(`{"id":"6","type":"ping","extra":true}`, "ping")
	ok(`{"id":"7","type":"ping","extra":{"deep":[1]}}`, "ping")
	ok(`{"id":"8","type":"get_state","id2":null,"extra":1}`, "get_state")
	ok(`{"id":"9","type":"abort","all":null}`, "abort")
	ok(`{"id":null,"type":"clear"}`, "clear")

	// A prompt with null for its images and members from a future
	// protocol; MESSAGE never stands in for message.
	resp := ok(`{"id":"10","type":"prompt","message":"hi","MESSAGE":"no","images":null,"priority":"high"}`, "prompt")
	if string(resp.Data) != `{"started":true}` {
		t.Errorf("prompt data %s", resp.Data)
	}
	evs := p.untilDone()
	um, _ := evs[0].(*wire.UserMessageEvent)
	if um == nil || len(um.Content) != 1 || !strings.Contains(string(um.Content[0].AppendJSON(nil)), `"hi"`) {
		t.Errorf("the prompt as read: %v", types(evs))
	}
	ok(`{"id":"11","type":"compact","instructions":null,"style":"terse"}`, "compact")
	p.untilDone()

	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
	log := p.stderr.String()
	if n := strings.Count(log, `"extra"`); n != 2 {
		t.Errorf("the unknown ping and get_state member is named %d times, want once per command:\n%s", n, log)
	}
	for _, name := range []string{`"id2"`, `"MESSAGE"`, `"priority"`, `"style"`} {
		if strings.Count(log, name) != 1 {
			t.Errorf("stderr does not name %s once:\n%s", name, log)
		}
	}
	if strings.Contains(log, `"images"`) || strings.Contains(log, `"all"`) {
		t.Errorf("a known member sent as null is named as unknown:\n%s", log)
	}
}

// TestHelloCarriesBothVersions: hello takes the client's protocol version
// and a free-form description of the client, and answers with the
// server's; a client newer than the server is served.
func TestHelloCarriesBothVersions(t *testing.T) {
	for _, env := range [][]string{nil, {"ZOTCORE_RPC_TOKEN=s3cret"}} {
		p := start(t, env, rpcArgs(t)...)
		p.send(`{"id":"0","type":"hello","token":"s3cret","protocol_version":99,"client":{"name":"future-editor","version":"9.0","features":["x"]}}`)
		resp, _ := p.response()
		wantResponse(t, resp, "hello", true, "")
		res, err := resp.Result()
		if err != nil {
			t.Fatal(err)
		}
		if h := res.(*wire.HelloResult); h.ProtocolVersion != 1 || h.Version == "" {
			t.Errorf("hello = %+v", h)
		}
		p.send(`{"id":"1","type":"hello","token":"s3cret","protocol_version":1,"client":null}`)
		resp, _ = p.response()
		wantResponse(t, resp, "hello", true, "")
		p.send(`{"id":"2","type":"hello","token":"s3cret","protocol_version":"1"}`)
		resp, _ = p.response()
		wantResponse(t, resp, "hello", false, wire.CodeInvalidParams)
		p.send(`{"id":"3","type":"ping"}`)
		resp, _ = p.response()
		wantResponse(t, resp, "ping", true, "")
		if code := p.exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
		if !strings.Contains(p.stderr.String(), "protocol 99") {
			t.Errorf("stderr does not say the client is newer:\n%s", p.stderr.String())
		}
	}
}

// TestSetModelTakesWhatModelTakes: set_model takes any id --model takes
// (the catalog is advisory); get_models always lists the current model;
// an empty id is unknown_model.
func TestSetModelTakesWhatModelTakes(t *testing.T) {
	models := func(p *proc) []string {
		t.Helper()
		p.send(`{"type":"get_models"}`)
		resp, _ := p.response()
		wantResponse(t, resp, "get_models", true, "")
		res, err := resp.Result()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range res.(*wire.ModelsResult).Models {
			ids = append(ids, m.ID)
		}
		return ids
	}
	p := start(t, nil, rpcArgs(t, "--model", "my-local-model")...)
	if ids := models(p); !slices.Contains(ids, "my-local-model") {
		t.Errorf("get_models after --model my-local-model: %v", ids)
	}
	p.send(`{"id":"1","type":"set_model","model":"llama-3.3-70b-instruct:q4"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "set_model", true, "")
	if string(resp.Data) != `{"model":"llama-3.3-70b-instruct:q4"}` {
		t.Errorf("set_model data %s", resp.Data)
	}
	ids := models(p)
	if !slices.Contains(ids, "llama-3.3-70b-instruct:q4") || !slices.IsSorted(ids) {
		t.Errorf("get_models after set_model: %v", ids)
	}
	if slices.Contains(ids, "my-local-model") {
		t.Errorf("get_models still lists the model left: %v", ids)
	}
	p.send(`{"type":"get_state"}`)
	resp, _ = p.response()
	if !strings.Contains(string(resp.Data), `"model":"llama-3.3-70b-instruct:q4"`) {
		t.Errorf("state %s", resp.Data)
	}
	// The model works: a prompt runs on it.
	p.send(`{"id":"2","type":"prompt","message":"hi"}`)
	p.response()
	if evs := p.untilDone(); slices.Contains(types(evs), "error") {
		t.Errorf("prompt on the new model: %v", types(evs))
	}
	p.send(`{"id":"3","type":"set_model","model":""}`)
	resp, _ = p.response()
	wantResponse(t, resp, "set_model", false, wire.CodeUnknownModel)
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
