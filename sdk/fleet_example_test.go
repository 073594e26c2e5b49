package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// Runs the Runtime's prompts as durable turns on a Temporal fleet: a
// cluster (temporal server start-dev, say) and zot-fleet workers sharing
// the blob store (docs/fleet.md). The program sees the same events as in
// process.
func ExampleFleet() {
	rt, err := sdk.New(sdk.Config{
		Provider:     "anthropic",
		APIKey:       os.Getenv("ANTHROPIC_API_KEY"),
		CWD:          "/srv/checkouts/app", // where the tool queue's workers run tools
		SessionStore: "/srv/zot/sessions",  // a turn left running by a killed program is finished on resume
		Fleet: &sdk.Fleet{
			Binary:    "/usr/local/bin/zot-fleet",
			Temporal:  "temporal.internal:7233",
			Namespace: "agents",
			ToolQueue: "app-checkouts",
			Blobs:     "/mnt/fleet/blobs",
			TLSCert:   "/etc/zot/client.pem",
			TLSKey:    "/etc/zot/client.key",
		},
	})
	if errors.Is(err, sdk.ErrFleetMissing) || errors.Is(err, sdk.ErrFleetUnreachable) {
		log.Fatal(err) // which binary, which cluster, and why (*sdk.FleetError)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close() // aborts a running prompt, then ends the zot-fleet client

	events, err := rt.Prompt(context.Background(), "run the tests and fix what fails", nil)
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if d, ok := ev.(*wire.TextDeltaEvent); ok {
			fmt.Print(d.Delta)
		}
	}
}
