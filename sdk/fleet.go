package sdk

import (
	"context"
	"path/filepath"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/fleet"
)

// Fleet is Config.Fleet: the zot-fleet client that runs the Runtime's
// prompts as durable turns on a Temporal fleet, and the cluster it
// submits them to (the flags of `zot-fleet client`; docs/fleet.md). New
// starts the client (Binary, default zot-fleet in $PATH) and waits until
// it has reached the cluster; the Runtime owns it and Close ends it
// (after aborting the running prompt, as in process). With
// Config.SessionStore, a Runtime that resumes a stored session
// (Config.SessionID) whose last turn a killed process left running waits
// for that turn's end and keeps it, as zot daemon --executor temporal
// does. This package links no Temporal SDK: zot-fleet does, in its own
// process.
type Fleet = engine.FleetConfig

// FleetError is New's error when Config.Fleet's client could not be
// started or did not reach the cluster: its Binary, Temporal address
// and Namespace, its Reason (ErrFleetMissing or ErrFleetUnreachable,
// matched by errors.Is) and the cause Err (what the client said before
// it exited, or the timeout).
type FleetError = fleet.StartError

// ErrFleetMissing is the reason of a FleetError whose zot-fleet program
// was not found (make build-fleet builds it, make install-fleet installs
// it) or could not be started.
var ErrFleetMissing = fleet.ErrClientMissing

// ErrFleetUnreachable is the reason of a FleetError whose client started
// but did not reach the cluster within Fleet.ReadyTimeout: none listening
// at Fleet.Temporal, a certificate refused, no such namespace.
var ErrFleetUnreachable = fleet.ErrUnreachable

// startFleet starts cfg.Fleet's client and waits until it is ready.
func startFleet(cfg *Config) (*fleet.Remote, error) {
	fc := *cfg.Fleet
	if fc.Log == nil {
		fc.Log = cfg.Log
	}
	if fc.Turns == "" && cfg.SessionStore != "" {
		// Where zot daemon keeps them, for a store in a zot home.
		fc.Turns = filepath.Join(filepath.Dir(filepath.Clean(cfg.SessionStore)), "fleet", "turns")
	}
	return fleet.Connect(context.Background(), fc)
}
