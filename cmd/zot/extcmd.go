package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// extCommand is `zot ext`: installing, listing, switching on and off and
// debugging the user's extensions ($ZOT_HOME/extensions) and the
// project's (./.zot/extensions).
func extCommand(std streams) *cli.Command {
	noArgs := func(cmd *cli.Command, n int, usage string) error {
		if cmd.Args().Len() != n {
			return usagef("usage: zot ext %s", usage)
		}
		return onlyFlags(cmd, "zot ext "+cmd.Name, []string{"cwd", "follow", "force", "timeout"})
	}
	return &cli.Command{
		Name:            "ext",
		HideHelpCommand: true,
		Usage:           "manage extensions: list, install, remove, enable, disable, logs, doctor (see docs/extensions.md)",
		Description: `Extensions live in $ZOT_HOME/extensions/<name>/ (the user's, where install puts
them) and ./.zot/extensions/<name>/ (the project's, --cwd sets the project).
Each one's stderr and zot's notes about it go to $ZOT_HOME/logs/ext-<name>.log.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q for zot ext", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:            "list",
				HideHelpCommand: true,
				Usage:           "list the installed extensions and whether they are enabled and trusted (--json: a JSON array for programs)",
				Description: `Lists the extensions a session in --cwd would find: those named by --ext
(source "flag"), the project's (./.zot/extensions) and the user's
($ZOT_HOME/extensions), in load order. --json prints them as a JSON array.`,
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 0 {
						return usagef("usage: zot ext list [--ext PATH]... [--json]")
					}
					if err := onlyFlags(cmd, "zot ext list", []string{"cwd", "ext", "json"}); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.list(cmd.StringSlice("ext"), cmd.Bool("json"), projectTrust(cmd, std.err), std.out)
				},
			},
			{
				Name:            "install",
				HideHelpCommand: true,
				Usage:           "install an extension from a folder or a git URL into $ZOT_HOME/extensions/<name>",
				ArgsUsage:       "<path|git-url>",
				Flags:           []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "replace an installed extension of the same name"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if err := noArgs(cmd, 1, "install <path|git-url>"); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.install(ctx, cmd.Args().First(), cmd.Bool("force"), std.out)
				},
			},
			{
				Name:            "remove",
				Aliases:         []string{"rm"},
				HideHelpCommand: true,
				Usage:           "delete an installed extension's folder",
				ArgsUsage:       "<name>",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if err := noArgs(cmd, 1, "remove <name>"); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.remove(cmd.Args().First(), std.out)
				},
			},
			{
				Name:            "enable",
				HideHelpCommand: true,
				Usage:           "enable a disabled extension (sets \"enabled\": true in its manifest)",
				ArgsUsage:       "<name>",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if err := noArgs(cmd, 1, "enable <name>"); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.setEnabled(cmd.Args().First(), true, std.out)
				},
			},
			{
				Name:            "disable",
				HideHelpCommand: true,
				Usage:           "disable an extension without removing it (sets \"enabled\": false)",
				ArgsUsage:       "<name>",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if err := noArgs(cmd, 1, "disable <name>"); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.setEnabled(cmd.Args().First(), false, std.out)
				},
			},
			{
				Name:            "logs",
				HideHelpCommand: true,
				Usage:           "print an extension's log; -f follows it until interrupted",
				ArgsUsage:       "<name>",
				Flags:           []cli.Flag{&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what is appended"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if err := noArgs(cmd, 1, "logs <name> [-f]"); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.logs(ctx, cmd.Args().First(), cmd.Bool("follow"), std.out)
				},
			},
			{
				Name:            "doctor",
				HideHelpCommand: true,
				Usage:           "start every extension, check its handshake and say what is wrong (a project's only when the folder is trusted, or with --trust-project)",
				Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout", Value: exthost.DefaultStartTimeout,
					Usage: "how long an extension has to say hello (its manifest's start_timeout_ms when longer)"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 0 {
						return usagef("usage: zot ext doctor [--timeout D] [--trust-project]")
					}
					if err := onlyFlags(cmd, "zot ext doctor", []string{"cwd", "timeout", "trust-project"}); err != nil {
						return err
					}
					x, err := newExtDirs(cmd, std)
					if err != nil {
						return err
					}
					return x.doctor(ctx, cmd.Duration("timeout"), projectTrust(cmd, std.err), std.out)
				},
			},
		},
	}
}

// extDirs are the folders `zot ext` works on.
type extDirs struct {
	global  string // $ZOT_HOME/extensions
	project string // CWD/.zot/extensions
	logDir  string // $ZOT_HOME/logs
	cwd     string
}

func newExtDirs(cmd *cli.Command, std streams) (*extDirs, error) {
	h, err := zotHome(std.err)
	if err != nil {
		return nil, err
	}
	cwd := cmd.String("cwd")
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return nil, err
	}
	return &extDirs{global: h.Extensions(), project: filepath.Join(cwd, ".zot", "extensions"), logDir: h.Logs(), cwd: cwd}, nil
}

// extEntry is one extension folder.
type extEntry struct {
	scope  string // "project" or "user"
	dir    string
	file   string
	name   string // the manifest's name, else the folder's
	spec   exthost.Spec
	err    error // the manifest cannot be used
	shadow bool  // a project extension of the same name wins
	// untrusted: a project extension of a folder not trusted, which no
	// session starts (set by list only).
	untrusted bool
}

func (e extEntry) enabled() bool {
	return e.err == nil && (e.spec.Manifest.Enabled == nil || *e.spec.Manifest.Enabled)
}

// scan lists the extension folders of dir, in name order.
func scan(dir, scope string) ([]extEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("extension folder %s: %w", dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var out []extEntry
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), ".") {
			continue // install's and remove's temporary folders
		}
		folder := filepath.Join(dir, de.Name())
		file := filepath.Join(folder, exthost.ManifestFile)
		if !exthost.ManifestPresent(file) {
			continue // a folder without a manifest; a dangling one is listed, invalid
		}
		e := extEntry{scope: scope, dir: folder, file: file, name: de.Name()}
		e.spec, _, e.err = exthost.ReadManifest(file)
		if e.err == nil {
			e.name = e.spec.Name()
		}
		out = append(out, e)
	}
	return out, nil
}

// all lists the project's extensions, then the user's, marking those
// that an extension of the same name before them shadows.
func (x *extDirs) all() ([]extEntry, error) {
	proj, err := scan(x.project, "project")
	if err != nil {
		return nil, err
	}
	user, err := scan(x.global, "user")
	if err != nil {
		return nil, err
	}
	all := append(proj, user...)
	markShadowed(all)
	return all, nil
}

// find returns the extension called name: the user's, else the
// project's.
func (x *extDirs) find(name string) (extEntry, error) {
	all, err := x.all()
	if err != nil {
		return extEntry{}, err
	}
	var proj *extEntry
	for i, e := range all {
		if e.name != name && filepath.Base(e.dir) != name {
			continue
		}
		if e.scope == "user" {
			return e, nil
		}
		if proj == nil {
			proj = &all[i]
		}
	}
	if proj != nil {
		return *proj, nil
	}
	return extEntry{}, fmt.Errorf("no extension named %q in %s or %s (zot ext list shows them)", name, x.global, x.project)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isGitURL says whether src names a git repository rather than a folder.
func isGitURL(src string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git://", "file://", "git@"} {
		if strings.HasPrefix(src, p) {
			return true
		}
	}
	return strings.HasSuffix(src, ".git")
}

// install copies or clones src into a temporary folder beside the
// target, checks the manifest there, and only then renames it into
// place; any failure removes the temporary folder and leaves the
// extensions as they were.
func (x *extDirs) install(ctx context.Context, src string, force bool, w io.Writer) (err error) {
	if err := os.MkdirAll(x.global, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", x.global, err)
	}
	tmp, err := os.MkdirTemp(x.global, ".install-")
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if st, serr := os.Stat(src); serr == nil {
		if !st.IsDir() {
			src = filepath.Dir(src) // the manifest itself
		}
		abs, err := filepath.Abs(src)
		if err != nil {
			return fmt.Errorf("install %s: %w", src, err)
		}
		if rel, err := filepath.Rel(abs, x.global); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("install %s: it holds the extensions folder %s itself", src, x.global)
		}
		if err := copyTree(src, tmp); err != nil {
			return fmt.Errorf("install %s: copying: %w", src, err)
		}
	} else if isGitURL(src) {
		if err := gitClone(ctx, src, tmp); err != nil {
			return fmt.Errorf("install %s: %w", src, err)
		}
	} else {
		return fmt.Errorf("install %s: no such folder, and not a git URL", src)
	}
	spec, warnings, err := exthost.ReadManifest(filepath.Join(tmp, exthost.ManifestFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("install %s: not an extension: no %s at its top", src, exthost.ManifestFile)
		}
		return fmt.Errorf("install %s: %s", src, strings.ReplaceAll(err.Error(), tmp, "<"+src+">"))
	}
	name := spec.Name()
	if !exthost.SafeName(name) {
		return fmt.Errorf("install %s: the extension's name %q cannot name a folder (use letters, digits, '.', '_' and '-')", src, name)
	}
	if err := checkExec(spec); err != nil {
		return fmt.Errorf("install %s: %w", src, err)
	}
	if gitDir := filepath.Join(tmp, ".git"); isGitURL(src) {
		os.RemoveAll(gitDir) // a shallow clone's history is of no use installed
	}
	target := filepath.Join(x.global, name)
	if _, serr := os.Lstat(target); serr == nil {
		if !force {
			return fmt.Errorf("install %s: extension %s is already installed in %s (zot ext remove %s first, or install --force)", src, name, target, name)
		}
		old := filepath.Join(x.global, ".old-"+filepath.Base(tmp))
		if err := os.Rename(target, old); err != nil {
			return fmt.Errorf("install %s: moving the old copy aside: %w", src, err)
		}
		if err := os.Rename(tmp, target); err != nil {
			if rerr := os.Rename(old, target); rerr != nil {
				err = errors.Join(err, fmt.Errorf("restoring the old copy from %s: %w", old, rerr))
			}
			return fmt.Errorf("install %s: %w", src, err)
		}
		os.RemoveAll(old)
	} else if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("install %s: %w", src, err)
	}
	for _, wn := range warnings {
		fmt.Fprintln(w, "warning:", strings.ReplaceAll(wn, tmp, target))
	}
	if m := spec.Manifest; !strings.ContainsRune(m.Exec, '/') && !filepath.IsAbs(m.Exec) {
		if _, err := exec.LookPath(m.Exec); err != nil {
			fmt.Fprintf(w, "warning: %s runs %q, which is not on PATH; it will not start until it is\n", name, m.Exec)
		}
	}
	v := ""
	if spec.Manifest.Version != "" {
		v = " " + spec.Manifest.Version
	}
	fmt.Fprintf(w, "installed %s%s in %s\n", name, v, target)
	return nil
}

// checkExec fails when the manifest's exec is a path that is not an
// executable file (a Go extension not yet built, say).
func checkExec(spec exthost.Spec) error {
	m := spec.Manifest
	if !strings.ContainsRune(m.Exec, '/') && !filepath.IsAbs(m.Exec) {
		return nil // a program looked up in PATH at start
	}
	st, err := os.Stat(spec.Exec)
	switch {
	case err != nil:
		hint := ""
		if m.Language == "go" {
			hint = " (build it first: go build -o " + m.Exec + " .)"
		}
		return fmt.Errorf("exec %s does not exist in the extension%s", m.Exec, hint)
	case st.IsDir():
		return fmt.Errorf("exec %s is a folder, not a program", m.Exec)
	case st.Mode()&0o111 == 0:
		return fmt.Errorf("exec %s is not executable (chmod +x it)", m.Exec)
	}
	return nil
}

// copyTree copies the folder src into the existing folder dst: folders,
// regular files with their modes, and symbolic links as links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case rel == ".":
			return nil
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", rel)
		}
		return copyFile(path, to, info.Mode().Perm())
	})
}

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// gitClone makes a shallow clone of url in the empty folder dir.
func gitClone(ctx context.Context, url, dir string) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return errors.New("installing from a git URL needs git on PATH")
	}
	cmd := exec.CommandContext(ctx, git, "clone", "--depth", "1", "--quiet", "--", url, dir)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("git clone failed: %s", msg)
	}
	return nil
}

func (x *extDirs) remove(name string, w io.Writer) error {
	e, err := x.find(name)
	if err != nil {
		return err
	}
	if e.scope != "user" {
		return fmt.Errorf("extension %s is the project's (%s), not installed: delete its folder yourself if you mean to", name, e.dir)
	}
	// Rename first, so that the extension is gone at once even when
	// deleting its files takes a while or fails halfway.
	gone := filepath.Join(x.global, ".remove-"+filepath.Base(e.dir))
	if err := os.Rename(e.dir, gone); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("remove %s: deleting %s: %w", name, gone, err)
	}
	fmt.Fprintf(w, "removed %s (%s)\n", e.name, e.dir)
	return nil
}

func (x *extDirs) setEnabled(name string, on bool, w io.Writer) error {
	e, err := x.find(name)
	if err != nil {
		return err
	}
	if e.err != nil {
		return fmt.Errorf("cannot change extension %s: %w", name, e.err)
	}
	word := map[bool]string{true: "enabled", false: "disabled"}[on]
	if e.enabled() == on {
		fmt.Fprintf(w, "%s is already %s\n", e.name, word)
		return nil
	}
	data, err := os.ReadFile(e.file)
	if err != nil {
		return err
	}
	out, err := setJSONBool(data, "enabled", on)
	if err != nil {
		return fmt.Errorf("%s: %w", e.file, err)
	}
	if err := extwire.ValidateManifest(out); err != nil {
		var ve *extwire.ValidationError
		if !errors.As(err, &ve) || !onlyUnknownKeys(ve) {
			return fmt.Errorf("%s: the edited manifest would be invalid: %w", e.file, err)
		}
	}
	if err := writeFileAtomic(e.file, out); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %s (%s)\n", word, e.name, e.file)
	return nil
}

func onlyUnknownKeys(ve *extwire.ValidationError) bool {
	for _, p := range ve.Problems {
		if !strings.Contains(p, "additional propert") {
			return false
		}
	}
	return true
}

// setJSONBool sets the top-level key of the JSON object data to v,
// keeping every other byte (key order, spacing) as it was: the value is
// replaced where it is, or the key is added at the end.
func setJSONBool(data []byte, key string, v bool) ([]byte, error) {
	val := []byte(fmt.Sprint(v))
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("the manifest is not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		afterKey := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if k != key {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		if start < afterKey {
			return nil, errors.New("cannot find the value to change")
		}
		return slices.Concat(data[:start], val, data[end:]), nil
	}
	end := bytes.LastIndexByte(data, '}')
	body := bytes.TrimRight(data[:end], " \t\r\n")
	sep := ", "
	indent := ""
	if bytes.ContainsRune(data, '\n') {
		sep, indent = ",\n", "  "
		if i := bytes.Index(data, []byte("\n")); i >= 0 {
			line := data[i+1:]
			indent = string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
		}
	}
	if bytes.HasSuffix(body, []byte("{")) {
		sep = ""
	}
	add := fmt.Sprintf("%s%s%q: %s", sep, indent, key, val)
	tail := data[len(body):]
	return slices.Concat(body, []byte(add), tail), nil
}

// writeFileAtomic replaces file with data through a temporary file in
// its folder, keeping its mode.
func writeFileAtomic(file string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(file), ".manifest-")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), file); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// logs prints the extension's log; with follow it then prints what is
// appended until ctx ends, starting over when the file is truncated or
// replaced.
func (x *extDirs) logs(ctx context.Context, name string, follow bool, w io.Writer) error {
	file := exthost.LogFile(x.logDir, name)
	var off int64
	var ino os.FileInfo
	copyNew := func() error {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() < off || (ino != nil && !os.SameFile(ino, st)) {
			off = 0 // truncated or replaced
		}
		ino = st
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		n, err := io.Copy(w, f)
		off += n
		return err
	}
	err := copyNew()
	if errors.Is(err, fs.ErrNotExist) {
		if !follow {
			return fmt.Errorf("no log for extension %s yet (%s): it has not been started", name, file)
		}
		err = nil
	}
	if err != nil || !follow {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := copyNew(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
}

// doctorSession is the session the doctor starts extensions for: a tool
// set and an interceptor chain of their own, no agent.
type doctorSession struct {
	tools *agent.ToolSet
	chain *agent.Chain
	cwd   string
}

func (s *doctorSession) Tools() *agent.ToolSet                  { return s.tools }
func (s *doctorSession) Interceptors() *agent.Chain             { return s.chain }
func (s *doctorSession) Observe(func(wire.Event)) (stop func()) { return func() {} }
func (s *doctorSession) Provider() string                       { return "" }
func (s *doctorSession) Model() string                          { return "" }
func (s *doctorSession) CWD() string                            { return s.cwd }

// doctor checks every extension: its manifest, its program, and its
// handshake through the real host, one at a time, and says in plain
// words what is wrong.
//
// The project's extensions are started only in a folder the gate
// trusts, as a session starts them: opening someone else's repository
// and asking what is wrong with it must not run its code. In a folder
// it does not trust they are checked without being started, and said to
// be untrusted, with how to trust the folder.
func (x *extDirs) doctor(ctx context.Context, timeout time.Duration, gate *trust.Gate, w io.Writer) error {
	all, err := x.all()
	if err != nil {
		return err
	}
	if len(all) == 0 {
		fmt.Fprintf(w, "no extensions in %s or %s\n", x.global, x.project)
		return nil
	}
	var untrusted *trust.Decision
	if nproj := projectCount(all); nproj > 0 {
		if d := gate.Check(x.cwd); !d.Allowed {
			untrusted = &d
			// A session leaves the project's out, so the user's of the
			// same names run.
			markShadowed(all[nproj:])
		}
	}
	bad := 0
	for _, e := range all {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ok bool
		if e.scope == "project" && untrusted != nil {
			ok = x.checkUntrusted(e, *untrusted, w)
		} else {
			ok = x.check(ctx, e, timeout, w)
		}
		if !ok {
			bad++
		}
	}
	switch {
	case bad > 0 && len(all) == 1:
		return &exitError{code: 1, msg: "the extension has problems"}
	case bad == 1:
		return &exitError{code: 1, msg: fmt.Sprintf("1 of %d extensions has problems", len(all))}
	case bad > 0:
		return &exitError{code: 1, msg: fmt.Sprintf("%d of %d extensions have problems", bad, len(all))}
	case len(all) == 1:
		fmt.Fprintln(w, "the extension is fine")
	default:
		fmt.Fprintf(w, "all %d extensions are fine\n", len(all))
	}
	return nil
}

// projectCount is the number of the project's extensions, which come
// first in x.all's list.
func projectCount(all []extEntry) int {
	n := 0
	for n < len(all) && all[n].scope == "project" {
		n++
	}
	return n
}

// checkUntrusted reports a project extension of a folder the user does
// not trust: what can be seen without running it (its manifest, its
// runtime, its files), then that it is not started and how to trust the
// folder. An untrusted extension that would start counts as a problem:
// no session runs it.
func (x *extDirs) checkUntrusted(e extEntry, d trust.Decision, w io.Writer) bool {
	if ok, done := x.checkStatic(e, w); done {
		return ok
	}
	if d.Project.Foreign != "" {
		fmt.Fprintf(w, "✗ %s: not started: %s; zot ext doctor --trust-project checks them this once\n", e.label(), d.Reason())
		return false
	}
	fmt.Fprintf(w, "✗ %s: not started: %s, so no session runs its extensions; run %s to trust it, or zot ext doctor --trust-project to check them this once\n",
		e.label(), strings.Replace(d.Reason(), "the folder", "the folder "+d.Project.Dir, 1), d.TrustCommand())
	return false
}

// label names an extension in doctor's report.
func (e extEntry) label() string { return fmt.Sprintf("%s (%s, %s)", e.name, e.scope, e.dir) }

// checkStatic checks what can be checked of an extension without
// starting it, and reports it when that decides: done is set when the
// extension is bad, disabled or shadowed, ok says whether that is fine.
func (x *extDirs) checkStatic(e extEntry, w io.Writer) (ok, done bool) {
	fail := func(format string, args ...any) (bool, bool) {
		fmt.Fprintf(w, "✗ %s: %s\n", e.label(), fmt.Sprintf(format, args...))
		return false, true
	}
	label := e.label()
	switch {
	case e.err != nil:
		var me *exthost.ManifestError
		msg := e.err.Error()
		if errors.As(e.err, &me) {
			msg = me.Err.Error()
		}
		return fail("bad manifest %s: %s", e.file, msg)
	case !e.enabled():
		fmt.Fprintf(w, "- %s: disabled (zot ext enable %s)\n", label, e.name)
		return true, true
	case e.shadow:
		fmt.Fprintf(w, "- %s: shadowed by the project's extension of the same name\n", label)
		return true, true
	}
	m := e.spec.Manifest
	if !strings.ContainsRune(m.Exec, '/') && !filepath.IsAbs(m.Exec) {
		if _, err := exec.LookPath(m.Exec); err != nil {
			return fail("its runtime %q is not on PATH (install it, or fix \"exec\" in %s)", m.Exec, e.file)
		}
	} else if err := checkExec(e.spec); err != nil {
		return fail("%v", err)
	} else if rt := scriptRuntime(e.spec.Exec); rt != "" {
		if _, err := exec.LookPath(rt); err != nil {
			return fail("its runtime %q (named in the first line of %s) is not on PATH", rt, m.Exec)
		}
	}

	if cause := exthost.LikelyCause(e.spec); cause != "" {
		return fail("%s", cause)
	}
	return true, false
}

// check checks one extension, starting it through the host, and reports
// it; it returns false when something is wrong.
func (x *extDirs) check(ctx context.Context, e extEntry, timeout time.Duration, w io.Writer) bool {
	if ok, done := x.checkStatic(e, w); done {
		return ok
	}
	label := e.label()
	fail := func(format string, args ...any) bool {
		fmt.Fprintf(w, "✗ %s: %s\n", label, fmt.Sprintf(format, args...))
		return false
	}
	logFile := exthost.LogFile(x.logDir, e.name)
	var logStart int64
	if st, err := os.Stat(logFile); err == nil {
		logStart = st.Size()
	}
	ts, err := agent.NewToolSet(nil, nil)
	if err != nil {
		return fail("%v", err)
	}
	var hostLog bytes.Buffer
	h := exthost.New(&doctorSession{tools: ts, chain: new(agent.Chain), cwd: x.cwd}, exthost.Config{
		Discovery:        exthost.Discovery{Paths: []string{e.dir}},
		Version:          buildinfo.Version(),
		LogDir:           x.logDir,
		Log:              &hostLog,
		StartTimeout:     timeout,
		StartTimeoutName: "--timeout",
	})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Close(cctx)
	}()
	h.Launch()
	h.WaitReady(ctx)
	// The host fails an extension at its own deadlines; wait for its
	// verdict, at most the handshake and ready timeouts and a little.
	deadline := time.Now().Add(timeout + exthost.DefaultReadyTimeout + time.Second)
	var info exthost.Info
	for {
		infos := h.Extensions()
		if len(infos) == 0 {
			return fail("not loaded: %s", strings.TrimSpace(hostLog.String()))
		}
		info = infos[0]
		if info.State != "starting" || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	switch info.State {
	case "ready":
		fmt.Fprintf(w, "✓ %s: ready%s\n", label, offers(info))
		return true
	case "starting":
		return fail("no hello, or no ready, within %s", timeout)
	}
	why := info.Error
	switch {
	case strings.HasPrefix(why, "no hello within"):
		why = fmt.Sprintf("handshake timeout: it did not say hello within %s (does it write its hello frame to stdout and flush it?)", timeout)
	case strings.Contains(why, "hello names"):
		why = "its hello frame " + why[strings.Index(why, "hello names")+len("hello "):] + ": they must be the same"
	case strings.Contains(why, "first frame must be hello"):
		why = "handshake failed: " + why
	case strings.Contains(why, "exited with status") || strings.Contains(why, "was killed") || strings.Contains(why, "closed its output"):
		why = "it crashed during its handshake: " + why
	}
	fail("%s", why)
	if tail := lastLines(logFile, logStart, 10); tail != "" {
		fmt.Fprintf(w, "  last lines of %s:\n", logFile)
		for _, l := range strings.Split(tail, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	return false
}

// scriptRuntime returns the program a script's #! line runs, looked up
// in PATH (`#!/usr/bin/env node` gives node), or "".
func scriptRuntime(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	first, _ := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	line, ok := strings.CutPrefix(strings.TrimSpace(first), "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" {
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") {
				return f
			}
		}
		return ""
	}
	if _, err := os.Stat(fields[0]); err != nil {
		return fields[0]
	}
	return ""
}

// offers describes what a ready extension registered.
func offers(info exthost.Info) string {
	var parts []string
	if len(info.Tools) > 0 {
		parts = append(parts, "tools "+strings.Join(info.Tools, ", "))
	}
	if len(info.Commands) > 0 {
		parts = append(parts, "commands /"+strings.Join(info.Commands, ", /"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// lastLines returns the last n lines of file written after offset from.
func lastLines(file string, from int64, n int) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return ""
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
