package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"zot.dev/zot/sdk/client"
)

type base struct {
	ID int `json:"id"`
}

type schemaIn struct {
	base
	Name    string            `json:"name" jsonschema:"who"`
	Tags    []string          `json:"tags,omitempty"`
	Limit   *int              `json:"limit"`
	Ratio   float64           `json:"ratio,omitzero"`
	Meta    map[string]bool   `json:"meta,omitempty"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	Blob    []byte            `json:"blob,omitempty"`
	Skip    string            `json:"-"`
	Plain   bool              // named as the field
	Nested  struct{ X uint8 } `json:"nested"`
	private int               //lint:ignore U1000 an unexported field, which SchemaOf leaves out
}

func TestSchemaOf(t *testing.T) {
	got, err := client.SchemaOf(schemaIn{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"Plain":{"type":"boolean"},"blob":{"contentEncoding":"base64","type":"string"},"id":{"type":"integer"},` +
		`"limit":{"type":"integer"},"meta":{"additionalProperties":{"type":"boolean"},"type":"object"},"name":{"description":"who","type":"string"},` +
		`"nested":{"properties":{"X":{"type":"integer"}},"required":["X"],"type":"object"},"ratio":{"type":"number"},"raw":{},` +
		`"tags":{"items":{"type":"string"},"type":"array"}},"required":["id","name","Plain","nested"],"type":"object"}`
	if string(got) != want {
		t.Errorf("SchemaOf:\n got %s\nwant %s", got, want)
	}
	if got, err := client.SchemaOf(struct{}{}); err != nil || string(got) != `{"properties":{},"type":"object"}` {
		t.Errorf("empty struct: %s, %v", got, err)
	}
}

type loop struct {
	Next *loop `json:"next"`
}

func TestSchemaOfRefuses(t *testing.T) {
	for name, v := range map[string]any{
		"chan":      struct{ C chan int }{},
		"func":      struct{ F func() }{},
		"complex":   struct{ C complex64 }{},
		"int keys":  struct{ M map[int]string }{},
		"recursive": loop{},
		"nil":       nil,
	} {
		if s, err := client.SchemaOf(v); err == nil {
			t.Errorf("%s: got %s, want an error", name, s)
		}
	}
	if _, err := client.NewTool("x", "", func(_ context.Context, in struct{ C chan int }) (string, error) { return "", nil }); err == nil {
		t.Error("NewTool took an input with no schema")
	}
}
