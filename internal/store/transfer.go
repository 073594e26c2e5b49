package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// ExportFormat is the "format" member of an exported session, and
// exportVersion the version of that format this package writes and reads.
const (
	ExportFormat  = "zot-session"
	exportVersion = 1
)

// export is an exported session: one JSON document holding what the
// index says of the session and its transcript, each message as a line
// of a session file holds it.
//
// A session file holds no credentials: no API keys, no request headers,
// no base URLs, no environment (those are the provider settings of the
// process, never written to it). It holds the messages: the prompts,
// the answers with the providers' reasoning blocks (their signatures and
// encrypted reasoning let the same provider go on with the
// conversation), the tool calls and their results, images. An export is
// those messages and the metadata below, nothing else; a secret a tool
// printed (a file read, a command's output) is in its result as it was
// in the conversation.
type export struct {
	Format   string            `json:"format"`
	Version  int               `json:"version"`
	Exported time.Time         `json:"exported"`
	Session  exportedSession   `json:"session"`
	Messages []json.RawMessage `json:"messages"`
}

// exportedSession is the metadata of an exported session.
type exportedSession struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	CWD      string    `json:"cwd"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Messages int       `json:"message_count"`
	Model    string    `json:"model,omitempty"`
	Parent   string    `json:"parent_id,omitempty"`
}

// Export writes stored session id to w as one portable JSON document
// (format "zot-session", version 1): its index entry (id, title, working
// directory, times, message count, model, parent) and its transcript as
// loading it gives (a torn last line left out, tool calls left without
// results answered as aborted). It holds no credentials: see the note on
// the export type in transfer.go. The session may be open in another
// process meanwhile; what its file holds by then is exported. Export
// fails with an error matching ErrNotFound for a session the store does
// not hold.
func (s *Store) Export(ctx context.Context, id string, w io.Writer) error {
	e, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	msgs, err := sessionfile.Load(e.Path)
	if err != nil {
		return fmt.Errorf("exporting session %s: %w", id, err)
	}
	doc := export{
		Format: ExportFormat, Version: exportVersion, Exported: time.Now().UTC().Truncate(time.Second),
		Session: exportedSession{ID: e.ID, Title: e.Title, CWD: e.CWD, Created: e.Created, Updated: e.Updated,
			Messages: len(msgs), Model: e.Model, Parent: e.Parent},
		Messages: make([]json.RawMessage, 0, len(msgs)),
	}
	for _, m := range msgs {
		line, err := sessionfile.EncodeMessage(m)
		if err != nil {
			return fmt.Errorf("exporting session %s: %w", id, err)
		}
		doc.Messages = append(doc.Messages, line)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("exporting session %s: %w", id, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("exporting session %s: %w", id, err)
	}
	return nil
}

// ExportedCWD is the working directory an exported session (data) was
// exported from; "" when data is not an export or records none.
func ExportedCWD(data []byte) string {
	var doc struct {
		Session struct {
			CWD string `json:"cwd"`
		} `json:"session"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	return doc.Session.CWD
}

// ErrNotExport is matched (errors.Is) by the error of Import when what it
// reads is not an exported session it can read.
var ErrNotExport = errors.New("not an exported zot session")

// ImportOptions are the settings of Import.
type ImportOptions struct {
	// CWD is the working directory of the imported session; empty: the
	// one it was exported from.
	CWD string
}

// Imported is what Import made.
type Imported struct {
	// Entry is the new session's.
	Entry
	// From is the id the session had where it was exported.
	From string
}

// Import reads an exported session (see Export) from r and stores it as
// a new session with a fresh id, its transcript as exported (every
// message keeps its time, so its MessageID too). The transcript is
// checked first: messages that do not hold together (a tool result with
// no call before it) are refused, and nothing is stored. The new file
// appears whole or not at all. Import fails with an error matching
// ErrNotExport for a document of another kind, format or version.
func (s *Store) Import(ctx context.Context, r io.Reader, opt ImportOptions) (Imported, error) {
	var doc export
	dec := json.NewDecoder(bufio.NewReader(r))
	if err := dec.Decode(&doc); err != nil {
		return Imported{}, fmt.Errorf("importing a session: %w (%v)", ErrNotExport, err)
	}
	if doc.Format != ExportFormat {
		return Imported{}, fmt.Errorf("importing a session: %w (format %q, want %q)", ErrNotExport, doc.Format, ExportFormat)
	}
	if doc.Version < 1 || doc.Version > exportVersion {
		return Imported{}, fmt.Errorf("importing a session: %w (version %d; this zot reads version %d)", ErrNotExport, doc.Version, exportVersion)
	}
	msgs := make([]llm.Message, 0, len(doc.Messages))
	for i, raw := range doc.Messages {
		m, err := sessionfile.DecodeMessage(raw)
		if err != nil {
			return Imported{}, fmt.Errorf("importing a session: messages[%d]: %w", i, err)
		}
		msgs = append(msgs, m)
	}
	if err := agent.Validate(msgs); err != nil {
		return Imported{}, fmt.Errorf("importing a session: %w", err)
	}
	cwd := opt.CWD
	if cwd == "" {
		cwd = doc.Session.CWD
	}
	id := NewID()
	if err := sessionfile.Create(s.Path(id), sessionfile.Options{CWD: cwd}, msgs); err != nil {
		return Imported{}, fmt.Errorf("importing a session: %w", err)
	}
	e, err := s.Get(ctx, id)
	if err != nil {
		return Imported{}, fmt.Errorf("importing a session: %w", err)
	}
	return Imported{Entry: e, From: doc.Session.ID}, nil
}
