package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A command (bash) may change any file, so the files it touched are found
// by asking git, in the git work tree of the folder the command starts
// in: before the command, the paths git reports as changed or untracked
// (`git status`) are read; after it, git is asked again, and a path is
// taken as touched by the command when it is reported now and was not
// before (a clean file is then what the commit before held), when what it
// holds differs from what was read before, or when HEAD moved and the
// path differs between the two commits. Not seen: files git ignores,
// files outside the work tree, and a clean file that bash changed and put
// back as it was.

// gitTimeout bounds each git call.
const gitTimeout = 10 * time.Second

// ctimeSlack is how long before the snapshot a file's change time must be
// for the file to count as unchanged by the command: file systems stamp
// changes with a coarse clock.
const ctimeSlack = 50 * time.Millisecond

// GitSnapshot is the state of a git work tree before a command ran.
type GitSnapshot struct {
	root  string
	head  string // the commit HEAD named; "" in a repository without one
	taken time.Time
	dirty map[string]snapFile // by path relative to root
}

// snapFile is one changed or untracked path as the snapshot found it.
type snapFile struct {
	st      State
	content []byte
}

// git runs git in dir and returns its output.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// status returns the changed and untracked paths of the work tree at
// root, relative to it, and the commit HEAD names ("" when none).
func status(ctx context.Context, root string) (map[string]bool, string, error) {
	out, err := git(ctx, root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames", "--ignore-submodules=all")
	if err != nil {
		return nil, "", err
	}
	paths := map[string]bool{}
	head := ""
	for _, e := range bytes.Split(out, []byte{0}) {
		line := string(e)
		switch {
		case strings.HasPrefix(line, "# branch.oid "):
			if oid := strings.TrimPrefix(line, "# branch.oid "); oid != "(initial)" {
				head = oid
			}
		case strings.HasPrefix(line, "1 "):
			if f := strings.SplitN(line, " ", 9); len(f) == 9 {
				paths[f[8]] = true
			}
		case strings.HasPrefix(line, "u "):
			if f := strings.SplitN(line, " ", 11); len(f) == 11 {
				paths[f[10]] = true
			}
		case strings.HasPrefix(line, "? "):
			paths[line[2:]] = true
		}
	}
	return paths, head, nil
}

// SnapshotGit reads the git work tree of dir before a command runs in it;
// nil when dir is in none (or git is not installed, or fails).
func (s *Store) SnapshotGit(ctx context.Context, dir string) *GitSnapshot {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	taken := time.Now()
	root := s.workTree(ctx, dir)
	if root == "" {
		return nil
	}
	paths, head, err := status(ctx, root)
	if err != nil {
		return nil
	}
	snap := &GitSnapshot{root: root, head: head, taken: taken, dirty: make(map[string]snapFile, len(paths))}
	budget := s.lim.Session
	for p := range paths {
		abs := filepath.Join(root, filepath.FromSlash(p))
		st, content, err := s.stat(abs, budget > 0)
		if err != nil {
			continue
		}
		budget -= int64(len(content))
		snap.dirty[p] = snapFile{st: st, content: content}
	}
	return snap
}

// workTree returns the top of the git work tree dir is in, "" when it is
// in none. Git is asked only when a folder on the way up has a .git, and
// once per folder.
func (s *Store) workTree(ctx context.Context, dir string) string {
	s.mu.Lock()
	root, ok := s.roots[dir]
	s.mu.Unlock()
	if ok {
		if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
			return root
		}
	}
	found := false
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			found = true
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if !found {
		return ""
	}
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	root = strings.TrimSpace(string(out))
	s.mu.Lock()
	if s.roots == nil {
		s.roots = map[string]string{}
	}
	s.roots[dir] = root
	s.mu.Unlock()
	return root
}

// AfterGit records, as changes of turn t, what the command that ran since
// snap changed in its work tree: each touched file's state before (unless
// t changed it before) and after.
func (s *Store) AfterGit(ctx context.Context, t Turn, snap *GitSnapshot) error {
	if snap == nil {
		return nil
	}
	paths, head, err := status(ctx, snap.root)
	if err != nil {
		return err
	}
	for p := range snap.dirty {
		paths[p] = true
	}
	if head != snap.head && snap.head != "" && head != "" {
		out, err := git(ctx, snap.root, "diff", "--name-only", "-z", "--no-renames", snap.head, head)
		if err == nil {
			for _, p := range bytes.Split(out, []byte{0}) {
				if len(p) > 0 {
					paths[string(p)] = true
				}
			}
		}
	}
	var errs error
	for p := range paths {
		abs := filepath.Join(snap.root, filepath.FromSlash(p))
		now, _, err := s.stat(abs, false)
		if err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		was, known := snap.dirty[p]
		if known {
			if was.st.same(now) {
				continue
			}
		} else {
			if now.Exists && changedBefore(abs, snap.taken) {
				// Reported only now, but untouched since before the
				// command: it was ignored before, say.
				continue
			}
			was, err = s.committed(ctx, snap, p, abs)
			if err != nil {
				errs = errors.Join(errs, err)
				continue
			}
			if was.st.same(now) {
				continue
			}
		}
		if err := s.before(t, abs, was.st, was.content); err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		errs = errors.Join(errs, s.after(t, abs, now))
	}
	return errs
}

// committed is the state of path p (relative to the work tree) in the
// commit before the command: what a file git reported clean held. A path
// not in that commit did not exist.
func (s *Store) committed(ctx context.Context, snap *GitSnapshot, p, abs string) (snapFile, error) {
	if snap.head == "" {
		return snapFile{st: State{Kept: true}}, nil
	}
	if _, err := git(ctx, snap.root, "cat-file", "-e", snap.head+":"+p); err != nil {
		return snapFile{st: State{Kept: true}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", snap.root, "cat-file", "blob", snap.head+":"+p)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	w := &limited{h: sha256.New(), max: s.lim.File}
	cmd.Stdout = w
	if err := cmd.Run(); err != nil {
		return snapFile{}, fmt.Errorf("reading %s as committed: %w", p, err)
	}
	st := State{Exists: true, Hash: hex.EncodeToString(w.h.Sum(nil)), Size: w.n, Mode: 0o644}
	if fi, err := os.Lstat(abs); err == nil {
		st.Mode = fi.Mode().Perm()
	}
	if w.over {
		st.Why = fmt.Sprintf("larger than the %s a checkpoint keeps of one file", size(s.lim.File))
		return snapFile{st: st}, nil
	}
	st.Kept = true
	return snapFile{st: st, content: w.buf.Bytes()}, nil
}

// limited hashes everything written to it and keeps up to max bytes.
type limited struct {
	h    hash.Hash
	buf  bytes.Buffer
	n    int64
	max  int64
	over bool
}

// Write hashes p and keeps it while the total stays within max.
func (w *limited) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.n += int64(len(p))
	if w.n > w.max {
		w.over = true
		w.buf = bytes.Buffer{}
	} else {
		w.buf.Write(p)
	}
	return len(p), nil
}
