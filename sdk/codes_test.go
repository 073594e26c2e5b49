package sdk

import (
	"context"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestErrorsHaveCodes: the Runtime's refusals carry the protocol code
// zot rpc answers the same refusal with (wire.CodeOf).
func TestErrorsHaveCodes(t *testing.T) {
	rt := newScripted(t, slowScript, Config{})
	ctx := context.Background()
	if err := rt.SetModel(ctx, ""); wire.CodeOf(err) != wire.CodeUnknownModel {
		t.Errorf("SetModel(\"\"): %v has code %q", err, wire.CodeOf(err))
	}
	events, err := rt.Prompt(ctx, "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Clear(ctx); wire.CodeOf(err) != wire.CodeBusy {
		t.Errorf("Clear while busy: %v has code %q", err, wire.CodeOf(err))
	}
	drain(t, events)
}
