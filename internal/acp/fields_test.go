package acp

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/schemacheck"
)

// TestUnionWithOwnMembers: a union whose schema defines members beside
// its variants (SessionConfigOption's id and name) keeps them both ways,
// and what it writes is valid ACP.
func TestUnionWithOwnMembers(t *testing.T) {
	desc := "which model answers"
	opt := SessionConfigOption{
		SessionConfigOptionFields: SessionConfigOptionFields{ID: "model", Name: "Model", Description: &desc},
		Select: &SessionConfigSelect{
			CurrentValue: "m1",
			Options:      json.RawMessage(`[{"value":"m1","name":"Model one"},{"value":"m2","name":"Model two"}]`),
		},
	}
	b, err := json.Marshal(opt)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"model","name":"Model","description":"which model answers","type":"select","currentValue":"m1","options":[{"value":"m1","name":"Model one"},{"value":"m2","name":"Model two"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if err := schemacheck.ValidateRPCDef("acp/schema.json", "SessionConfigOption", b); err != nil {
		t.Error(err)
	}
	var back SessionConfigOption
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != "model" || back.Name != "Model" || back.Description == nil || *back.Description != desc ||
		back.Select == nil || back.Select.CurrentValue != "m1" || back.Boolean != nil {
		t.Errorf("decoded %+v", back)
	}

	// Without its own members it is not valid ACP, and the variant alone
	// does not make it so.
	if err := schemacheck.ValidateRPCDef("acp/schema.json", "SessionConfigOption", []byte(`{"type":"boolean","currentValue":true}`)); err == nil {
		t.Error("an option without id and name validated")
	}
	if _, err := json.Marshal(SessionConfigOption{SessionConfigOptionFields: SessionConfigOptionFields{ID: "x", Name: "X"}}); err == nil {
		t.Error("an option with no variant set was written")
	}
}

// TestOpenUnionWithOwnMembersKeepsItsText: a variant the schema leaves
// open is written back exactly as it came, its own members once.
func TestOpenUnionWithOwnMembersKeepsItsText(t *testing.T) {
	in := `{"message":"pick","mode":"telepathy","extra":1}`
	var u CreateElicitationRequest
	if err := json.Unmarshal([]byte(in), &u); err != nil {
		t.Fatal(err)
	}
	if u.Message != "pick" || u.Other == nil {
		t.Fatalf("decoded %+v", u)
	}
	out, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("got %s, want %s", out, in)
	}
}
