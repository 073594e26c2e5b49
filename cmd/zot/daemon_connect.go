package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/daemon"
)

// daemonConnectCommand is `zot daemon connect`: stdin and stdout joined
// to the running daemon's socket, so a person or a script talks to it
// with nothing else installed.
func daemonConnectCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "connect",
		HideHelpCommand: true,
		Usage:           "talk to the running zot daemon: stdin goes to its socket, its answers to stdout",
		Description: `Connects to the socket zot daemon listens on ($ZOT_SOCKET, else the zot
home's daemon.sock, found as the daemon finds it) and relays lines both
ways: type or pipe one JSON-RPC 2.0 message per line. At the end of stdin
the daemon answers what is under way, then hangs up, and zot daemon connect
exits 0. It exits 1 when no daemon answers there, when the socket is served
by another user's process, or when the daemon hangs up before the end of
stdin (it was stopped).`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("zot daemon connect takes no arguments, got %q", cmd.Args().First())
			}
			if err := onlyFlags(cmd, "zot daemon connect", nil); err != nil {
				return err
			}
			return connectDaemon(ctx, std)
		},
	}
}

// connectDaemon relays std to the daemon's socket until the daemon hangs
// up (exit 0 after the end of stdin, else 1), stdout's reader goes away
// (exit 0) or a signal comes (128+signal).
func connectDaemon(ctx context.Context, std streams) error {
	sock, err := daemon.ResolveSocket(nil)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock.Path)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("no zot daemon answers at %s: start one with zot daemon (or set ZOT_SOCKET to its socket): %v", sock.Path, err)}
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	// Only the user's own daemon hears what they type: a socket another
	// user serves (planted in a shared directory, or a wrong ZOT_SOCKET)
	// is left before anything is sent.
	uid, err := daemon.PeerUID(conn)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("zot daemon connect: who serves %s: %v", sock.Path, err)}
	}
	if uid >= 0 && uid != os.Getuid() {
		return &exitError{code: 1, msg: fmt.Sprintf("zot daemon connect: %s is served by a process of uid %d, not of this user (uid %d): connect talks only to your own daemon (set ZOT_SOCKET to its socket)", sock.Path, uid, os.Getuid())}
	}
	// A signal ends the relay: closing the connection ends both copies
	// (but a read of stdin, which the process's exit ends).
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// stdin → daemon. At the end of stdin the write side is closed: the
	// daemon answers what is under way, then closes, which ends the
	// copy below. stdinEnded is told first, so when the daemon's close
	// arrives without it, the daemon left on its own. This goroutine may
	// stay blocked in a read of stdin after the relay ended (a read of a
	// terminal or pipe cannot be interrupted); the process's exit ends it.
	// stdinEnded gets nil at the end of stdin, or the error that ended
	// reading it; nothing when a write to the daemon failed first.
	stdinEnded := make(chan error, 1)
	go func() {
		in := &stdinReader{r: std.in}
		if _, err := io.Copy(conn, in); err == nil || in.err != nil {
			stdinEnded <- in.err
		}
		_ = conn.CloseWrite()
	}()
	_, err = io.Copy(std.out, conn)
	hungUp := &exitError{code: 1, msg: "zot daemon connect: the daemon closed the connection before the end of stdin"}
	switch {
	case ctx.Err() != nil:
		if received.Load() == int32(syscall.SIGPIPE) {
			return nil // stdout's reader left: a normal end
		}
		return &exitError{code: 128 + signalNumber(ctx)}
	case err == nil:
		select {
		case err := <-stdinEnded:
			if err != nil {
				return &exitError{code: 1, msg: "zot daemon connect: reading stdin: " + err.Error()}
			}
			return nil
		default:
			return hungUp
		}
	case errors.Is(err, syscall.ECONNRESET):
		return hungUp
	case errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return nil
	}
	return &exitError{code: 1, msg: "zot daemon connect: " + err.Error()}
}

// stdinReader is stdin as connect relays it, keeping the error (not the
// end) that ended reading it apart from a failed write to the daemon.
type stdinReader struct {
	r   io.Reader
	err error
}

func (r *stdinReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}
