// Package session keeps a transcript in a file so a later run can resume
// it.
//
// The file is JSON Lines: a header line recording the format version and
// the working directory, then one message per line, appended as the
// transcript grows. Save hands each line to the kernel at once (write(2)),
// so a process killed at any moment, kill -9 included, loses no message
// saved; Sync and SyncLater flush them to the disk (fsync), which only a
// power loss or an operating system crash needs. SyncLater syncs at once
// when the file was not synced for SyncGap, else when that much time has
// passed since the last sync: quick turns in a row share one sync
// instead of paying one each. When compaction or clear rewrites the
// transcript, the file is replaced atomically: the new transcript is
// written to a temporary file in the same directory, synced, and renamed
// over the old one, so earlier text leaves the disk and the file shrinks.
// Files of older versions, with {"reset":true} lines instead and no
// header, still load.
//
// A torn last line (a crash or a full disk mid-write) is ignored when the
// file is loaded and cut away when it is opened, and a write that fails
// is undone, so the next message always starts a line of its own. Tool
// calls whose results never reached the file are answered with error
// results on load, so the transcript stays valid.
//
// One process at a time writes a session file: Open takes an exclusive
// lock on the sidecar file <file>.lock (not on the file itself, which a
// rewrite replaces) and fails with ErrLocked when another holds it.
package sessionfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/llm"
)

// ErrLocked is the error Open reports, wrapped with the file's name, when
// another process has the session file open.
var ErrLocked = errors.New("another zot holds it; only one zot at a time may use a session file")

// Options are the settings of Open.
type Options struct {
	// CWD is the working directory of the session, recorded in the
	// header of a new file.
	CWD string
	// Parent is the id of the session a new file was forked from; empty
	// for a session that was not forked. ForkIndex is the position in
	// the parent's transcript (from 0) of the message it was forked at,
	// and ForkMessage that message's id (MessageID): the new session holds
	// the parent's messages before it. Both are recorded only with Parent.
	Parent      string
	ForkIndex   int
	ForkMessage string
	// ParentCall, with Parent, makes the new file a sub-agent's session:
	// the id of the parent's task call that started it (no fork point).
	ParentCall string
	// Owner is the principal a new file belongs to (a token's name on
	// the daemon's network listener), recorded in its header; empty for
	// the user whose zot home holds it.
	Owner string
}

// File is an open session file. Its methods may be called from several
// goroutines.
type File struct {
	path string
	lock *os.File // the held lock on path+".lock"
	// lines holds the line of the file of each message Open returned,
	// from 1 (see Line).
	lines []int

	mu  sync.Mutex
	f   *os.File // open for appending; nil once closed, or after a failed rewrite
	hdr header
	// size is the length of the file as this File wrote it: everything
	// past it is a write that failed.
	size int64
	// saved is the transcript as the file holds it; gen is the version
	// SaveVersion was given with it (when known).
	saved []llm.Message
	gen   uint64
	known bool
	// stale means the file may not end where size says (a failed write
	// could not be undone, or a rewrite could not reopen the file): the
	// next Save rewrites it whole.
	stale  bool
	closed bool
	// dirty means lines were written since the last sync.
	dirty bool
	// syncing is set while SyncLater's goroutine runs, again when it must
	// sync once more; syncDone is closed when it ends; syncErr is the
	// error of its last sync, reported by Close; synced is when SyncLater's
	// goroutine last synced; hurry is closed by Close, which ends the
	// goroutine's wait for SyncGap to pass.
	syncing, again bool
	syncDone       chan struct{}
	syncErr        error
	synced         time.Time
	hurry          chan struct{}
	// write writes b to w; tests replace it to fail like a full disk.
	write func(w *os.File, b []byte) (int, error)
	// wait waits d or until hurry is closed; tests replace it.
	wait func(d time.Duration, hurry <-chan struct{})
}

