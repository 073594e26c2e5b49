package sessionfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"zot.dev/zot/internal/llm"
)

// ErrExists is matched (errors.Is) by the error of Create when a file is
// at its path already; the error matches fs.ErrExist too. (A value of its
// own, not fs.ErrExist itself: a variable copied from another package's
// is set by an init that every start of zot runs.)
var ErrExists error = existsError{}

// existsError is ErrExists.
type existsError struct{}

func (existsError) Error() string { return fs.ErrExist.Error() }

// Is makes errors.Is(ErrExists, fs.ErrExist) hold.
func (existsError) Is(target error) bool { return target == fs.ErrExist }

// Create makes the session file at path, which must not exist, holding a
// header made from opt and the messages msgs, and syncs it: the file is
// written under a temporary name in the same directory and linked to
// path only once whole, so no process ever sees part of it, a process
// killed meanwhile leaves at most a temporary file (".<name>.*.tmp",
// which nothing reads), and a file that appeared at path meanwhile is
// never replaced (the error then matches ErrExists).
func Create(path string, opt Options, msgs []llm.Message) error {
	body, err := encodeLines(msgs)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("creating session %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // the file stays under its own name once linked
	_, err = tmp.Write(append(newHeader(opt).line(), body...))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// A link, unlike a rename, never replaces what is at path.
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating session %s: %w", path, ErrExists)
		}
		return fmt.Errorf("creating session %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing session directory: %w", err)
	}
	return nil
}

// MessageID is the id of message m: 16 hex digits of the SHA-256 of the
// line that holds it in a session file. It depends on the message alone
// (its role, time, content and annotations), not on where it stands, so
// it names the same message after the transcript is loaded again,
// copied into a fork, exported and imported, or compacted around it;
// two messages share one only when they are the same in every respect,
// time included.
func MessageID(m llm.Message) string {
	line, err := encodeMessage(m)
	if err != nil {
		// A block no file can hold: its id is that of the message
		// without the blocks (still stable, as the failure is).
		line, _ = encodeMessage(llm.Message{Role: m.Role, Time: m.Time, Meta: m.Meta})
	}
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:8])
}

// EncodeMessage is m as a line of a session file holds it (without the
// newline): every block, with what providers need to go on with the
// conversation (reasoning signatures, image bytes, raw tool arguments).
func EncodeMessage(m llm.Message) ([]byte, error) { return encodeMessage(m) }

// DecodeMessage is the message of a line EncodeMessage made. It fails
// for a line that is not a message (a header, a reset, a role or block
// it does not know).
func DecodeMessage(line []byte) (llm.Message, error) {
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return llm.Message{}, err
	}
	switch llm.Role(r.Role) {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
	default:
		return llm.Message{}, fmt.Errorf("not a message: role %q", r.Role)
	}
	content, err := decodeBlocks(r.Content)
	if err != nil {
		return llm.Message{}, err
	}
	return llm.Message{Role: llm.Role(r.Role), Content: content, Time: r.Time, Meta: r.Meta}, nil
}
