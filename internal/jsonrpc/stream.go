package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"zot.dev/zot/internal/ndjson"
)

// pieceBytes is the largest write: a write says nothing until it has
// written it all, and the kernel frees what a write queued only once the
// client has read all of it (a socket's buffer, a pipe's page), so the
// client's progress is seen a piece at a time. At 2 KiB, a client that
// reads 400 bytes a second completes a piece every 5 s.
const pieceBytes = 2 << 10

// NDJSON returns the Transport of newline-delimited JSON over rwc: one
// message per line, lines split on LF only (a CR before it is dropped),
// read with package ndjson's bounded reader. A line over maxLine bytes
// (0 means DefaultMaxLineBytes) is skipped up to its LF and reported as
// a *TooLongError. A Batch goes out as its Lines, in writes of at most
// 2 KiB so that a client that reads slowly but steadily is seen to read;
// a batch begun is written to its end, since a line cut short would
// break the stream for the client, unless the stream fails or is closed.
//
// Read and Write block in rwc: ctx is looked at before each, and Close
// (which closes rwc) ends a blocked one. When rwc is a socket or a pipe
// (it implements syscall.Conn), the transport also tells, on Linux, how
// many bytes written the client has not read yet (Unread). CloseRead
// passes to rwc when it has one.
func NDJSON(rwc io.ReadWriteCloser, maxLine int) Transport {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	return &stream{rwc: rwc, r: ndjson.NewReader(rwc, maxLine), limit: maxLine, unread: UnsentProbe(rwc)}
}

// stream is the NDJSON transport.
type stream struct {
	rwc    io.ReadWriteCloser
	r      *ndjson.Reader
	limit  int
	unread func() (int, bool) // nil when the kernel cannot be asked
}

func (s *stream) Read(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	line, err := s.r.Next()
	switch {
	case errors.Is(err, ndjson.ErrLineTooLong):
		return nil, &TooLongError{Limit: s.limit}
	case errors.Is(err, io.EOF):
		return nil, io.EOF
	case err != nil:
		return nil, err
	}
	// A long line's buffer is handed over rather than copied: its params
	// are then read where they stand.
	if s.r.Detach() {
		return line, nil
	}
	return bytes.Clone(line), nil
}

func (s *stream) Write(ctx context.Context, b *Batch) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	p := b.Lines()
	for len(p) > 0 {
		piece := p[:min(len(p), pieceBytes)]
		n, err := s.rwc.Write(piece)
		p = p[n:]
		if err != nil {
			return err
		}
		if len(p) > 0 {
			b.Progress()
		}
	}
	return nil
}

func (s *stream) Close() error { return s.rwc.Close() }

// CloseRead ends the input only, when the stream can (a Unix socket).
func (s *stream) CloseRead() error {
	if cr, ok := s.rwc.(halfCloser); ok {
		return cr.CloseRead()
	}
	return fmt.Errorf("closing the input only: %w", errors.ErrUnsupported)
}

// Unread says how many bytes written the client has not read yet.
func (s *stream) Unread() (int, bool) {
	if s.unread == nil {
		return 0, false
	}
	return s.unread()
}
