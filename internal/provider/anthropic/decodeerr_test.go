package anthropic

import (
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
)

// A chunk whose field has the wrong JSON type fails with the decoder's
// error wrapped, so that its text is given in JSON words, not Go types.
func TestDecodeErrorNamesNoGoType(t *testing.T) {
	err := newAssembler(func(llm.Event) {}).handle(httpcall.Event{Name: "content_block_stop", Data: []byte(`{"type":"content_block_stop","index":"0"}`)})
	providertest.DecodeErrorNamesNoGoType(t, err)
}