// SyncGap is the least time between two syncs of SyncLater's: a file is
// synced at most this long after the SyncLater call that asked for it.
const SyncGap = 100 * time.Millisecond

// Line returns the line of the file that held message i of the
// transcript Open returned, from 1; 0 for a message no line held (a
// result Open made up for a call whose result was never saved).
func (s *File) Line(i int) int {
	if i < 0 || i >= len(s.lines) {
		return 0
	}
	return s.lines[i]
}

// Open opens (creating it, mode 0600, and its directory if needed) the
// session file at path, locks it for this process, cuts away a torn last
// line, and returns it with the transcript it holds. It fails with an
// error wrapping ErrLocked when another process has the file open.
func Open(path string, opt Options) (*File, []llm.Message, error) {
	// Refused before the lock file is made beside it (/dev/full.lock).
	if st, err := os.Stat(path); err == nil {
		if err := checkRegular(path, st); err != nil {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("session directory: %w", err)
	}
	lock, err := lockFile(path + ".lock")
	if errors.Is(err, errHeld) {
		return nil, nil, fmt.Errorf("session file %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("locking session file %s: %w", path, err)
	}
	s, msgs, err := openLocked(path, opt)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	s.lock = lock
	return s, msgs, nil
}

// openLocked is Open once the lock is held.
func openLocked(path string, opt Options) (*File, []llm.Message, error) {
	c, err := readContents(path)
	var corrupt *CorruptError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c = contents{} // a new session
	case errors.As(err, &corrupt):
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("reading session: %w", err)
	}
	// A path made a named pipe since it was read fails to open (no reader)
	// instead of blocking; anything else not regular is refused here.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|openNonblock, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening session: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = checkRegular(path, st)
		}
		return nil, nil, fmt.Errorf("opening session: %w", err)
	}
	s := &File{path: path, f: f, size: int64(c.end), saved: c.msgs, lines: c.lines, hurry: make(chan struct{})}
	if c.hdr != nil {
		s.hdr = *c.hdr
	} else {
		s.hdr = newHeader(opt)
	}
	var fix []byte
	switch {
	case c.end == 0:
		fix = s.hdr.line() // a new file, or one that held only a torn line
	case !c.endsLine:
		fix = []byte("\n") // a last line complete but for its newline
	}
	if c.end < c.size {
		if err := f.Truncate(int64(c.end)); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("cutting the torn last line of %s: %w", path, err)
		}
	}
	if len(fix) > 0 || c.end < c.size {
		_, err := f.Write(fix)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("writing session: %w", err)
		}
		s.size += int64(len(fix))
	}
	return s, answerDangling(c.msgs), nil
}

// Load reads the transcript of a session file. A torn last line is
// ignored, and tool calls left without results at the end of the file
// are answered with error results.
func Load(path string) ([]llm.Message, error) {
	c, err := readContents(path)
	if err != nil {
		return nil, err
	}
	return answerDangling(c.msgs), nil
}

// Save brings the file up to date with the transcript msgs: the messages
// added since the last Save are appended; when earlier messages changed
// (compaction, clear), the file is replaced by one holding msgs. Appended
// lines are written before Save returns (a kill of the process then loses
// none) but not synced to the disk: Sync or SyncLater does that. A
// replaced file is synced, and renamed into place, before Save returns.
// When Save fails, the file holds what it held before, and the next Save
// tries again.
func (s *File) Save(msgs []llm.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.save(msgs, 0, false)
}

// SaveVersion is Save for a caller that numbers the versions of its
// transcript: gen changes whenever msgs changes other than by messages
// appended to it. While gen is that of the last save, msgs is taken to
// extend what the file holds, and Save's check of that, a walk over the
// whole transcript at every message, is skipped.
func (s *File) SaveVersion(msgs []llm.Message, gen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.save(msgs, gen, true)
}

