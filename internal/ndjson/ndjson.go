// Package ndjson reads and writes newline-delimited JSON: one value per
// line, lines split on LF only.
//
// A [Reader] splits input into lines with a bound on line length that it
// survives: an oversize line is reported and skipped, and reading goes
// on. A [Writer] owns an output and one goroutine that encodes values in
// the order they were sent and flushes whenever no frame is waiting, so a
// burst of frames costs one write. Sending never blocks; backpressure is
// a separate call ([Writer.Wait]) that producers make outside their
// locks.
//
//	w := ndjson.NewWriter(os.Stdout, ndjson.WriterOptions{})
//	if err := w.Wait(ctx); err != nil { // room in the queue?
//		return err
//	}
//	w.Send(event)                       // never blocks, may hold locks
//	err := w.Close(ctx)                 // writes what is queued
package ndjson

import "errors"

// Appender is a value that can append its JSON encoding to a buffer,
// without a trailing newline.
type Appender interface {
	AppendJSON(b []byte) []byte
}

// SizeHinter is an [Appender] that can say how long its encoding is, at
// least (0 when it cannot tell): a [Writer] then encodes a long frame
// into a buffer made that size at once, rather than one that append grows
// by copying it several times.
type SizeHinter interface {
	SizeHint() int
}

// ErrLineTooLong is returned by [Reader.Next] for a line over the limit;
// the rest of that line has been skipped and the next call reads the
// line after it.
var ErrLineTooLong = errors.New("ndjson: line too long")

// ErrClosed is returned by the [Writer]'s methods once Close has been
// called.
var ErrClosed = errors.New("ndjson: writer closed")

// maxKeep is the capacity above which a buffer is dropped after use
// rather than kept for the next line or frame, so one huge value does not
// pin its memory for the rest of the stream.
const maxKeep = 1 << 20
