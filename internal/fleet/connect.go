package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"zot.dev/zot/internal/engine"
)

// Binary is the name of the program that links the Temporal SDK.
const Binary = "zot-fleet"

// The defaults of the cluster's flags, the same for zot daemon
// --executor temporal, the SDK's Fleet and zot-fleet's commands.
const (
	// DefaultTemporal is the Temporal frontend: the dev server's.
	DefaultTemporal = "127.0.0.1:7233"
	// DefaultNamespace is the Temporal namespace.
	DefaultNamespace = "default"
	// DefaultTaskQueue carries the turns' workflows and model calls.
	DefaultTaskQueue = "zot"
)

// ErrClientMissing is the reason of a StartError whose zot-fleet program
// could not be found or started.
var ErrClientMissing = errors.New("the zot-fleet program is missing")

// ErrUnreachable is the reason of a StartError whose client started but
// did not reach the cluster (not listening, refused its certificate, no
// such namespace, too slow).
var ErrUnreachable = errors.New("the fleet client did not reach the Temporal cluster")

// StartError is why Connect returned no Remote. errors.Is matches its
// Reason (ErrClientMissing or ErrUnreachable) and its cause.
type StartError struct {
	// Binary is the zot-fleet program Connect looked for or started.
	Binary string
	// Temporal and Namespace name the cluster.
	Temporal, Namespace string
	// Reason is ErrClientMissing or ErrUnreachable.
	Reason error
	// Err is the cause: the lookup's error, or what the client said
	// before it exited, or the timeout.
	Err error
}

func (e *StartError) Error() string {
	if errors.Is(e.Reason, ErrClientMissing) {
		return fmt.Sprintf("fleet: %v (%s): %v; make build-fleet builds it and make install-fleet installs it beside zot", e.Reason, e.Binary, e.Err)
	}
	return fmt.Sprintf("fleet: %s did not reach Temporal at %s (namespace %s): %v", e.Binary, e.Temporal, e.Namespace, e.Err)
}

// Unwrap returns the reason and the cause.
func (e *StartError) Unwrap() []error { return []error{e.Reason, e.Err} }

// Args are the flags of `zot-fleet client` that c gives.
func Args(c engine.FleetConfig) []string {
	args := []string{"client", "--temporal", or(c.Temporal, DefaultTemporal), "--namespace", or(c.Namespace, DefaultNamespace), "--task-queue", or(c.TaskQueue, DefaultTaskQueue)}
	for _, f := range [][2]string{{"tool-queue", c.ToolQueue}, {"blobs", c.Blobs}, {"tls-cert", c.TLSCert}, {"tls-key", c.TLSKey}, {"tls-ca", c.TLSCA}, {"tls-server-name", c.TLSServerName}, {"relay", c.Relay}, {"relay-url", c.RelayURL}} {
		if f[1] != "" {
			args = append(args, "--"+f[0], f[1])
		}
	}
	if c.ToolStartTimeout > 0 {
		args = append(args, "--tool-start-timeout", c.ToolStartTimeout.String())
	}
	if c.HistoryEvents != 0 {
		args = append(args, "--history-events", strconv.Itoa(max(c.HistoryEvents, 0)))
	}
	return args
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Connect starts the zot-fleet client c names and waits until it has
// reached the cluster (at most c.ReadyTimeout, 30 s by default, or until
// ctx ends). Its error is a *StartError when the program is missing or
// the cluster was not reached.
func Connect(ctx context.Context, c engine.FleetConfig) (*Remote, error) {
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	temporal, ns := or(c.Temporal, DefaultTemporal), or(c.Namespace, DefaultNamespace)
	path := or(c.Binary, Binary)
	fail := func(reason, err error) error {
		return &StartError{Binary: path, Temporal: temporal, Namespace: ns, Reason: reason, Err: err}
	}
	if !strings.ContainsRune(path, os.PathSeparator) {
		found, err := exec.LookPath(path)
		if err != nil {
			return nil, fail(ErrClientMissing, err)
		}
		path = found
	} else if _, err := os.Stat(path); err != nil {
		return nil, fail(ErrClientMissing, err)
	}
	r, err := Start(path, Args(c), c.Turns, log)
	if err != nil {
		return nil, fail(ErrClientMissing, err)
	}
	timeout := c.ReadyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := r.Ready(wait); err != nil {
		_ = r.Close(time.Second)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("not ready within %v", timeout)
		}
		return nil, fail(ErrUnreachable, err)
	}
	return r, nil
}
