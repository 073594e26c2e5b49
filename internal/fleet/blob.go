// Package fleet runs a session's prompts on a fleet of workers through a
// durable-execution engine (Temporal), as zot daemon --executor temporal
// does: the Executor here sends each turn to a helper process,
// zot-fleet client, which links the engine's SDK so that zot itself does
// not, and relays the turn's events back in order. The types both sides
// share (the helper's frames, a turn's input and output, the blob store
// that keeps large values out of the engine's history) live here too.
package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Blobs keeps values too large for a workflow's history (a transcript, a
// long tool result) and hands out references to them. A reference names
// its content (sha256:<hex>), so putting the same value twice, as a
// retried activity does, gives the same reference and stores it once.
// Every worker and the client of one fleet must reach the same store.
type Blobs interface {
	// Put stores data and returns its reference.
	Put(ctx context.Context, data []byte) (string, error)
	// Get returns the data of ref.
	Get(ctx context.Context, ref string) ([]byte, error)
	// Record keeps data under name, durably, once Record returns: a
	// finished activity records its result under a name of its place in
	// the turn, so that an attempt made again after its report was lost
	// (its worker died, the cluster was away) returns it instead of
	// paying for the work twice. One write per call: the record holds
	// the result itself, not a reference to it.
	Record(ctx context.Context, name string, data []byte) error
	// Recorded returns what was recorded under name, nil when nothing
	// was.
	Recorded(ctx context.Context, name string) ([]byte, error)
}

// Dir is a Blobs in a local directory (or one every worker mounts), one
// file per value, written atomically.
type Dir string

// refPrefix starts every reference.
const refPrefix = "sha256:"

// Put stores data under its hash.
func (d Dir) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	path := filepath.Join(string(d), name[:2], name)
	if _, err := os.Stat(path); err == nil {
		return refPrefix + name, nil
	}
	if err := writeSynced(path, data); err != nil {
		return "", fmt.Errorf("blob store: writing %s: %w", name, err)
	}
	return refPrefix + name, nil
}

// writeSynced writes data to path atomically (a synced temporary file
// renamed over it), making path's folder when it is missing.
func writeSynced(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".put-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// Get reads the value of ref and checks it against its hash.
func (d Dir) Get(ctx context.Context, ref string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, ok := strings.CutPrefix(ref, refPrefix)
	if !ok || len(name) != 64 {
		return nil, fmt.Errorf("blob store: %q is not a reference", ref)
	}
	if _, err := hex.DecodeString(name); err != nil {
		return nil, fmt.Errorf("blob store: %q is not a reference", ref)
	}
	data, err := os.ReadFile(filepath.Join(string(d), name[:2], name))
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != name {
		return nil, errors.New("blob store: " + ref + " does not hold what it names")
	}
	return data, nil
}

// Record keeps data under name (see Blobs).
func (d Dir) Record(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	if err := writeSynced(filepath.Join(string(d), "records", name), data); err != nil {
		return fmt.Errorf("blob store: recording %s: %w", name, err)
	}
	return nil
}

// Recorded returns what was recorded under name, nil when nothing was.
func (d Dir) Recorded(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(string(d), "records", name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	return b, nil
}

// checkName accepts names of letters, digits, '-', '_' and '.' that do
// not start with a dot.
func checkName(name string) error {
	if name == "" || name[0] == '.' || len(name) > 200 {
		return fmt.Errorf("blob store: %q is not a name", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("blob store: %q is not a name", name)
		}
	}
	return nil
}
