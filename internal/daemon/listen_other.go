//go:build !unix

package daemon

import (
	"errors"
	"io"

	"zot.dev/zot/internal/jsonrpc"
)

// maxSocketPath bounds socket paths where Unix sockets are not served.
const maxSocketPath = 107

// Endpoint is not available without Unix domain sockets.
type Endpoint struct{}

// Listen fails: the daemon needs Unix domain sockets; zot acp serves the
// same protocol over stdin and stdout everywhere.
func Listen(path string, log io.Writer) (*Endpoint, error) {
	return nil, errors.New("zot daemon: this system has no Unix domain sockets; use zot acp (stdin/stdout)")
}

// Accept fails.
func (e *Endpoint) Accept() (jsonrpc.Stream, error) {
	return jsonrpc.Stream{}, errors.New("no endpoint")
}

// Close does nothing.
func (e *Endpoint) Close() error { return nil }

// Addr is empty.
func (e *Endpoint) Addr() string { return "" }
