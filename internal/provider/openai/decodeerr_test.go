package openai

import (
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
)

// A chunk whose field has the wrong JSON type fails with the decoder's
// error wrapped, so that its text is given in JSON words, not Go types.
func TestDecodeErrorNamesNoGoType(t *testing.T) {
	err := newAssembler("openai", func(llm.Event) {}).handle(httpcall.Event{Name: "message", Data: []byte(`{"choices":"none"}`)})
	providertest.DecodeErrorNamesNoGoType(t, err)
}
