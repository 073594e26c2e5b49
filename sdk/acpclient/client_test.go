package acpclient

import (
	"context"
	"testing"

	"zot.dev/zot/internal/acp"
)

// TestAllowOnce picks the option of kind allow_once whatever its id, and
// cancels a question that has none.
func TestAllowOnce(t *testing.T) {
	req := PermissionRequest{Options: []acp.PermissionOption{
		{OptionID: "no", Kind: acp.PermissionOptionKindRejectOnce},
		{OptionID: "yes-this-time", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionID: "always", Kind: acp.PermissionOptionKindAllowAlways},
	}}
	if got := AllowOnce(context.Background(), req); got != "yes-this-time" {
		t.Errorf("AllowOnce = %q, want yes-this-time", got)
	}
	req.Options = req.Options[:1]
	if got := AllowOnce(context.Background(), req); got != "" {
		t.Errorf("AllowOnce without an allow_once option = %q, want \"\"", got)
	}
}