// save is Save (known false) and SaveVersion. The caller holds s.mu.
func (s *File) save(msgs []llm.Message, gen uint64, known bool) error {
	if s.closed {
		return fmt.Errorf("session %s: %w", s.path, os.ErrClosed)
	}
	appended := known && s.known && gen == s.gen && len(msgs) >= len(s.saved)
	if s.stale || s.f == nil || (!appended && !extends(msgs, s.saved)) {
		if err := s.rewrite(msgs); err != nil {
			return err
		}
		s.gen, s.known = gen, known
		return nil
	}
	s.gen, s.known = gen, known
	if len(msgs) == len(s.saved) {
		return nil
	}
	buf, err := encodeLines(msgs[len(s.saved):])
	if err != nil {
		return err
	}
	err = s.writeTo(s.f, buf)
	if err != nil {
		// Undo what part of the write landed, so that the next one
		// does not glue onto a torn line; failing that, rewrite.
		if terr := s.f.Truncate(s.size); terr != nil {
			s.stale = true
		}
		return fmt.Errorf("writing session: %w", err)
	}
	s.size += int64(len(buf))
	// Only the new messages are copied: msgs is not kept, and saving a
	// message costs the same however long the conversation is.
	s.saved = append(s.saved, msgs[len(s.saved):]...)
	s.dirty = true
	return nil
}

// Sync flushes what Save wrote to the disk (fsync), when anything is
// unsynced. Saves may go on while it waits on the disk.
func (s *File) Sync() error {
	s.mu.Lock()
	f := s.f
	if !s.dirty || f == nil {
		s.mu.Unlock()
		return nil
	}
	s.dirty = false
	s.mu.Unlock()
	err := f.Sync()
	if err == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != f {
		// Replaced meanwhile by a rewrite, which synced what it wrote.
		return nil
	}
	s.dirty = true
	return fmt.Errorf("syncing session %s: %w", s.path, err)
}

// SyncLater syncs the file (see Sync) in a goroutine of its own and
// returns at once: at once when the goroutine last synced SyncGap ago or
// more, else when SyncGap has passed since then. A call while that
// goroutine waits or syncs makes it sync once more, after its gap: calls
// in quick succession share a sync. Close ends the wait, syncs, and
// reports the last error.
func (s *File) SyncLater() {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed || !s.dirty:
	case s.syncing:
		s.again = true
	default:
		s.syncing = true
		s.syncDone = make(chan struct{})
		go s.syncLoop(s.syncDone)
	}
}

// syncLoop is SyncLater's goroutine: it waits out the gap since its last
// sync (cut short by Close), syncs, and goes round again when asked to
// after the sync began.
func (s *File) syncLoop(done chan struct{}) {
	defer close(done)
	for {
		s.mu.Lock()
		gap := SyncGap - time.Since(s.synced)
		s.mu.Unlock()
		if gap > 0 {
			s.waitFor(gap)
		}
		s.mu.Lock()
		s.again = false // this sync covers what was written until now
		s.mu.Unlock()
		err := s.Sync()
		s.mu.Lock()
		s.synced = time.Now()
		s.syncErr = err
		if !s.again || s.closed {
			s.syncing = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// waitFor waits d, or until Close.
func (s *File) waitFor(d time.Duration) {
	if s.wait != nil {
		s.wait(d, s.hurry)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.hurry:
	}
}

// rewrite replaces the file with one holding the header and msgs: it
// writes a temporary file in the same directory, syncs it, renames it
// over the file, syncs the directory and reopens the file for appending.
// Until the rename, the old file is untouched.
func (s *File) rewrite(msgs []llm.Message) error {
	body, err := encodeLines(msgs)
	if err != nil {
		return err
	}
	buf := append(s.hdr.line(), body...)
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("rewriting session: %w", err)
	}
	err = s.writeTo(tmp, buf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rewriting session: %w", err)
	}
	// Close before the rename: Windows renames no file that is open.
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	renameErr := os.Rename(tmp.Name(), s.path)
	if renameErr != nil {
		os.Remove(tmp.Name())
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		s.stale = true
		return fmt.Errorf("reopening session: %w", err)
	}
	s.f = f
	if renameErr != nil {
		return fmt.Errorf("rewriting session: %w", renameErr)
	}
	s.size = int64(len(buf))
	s.saved = slices.Clone(msgs)
	s.stale = false
	s.dirty = false
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing session directory: %w", err)
	}
	return nil
}

// writeTo writes all of b to w.
func (s *File) writeTo(w *os.File, b []byte) error {
	write := s.write
	if write == nil {
		write = (*os.File).Write
	}
	_, err := write(w, b)
	return err
}

// encodeLines encodes msgs, one line each.
// The lines are encoded first and joined once, at their size: a huge
// message is not copied again and again as a buffer grows.
func encodeLines(msgs []llm.Message) ([]byte, error) {
	lines := make([][]byte, 0, len(msgs))
	n := 0
	for _, m := range msgs {
		line, err := encodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("encoding message: %w", err)
		}
		lines = append(lines, line)
		n += len(line) + 1
	}
	if len(lines) == 1 {
		return append(lines[0], '\n'), nil
	}
	buf := make([]byte, 0, n)
	for i, line := range lines {
		buf = append(append(buf, line...), '\n')
		lines[i] = nil
	}
	return buf, nil
}

