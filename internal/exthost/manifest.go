package exthost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/extwire"
)

// ManifestFile is the name of an extension's manifest in its folder.
const ManifestFile = "extension.json"

// Origin says where an extension was found.
type Origin int

const (
	// Explicit extensions were named by the caller (`--ext PATH`).
	Explicit Origin = iota
	// Project extensions live in the session's ./.zot/extensions.
	Project
	// Global extensions live in $ZOT_HOME/extensions.
	Global
)

// String returns the origin's name: explicit, project or global.
func (o Origin) String() string {
	switch o {
	case Explicit:
		return "explicit"
	case Project:
		return "project"
	case Global:
		return "global"
	}
	return fmt.Sprintf("Origin(%d)", int(o))
}

// Spec is an extension to load: its manifest, where it was found and the
// program that runs it.
type Spec struct {
	Manifest extwire.Manifest
	// File is the manifest's absolute path, Dir its folder.
	File, Dir string
	Origin    Origin
	// Exec is the program to run, resolved: an absolute path, or the
	// manifest's bare name when it is looked up in PATH at start.
	Exec string
}

// Name returns the extension's name.
func (s Spec) Name() string { return s.Manifest.Name }

// ManifestError says why a manifest could not be used: in one line, with
// the file and the field.
type ManifestError struct {
	File string
	Err  error
}

// Error returns the message of the ManifestError.
func (e *ManifestError) Error() string {
	return fmt.Sprintf("extension manifest %s: %v", e.File, e.Err)
}

// Unwrap returns the error underneath, for errors.Is and errors.As.
func (e *ManifestError) Unwrap() error { return e.Err }

// ReadManifest reads and checks the manifest file. Keys it does not know
// are not an error (a manifest written for a newer zot still loads): they
// are returned as warnings.
func ReadManifest(file string) (Spec, []string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return Spec{}, nil, &ManifestError{File: file, Err: err}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			if target, lerr := os.Readlink(abs); lerr == nil {
				err = fmt.Errorf("a symlink to %s, which does not exist: %w", target, err)
			}
		}
		return Spec{}, nil, &ManifestError{File: abs, Err: err}
	}
	var warnings []string
	if err := extwire.ValidateManifest(data); err != nil {
		var ve *extwire.ValidationError
		if !errors.As(err, &ve) {
			return Spec{}, nil, &ManifestError{File: abs, Err: err}
		}
		var hard []string
		for _, p := range ve.Problems {
			if strings.Contains(p, "additional propert") {
				warnings = append(warnings, fmt.Sprintf("extension manifest %s: %s (ignored)", abs, p))
				continue
			}
			hard = append(hard, p)
		}
		if len(hard) > 0 {
			return Spec{}, warnings, &ManifestError{File: abs, Err: &extwire.ValidationError{Def: ve.Def, Problems: hard}}
		}
	}
	var m extwire.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Spec{}, warnings, &ManifestError{File: abs, Err: err}
	}
	s := Spec{Manifest: m, File: abs, Dir: filepath.Dir(abs)}
	s.Exec = resolveExec(m.Exec, s.Dir)
	return s, warnings, nil
}

// resolveExec resolves a manifest's exec: an absolute path stays, a path
// with a separator is relative to the manifest's folder, and a bare name
// is left to be looked up in PATH.
func resolveExec(execPath, dir string) string {
	switch {
	case filepath.IsAbs(execPath):
		return execPath
	case strings.ContainsRune(execPath, '/') || strings.ContainsRune(execPath, filepath.Separator):
		return filepath.Join(dir, execPath)
	}
	if p, err := exec.LookPath(execPath); err == nil {
		return p
	}
	return execPath // starting it says it is not found
}

// enabled reports whether the manifest leaves the extension on.
func (s Spec) enabled() bool { return s.Manifest.Enabled == nil || *s.Manifest.Enabled }

