package rpcclient

import (
	"context"

	"zot.dev/zot/sdk/wire"
)

// ListSessions lists the stored sessions of zot's home, newest first
// (list_sessions); cwd, when not empty, keeps those of that working
// directory. It reads the store whatever zot was started with.
func (c *Client) ListSessions(ctx context.Context, cwd string) ([]wire.SessionInfo, error) {
	r, err := call[wire.SessionsResult](ctx, c, &wire.ListSessionsCommand{CWD: cwd})
	if err != nil {
		return nil, err
	}
	return r.Sessions, nil
}

// LoadSession makes stored session id zot's (load_session): its
// transcript replaces the one in memory, and every later message is
// written to its file. It fails with wire.CodeBusy while work runs,
// wire.CodeNotFound for no such session, and wire.CodeSessionLocked when
// another zot has it open.
func (c *Client) LoadSession(ctx context.Context, id string) (wire.SessionInfo, error) {
	r, err := call[wire.LoadSessionResult](ctx, c, &wire.LoadSessionCommand{SessionID: id})
	if err != nil {
		return wire.SessionInfo{}, err
	}
	return r.Session, nil
}

// ForkSession forks a stored session before one of its user prompts
// (fork_session): cmd.SessionID (default: zot's own stored session),
// cmd.AtIndex or cmd.AtMessageID (default: the last prompt), and loads
// the fork unless cmd.Load is false. The result holds the fork and the
// prompt it left out. It fails with wire.CodeNotFound for no such
// session or prompt.
func (c *Client) ForkSession(ctx context.Context, cmd wire.ForkSessionCommand) (*wire.ForkSessionResult, error) {
	return call[wire.ForkSessionResult](ctx, c, &cmd)
}
