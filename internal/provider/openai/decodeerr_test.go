package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"

	"zot.dev/zot/internal/provider/httpcall"
)

// A chunk whose field has the wrong JSON type fails with the decoder's
// error wrapped, so that its text is given in JSON words, not Go types.
func TestDecodeErrorNamesNoGoType(t *testing.T) {
	err := newAssembler("openai", func(llm.Event) {}).handle(httpcall.Event{Name: "message", Data: []byte(`{"choices":"none"}`)})
	var le *llm.Error
	var te *json.UnmarshalTypeError
	if !errors.As(err, &le) || le.Kind != "invalid_event" || !errors.As(err, &te) {
		t.Fatalf("err = %#v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "Go ") {
		t.Errorf("error text names a Go type: %s", msg)
	}
}
