// Package duplex makes in-memory connections: two ends, each reading what
// the other writes. Tests and examples run a door (the rpc server, later
// the daemon) over one end and play its client on the other, in one
// process, so the race detector sees both sides.
package duplex

import (
	"errors"
	"io"
)

// End is one end of a connection. Writes block until the other end reads
// them (there is no buffer), as a stalled pipe would.
type End struct {
	r *io.PipeReader
	w *io.PipeWriter
}

// Pair returns the two ends of a new connection.
func Pair() (a, b *End) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return &End{r: ar, w: aw}, &End{r: br, w: bw}
}

// Read reads what the other end wrote; io.EOF once it closed its writing
// side.
func (e *End) Read(p []byte) (int, error) { return e.r.Read(p) }

// Write writes to the other end, blocking until it reads.
func (e *End) Write(p []byte) (int, error) { return e.w.Write(p) }

// CloseWrite ends what this end sends: the other end reads io.EOF.
func (e *End) CloseWrite() error { return e.w.Close() }

// Close closes both directions: pending and later reads and writes on
// either end fail.
func (e *End) Close() error {
	return errors.Join(e.w.Close(), e.r.Close())
}
