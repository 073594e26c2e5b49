package sdk_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// fakeFleet writes an executable zot-fleet into a new folder that runs
// body (sh) and returns its path.
func fakeFleet(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zot-fleet")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFleetMissing: a Config.Fleet whose zot-fleet is not there fails New
// with a *FleetError of reason ErrFleetMissing naming where it looked,
// whether it was named by path or looked for in $PATH.
func TestFleetMissing(t *testing.T) {
	named := filepath.Join(t.TempDir(), "zot-fleet")
	t.Setenv("PATH", t.TempDir())
	for _, binary := range []string{named, ""} {
		_, err := sdk.New(sdk.Config{Provider: "scripted", CWD: t.TempDir(), Fleet: &sdk.Fleet{Binary: binary}})
		var fe *sdk.FleetError
		if !errors.As(err, &fe) || !errors.Is(err, sdk.ErrFleetMissing) || errors.Is(err, sdk.ErrFleetUnreachable) {
			t.Fatalf("binary %q: New: %v; want a *FleetError of ErrFleetMissing", binary, err)
		}
		want := named
		if binary == "" {
			want = "zot-fleet"
		}
		if fe.Binary != want || !strings.Contains(err.Error(), "make build-fleet") {
			t.Errorf("binary %q: the error names %q and says %q; want %q and how to build it", binary, fe.Binary, err, want)
		}
	}
}

// TestFleetUnreachable: a client that exits before it is ready (as
// zot-fleet client does when the cluster refuses it) fails New with a
// *FleetError of reason ErrFleetUnreachable carrying what the client
// said; the client is given Config.Fleet's flags.
func TestFleetUnreachable(t *testing.T) {
	args := filepath.Join(t.TempDir(), "args")
	bin := fakeFleet(t, `echo "$@" > `+args+`
echo '{"type":"error","error":"connecting to Temporal at 127.0.0.1:9 (namespace ns1): connection refused"}'
exit 1`)
	_, err := sdk.New(sdk.Config{Provider: "scripted", CWD: t.TempDir(), Fleet: &sdk.Fleet{
		Binary: bin, Temporal: "127.0.0.1:9", Namespace: "ns1", ToolQueue: "tools", Blobs: "/shared/blobs", TLSCA: "ca.pem",
	}})
	var fe *sdk.FleetError
	if !errors.As(err, &fe) || !errors.Is(err, sdk.ErrFleetUnreachable) {
		t.Fatalf("New: %v; want a *FleetError of ErrFleetUnreachable", err)
	}
	if fe.Temporal != "127.0.0.1:9" || fe.Namespace != "ns1" || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("the error: %q (cluster %s, namespace %s); want the cluster named and the client's reason", err, fe.Temporal, fe.Namespace)
	}
	got, _ := os.ReadFile(args)
	want := "client --temporal 127.0.0.1:9 --namespace ns1 --task-queue zot --tool-queue tools --blobs /shared/blobs --tls-ca ca.pem\n"
	if string(got) != want {
		t.Errorf("the client's arguments:\n%q\nwant\n%q", got, want)
	}
}

// TestFleetNotReady: a client that never reaches the cluster fails New
// after Fleet.ReadyTimeout, and is ended.
func TestFleetNotReady(t *testing.T) {
	bin := fakeFleet(t, `while read -r line; do :; done`)
	start := time.Now()
	_, err := sdk.New(sdk.Config{Provider: "scripted", CWD: t.TempDir(), Fleet: &sdk.Fleet{Binary: bin, ReadyTimeout: 200 * time.Millisecond}})
	if !errors.Is(err, sdk.ErrFleetUnreachable) || !strings.Contains(err.Error(), "not ready within 200ms") {
		t.Fatalf("New: %v; want ErrFleetUnreachable after the timeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("New took %v", d)
	}
}

// TestFleetEndsWithRuntime: the Runtime owns its fleet client: Close
// ends it (its input closes).
func TestFleetEndsWithRuntime(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ended")
	bin := fakeFleet(t, `echo '{"type":"ready"}'
while read -r line; do :; done
echo ended > `+marker)
	rt, err := sdk.New(sdk.Config{Provider: "scripted", CWD: t.TempDir(), Fleet: &sdk.Fleet{Binary: bin}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the client ended before Close")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the client did not end with Close: %v", err)
	}
	if err := rt.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

type nopExecutor struct{}

func (nopExecutor) Prompt(context.Context, engine.ExecTurn, func(wire.Event)) error { return nil }

// TestFleetAndExecutor: Config.Fleet sets the executor; both are refused.
func TestFleetAndExecutor(t *testing.T) {
	_, err := sdk.New(sdk.Config{Provider: "scripted", CWD: t.TempDir(), Executor: nopExecutor{}, Fleet: &sdk.Fleet{}})
	if err == nil || !strings.Contains(err.Error(), "do not go together") {
		t.Fatalf("New: %v; want Fleet and Executor refused together", err)
	}
}
