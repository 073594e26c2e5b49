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
	// A prompt zot rpc refuses as invalid_params (nothing to say) or
	// invalid_image (an image it cannot take) is refused so in process.
	if _, err := rt.Prompt(ctx, "", nil); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Errorf("empty prompt: %v has code %q", err, wire.CodeOf(err))
	}
	if _, err := rt.Prompt(ctx, "look", []Image{{MIMEType: "image/png", Data: []byte("not a png")}}); wire.CodeOf(err) != wire.CodeInvalidImage {
		t.Errorf("bad image: %v has code %q", err, wire.CodeOf(err))
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