// extends reports whether msgs begins with saved, message for message.
func extends(msgs, saved []llm.Message) bool {
	if len(msgs) < len(saved) {
		return false
	}
	for i := range saved {
		a, b := msgs[i], saved[i]
		if a.Role != b.Role || !a.Time.Equal(b.Time) || len(a.Content) != len(b.Content) {
			return false
		}
		for j := range a.Content {
			if a.Content[j] != b.Content[j] {
				return false
			}
		}
	}
	return true
}

// Close syncs what is unsynced, closes the file and releases its lock.
// Closing twice is a no-op.
func (s *File) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.hurry)
	done := s.syncDone
	s.mu.Unlock()
	if done != nil {
		<-done // SyncLater's goroutine, which syncs at once and stops
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.syncErr
	if s.f != nil && s.dirty {
		if serr := s.f.Sync(); serr != nil {
			err = fmt.Errorf("syncing session %s: %w", s.path, serr)
		}
	}
	if s.f != nil {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
		s.f = nil
	}
	if s.lock != nil {
		if lerr := s.lock.Close(); err == nil {
			err = lerr
		}
	}
	return err
}

// Path returns the file's path.
func (s *File) Path() string { return s.path }

// DirFor returns the directory under home that holds the sessions of the
// working directory cwd: a readable name made from the end of the path,
// then a hash of the whole cleaned path, so that two directories never
// share one (/x/proj and /x-proj, say).
func DirFor(home, cwd string) string {
	clean := filepath.Clean(cwd)
	sum := sha256.Sum256([]byte(clean))
	return filepath.Join(home, "sessions", slug(clean)+"-"+hex.EncodeToString(sum[:6]))
}

// slug is the last few dozen letters, digits, dots and underscores of
// path, each other run of characters turned into a dash.
func slug(path string) string {
	const keep = 48
	var b strings.Builder
	for _, r := range path {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_'):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > keep {
		s = s[len(s)-keep:]
	}
	if s = strings.TrimLeft(s, "-."); s == "" {
		s = "root"
	}
	return s
}

// Newest returns the most recently modified session file in dir, or a
// new file name there (stamped with now) when it has none.
func Newest(dir string, now time.Time) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("listing sessions: %w", err)
	}
	type cand struct {
		path string
		mod  time.Time
	}
	var cands []cand
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		cands = append(cands, cand{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	if len(cands) == 0 {
		return filepath.Join(dir, now.UTC().Format("20060102T150405Z")+".jsonl"), nil
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod.After(cands[j].mod) })
	return cands[0].path, nil
}