// Discovery says where to look for extensions.
type Discovery struct {
	// Paths are extension folders or manifest files named by the caller;
	// they load first, in order, and win a name over the others.
	// Relative paths are relative to the process's working directory.
	Paths []string
	// ProjectDir is the project's extension folder, CWD/.zot/extensions;
	// empty skips it.
	ProjectDir string
	// Trust, when set, decides whether the project's extensions may run:
	// only in a folder the user trusts (the folder is ProjectDir's
	// grandparent, CWD). Nil runs them, for an embedder that named the
	// folder itself.
	Trust *trust.Gate
	// GlobalDir is the user's extension folder, $ZOT_HOME/extensions;
	// empty skips it.
	GlobalDir string
}

// Found is what Find found.
type Found struct {
	// Specs are the extensions to load, in load order.
	Specs []Spec
	// Problems are manifests that cannot be used, one line each; Notes
	// say what was left out and why.
	Problems, Notes []string
	// Untrusted, when set, says the project's extensions were left out:
	// its folder is not trusted (Discovery.Trust).
	Untrusted *trust.Decision
}

// Discover finds the extensions to load, as Find does.
func Discover(d Discovery) (specs []Spec, problems, notes []string) {
	f := Find(d)
	return f.Specs, f.Problems, f.Notes
}

// Find finds the extensions to load, in load order: the explicit ones,
// then the project's (when its folder is trusted), then the user's, each
// folder's sorted by name. An extension whose name was taken by one
// before it is left out, as are disabled ones. A manifest that cannot be
// used is reported in Problems, one line each, and the others still
// load; Notes say what was left out and why.
func Find(d Discovery) Found {
	var found Found
	var specs []Spec
	var problems, notes []string
	if d.ProjectDir != "" && d.Trust != nil {
		if dec := d.Trust.Check(filepath.Dir(filepath.Dir(d.ProjectDir))); !dec.Allowed {
			found.Untrusted = &dec
			d.ProjectDir = ""
		}
	}
	seen := map[string]Spec{}
	add := func(s Spec) {
		if prev, dup := seen[s.Name()]; dup {
			notes = append(notes, fmt.Sprintf("extension %s in %s is shadowed by the %s one in %s", s.Name(), s.Dir, prev.Origin, prev.Dir))
			return
		}
		if !s.enabled() {
			notes = append(notes, fmt.Sprintf("extension %s in %s is disabled in its manifest", s.Name(), s.Dir))
			return
		}
		seen[s.Name()] = s
		specs = append(specs, s)
	}
	read := func(file string, origin Origin) {
		s, warnings, err := ReadManifest(file)
		problems = append(problems, warnings...)
		if err != nil {
			problems = append(problems, err.Error())
			return
		}
		s.Origin = origin
		add(s)
	}
	for _, p := range d.Paths {
		file := p
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			file = filepath.Join(p, ManifestFile)
		}
		read(file, Explicit)
	}
	for _, dir := range []struct {
		path   string
		origin Origin
	}{{d.ProjectDir, Project}, {d.GlobalDir, Global}} {
		if dir.path == "" {
			continue
		}
		entries, err := os.ReadDir(dir.path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, fmt.Sprintf("extension folder %s: %v", dir.path, err))
			}
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			file := filepath.Join(dir.path, e.Name(), ManifestFile)
			if !ManifestPresent(file) {
				continue // a folder without a manifest is not an extension
			}
			read(file, dir.origin) // a dangling or unreadable one is a problem
		}
	}
	found.Specs, found.Problems, found.Notes = specs, problems, notes
	return found
}

// ManifestPresent says whether an extension folder has a manifest file:
// false only when there is no entry of that name. A manifest that is a
// dangling symlink, or that cannot be read, is present: reading it
// reports why it cannot be used, where skipping it would hide it.
func ManifestPresent(file string) bool {
	_, err := os.Lstat(file)
	return err == nil || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
}

// sanitize makes an extension's name safe in a file name: letters,
// digits, '.', '_' and '-' are kept, anything else becomes '_', and it
// never starts with a dot or gets longer than 64 bytes.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	s := strings.TrimLeft(string(b), ".")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "unnamed"
	}
	return s
}
