package jsonrpc

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
)

// NewPipe returns two Transports connected in memory: what one writes,
// the other reads, message by message, with no framing and no copy but
// one per message. It is for tests and for a client in the same process
// as the server (a terminal client over an in-process engine).
//
// A Write waits until the other end has read each of its messages (as
// net.Pipe does, by the message), so a Conn's backpressure and stall
// timeout work as over a socket. Close ends both directions: the other
// end's Read returns io.EOF once it has read what was written before,
// and a Write to a closed end fails with io.ErrClosedPipe. CloseWrite
// ends only what this end sends, and CloseRead only what it reads (the
// other end's later Writes fail). Read and Write also end with ctx.
func NewPipe() (Transport, Transport) {
	ab, ba := newHalfPipe(), newHalfPipe()
	return &pipeEnd{in: ba, out: ab, closed: make(chan struct{})},
		&pipeEnd{in: ab, out: ba, closed: make(chan struct{})}
}

// halfPipe carries the messages of one direction.
type halfPipe struct {
	msgs chan []byte
	// ended is closed when the writing end will send nothing more: the
	// reader reads io.EOF.
	ended     chan struct{}
	endedOnce sync.Once
	// gone is closed when the reading end reads nothing more: writes
	// fail.
	gone     chan struct{}
	goneOnce sync.Once
}

func newHalfPipe() *halfPipe {
	return &halfPipe{msgs: make(chan []byte), ended: make(chan struct{}), gone: make(chan struct{})}
}

func (h *halfPipe) end()   { h.endedOnce.Do(func() { close(h.ended) }) }
func (h *halfPipe) leave() { h.goneOnce.Do(func() { close(h.gone) }) }

// pipeEnd is one end of NewPipe.
type pipeEnd struct {
	in, out   *halfPipe
	closed    chan struct{} // closed by Close: this end's own calls fail
	closeOnce sync.Once
}

func (p *pipeEnd) Read(ctx context.Context) ([]byte, error) {
	select {
	case <-p.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case <-p.in.gone:
		return nil, io.EOF
	default:
	}
	// A message already offered is read before the writer's end is
	// noticed.
	select {
	case msg := <-p.in.msgs:
		return msg, nil
	default:
	}
	select {
	case msg := <-p.in.msgs:
		return msg, nil
	case <-p.closed:
		return nil, net.ErrClosed
	case <-p.in.gone: // CloseRead
		return nil, io.EOF
	case <-p.in.ended:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (p *pipeEnd) Write(ctx context.Context, b *Batch) error {
	for i := range b.Len() {
		msg := bytes.Clone(b.Message(i))
		select {
		case p.out.msgs <- msg:
		case <-p.closed:
			return net.ErrClosed
		case <-p.out.ended:
			return net.ErrClosed
		case <-p.out.gone:
			return io.ErrClosedPipe
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if i < b.Len()-1 {
			b.Progress()
		}
	}
	return nil
}

// Close ends both directions.
func (p *pipeEnd) Close() error {
	p.closeOnce.Do(func() { close(p.closed) })
	p.out.end()
	p.in.leave()
	return nil
}

// CloseWrite ends what this end sends: the other end reads io.EOF after
// the messages written before.
func (p *pipeEnd) CloseWrite() error {
	p.out.end()
	return nil
}

// CloseRead ends what this end reads: its Read returns io.EOF, and the
// other end's Writes fail.
func (p *pipeEnd) CloseRead() error {
	p.in.leave()
	return nil
}
