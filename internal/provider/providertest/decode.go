package providertest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
)

// DecodeErrorNamesNoGoType checks the error a provider's stream decoder
// gave for a chunk whose field has the wrong JSON type: an llm.Error of
// kind invalid_event wrapping the decoder's *json.UnmarshalTypeError,
// whose text names no Go type.
func DecodeErrorNamesNoGoType(t *testing.T, err error) {
	t.Helper()
	var le *llm.Error
	var te *json.UnmarshalTypeError
	if !errors.As(err, &le) || le.Kind != "invalid_event" || !errors.As(err, &te) {
		t.Fatalf("err = %#v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "Go ") {
		t.Errorf("error text names a Go type: %s", msg)
	}
}
