// Package settings reads and writes zot's settings: the user's
// config.json in the zot home (the provider, model and permission mode
// the interactive client used last, and permission rules for every
// folder or for one) and a project's .zot/settings.json (permission rules
// that come with the folder), and decides a tool call by those rules
// (rules.go) before anybody is asked.
//
// A settings file that does not parse is never written over: reading it
// gives a *FileError naming the file and the line:column, the caller goes
// on with the defaults, and every change to it is refused until it is
// fixed (docs/settings.md).
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"zot.dev/zot/sdk/wire"
)

// ConfigName is the user's settings file in the zot home.
const ConfigName = "config.json"

// ProjectFile is a project's settings file, relative to its folder.
var ProjectFile = filepath.Join(".zot", "settings.json")

// ConfigFile is the user's settings file of the zot home dir.
func ConfigFile(home string) string { return filepath.Join(home, ConfigName) }

// Permissions are permission rules, each as `zot config` writes them
// (ParseRule): a tool, optionally with a pattern in parentheses.
type Permissions struct {
	// Allow are the calls that run without asking.
	Allow []string `json:"allow,omitempty"`
	// Deny are the calls that never run, whatever the mode or an answer.
	Deny []string `json:"deny,omitempty"`
}

// empty reports whether p has no rule.
func (p Permissions) empty() bool { return len(p.Allow) == 0 && len(p.Deny) == 0 }

// Folder is what config.json keeps for one folder.
type Folder struct {
	// Permissions apply to sessions in the folder and the folders under
	// it.
	Permissions Permissions `json:"permissions,omitzero"`
}

// Config is the user's config.json. Members it does not know are kept
// when zot writes the file.
type Config struct {
	// Provider, Model and Mode are what the interactive client used last
	// (Remember): the provider and model every door starts with when no
	// flag names them, the permission mode the interactive client starts
	// in.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Mode     string `json:"mode,omitempty"`
	// Permissions apply in every folder.
	Permissions Permissions `json:"permissions,omitzero"`
	// Folders are rules for one folder each, by its absolute path: where
	// an "allow always" answer for a project is saved.
	Folders map[string]Folder `json:"folders,omitempty"`
	// Sandbox is the sandbox of every session when no flag names one
	// (docs/sandbox.md).
	Sandbox Sandbox `json:"sandbox,omitzero"`
	// Agents bounds sub-agents when no flag does (docs/agents.md).
	Agents Agents `json:"agents,omitzero"`
}

// Agents is config.json's agents: how deep sub-agents nest and how many
// run at once.
type Agents struct {
	// MaxDepth is how deep sub-agents nest (0 turns the task tool off);
	// nil: 1.
	MaxDepth *int `json:"max_depth,omitempty"`
	// MaxParallel is how many sub-agents of a session run at once; 0: 4.
	MaxParallel int `json:"max_parallel,omitempty"`
	// MaxPerPrompt is how many sub-agents one prompt may start; 0: 32.
	MaxPerPrompt int `json:"max_per_prompt,omitempty"`
}

// Sandbox is config.json's sandbox: what the tools may change.
type Sandbox struct {
	// Mode is read-only, workspace-write, full or off; empty: by the
	// permission mode (auto → workspace-write).
	Mode string `json:"mode,omitempty"`
	// Network is "on" or "off"; empty: off when the mode confines writes.
	Network string `json:"network,omitempty"`
	// Writable are further paths writable under workspace-write (a build
	// cache, say).
	Writable []string `json:"writable,omitempty"`
}

// MaxAgentDepth is the deepest sub-agents may nest.
const MaxAgentDepth = 8

// SandboxModes are the sandbox modes a settings file may name.
var SandboxModes = []string{"read-only", "workspace-write", "full", "off"}

// Project is a project's .zot/settings.json.
type Project struct {
	// Permissions apply to sessions in the folder: the deny rules always,
	// the allow rules only once the folder is trusted (zot trust).
	Permissions Permissions `json:"permissions,omitzero"`
}

// Modes are the permission modes a settings file may name.
var Modes = []string{"ask", "accept_edits", "auto", "read_only"}

// FileError says why a settings file cannot be used: it does not parse
// (Line and Col, from 1, say where), a value is wrong (Line and Col say
// where when known), or it cannot be read or written.
type FileError struct {
	Path      string
	Line, Col int
	Err       error
}

// Error returns "<path>:<line>:<col>: <why>", on one line.
func (e *FileError) Error() string {
	msg := strings.ReplaceAll(e.Err.Error(), "\n", " ")
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, msg)
	}
	return e.Path + ": " + msg
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// ErrorCode returns settings_error, the code of every door's answer.
func (e *FileError) ErrorCode() wire.ErrorCode { return wire.CodeSettingsError }

// readFile reads path; a missing file is nil data and no error.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return data, nil
}

// LoadConfig reads the user's config.json at path. A missing file is the
// zero Config. A file that does not parse, or holds a value zot cannot
// use, is a *FileError naming where.
func LoadConfig(path string) (Config, error) {
	var c Config
	data, err := readFile(path)
	if err != nil || data == nil {
		return c, err
	}
	if err := decode(path, data, &c); err != nil {
		return Config{}, err
	}
	if err := checkConfig(path, data, c); err != nil {
		return Config{}, err
	}
	return c, nil
}

// LoadProject reads the settings file of the project folder dir
// (dir/.zot/settings.json). A missing file is the zero Project.
func LoadProject(dir string) (Project, error) {
	path := filepath.Join(dir, ProjectFile)
	var p Project
	data, err := readFile(path)
	if err != nil || data == nil {
		return p, err
	}
	if err := decode(path, data, &p); err != nil {
		return Project{}, err
	}
	if err := checkPermissions(path, data, []any{"permissions"}, p.Permissions); err != nil {
		return Project{}, err
	}
	return p, nil
}

// decode unmarshals data, a settings file, into v: one JSON object,
// with the position of what does not parse.
func decode(path string, data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &FileError{Path: path, Line: 1, Col: 1, Err: errors.New("the file is empty; it must hold one JSON object")}
	}
	if err := json.Unmarshal(data, v); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, max(syn.Offset-1, 0)) // the offset is after the byte that did not parse
			return &FileError{Path: path, Line: line, Col: col, Err: fmt.Errorf("not valid JSON: %s", syn)}
		case errors.As(err, &typ):
			what := typ.Field
			if what == "" {
				what = "the file"
			}
			off := typ.Offset
			if o, ok := offsetOf(data, fieldPath(typ.Field)); ok {
				off = o
			}
			line, col := position(data, off)
			return &FileError{Path: path, Line: line, Col: col, Err: fmt.Errorf("%s must be %s, not %s", what, kindOf(typ.Type.Kind().String()), typ.Value)}
		}
		line, col := position(data, int64(len(data)))
		return &FileError{Path: path, Line: line, Col: col, Err: err}
	}
	return nil
}

// kindOf names a Go kind as JSON does.
func kindOf(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

// fieldPath splits a json error's dotted field into a path.
func fieldPath(f string) []any {
	if f == "" {
		return nil
	}
	var out []any
	for _, p := range strings.Split(f, ".") {
		out = append(out, p)
	}
	return out
}

// checkConfig checks the values of c, read from data.
func checkConfig(path string, data []byte, c Config) error {
	if c.Mode != "" && !contains(Modes, c.Mode) {
		return valueError(path, data, []any{"mode"}, fmt.Errorf("mode %q is not a permission mode (%s)", c.Mode, strings.Join(Modes, ", ")))
	}
	if err := checkPermissions(path, data, []any{"permissions"}, c.Permissions); err != nil {
		return err
	}
	if m := c.Sandbox.Mode; m != "" && !contains(SandboxModes, m) {
		return valueError(path, data, []any{"sandbox", "mode"}, fmt.Errorf("sandbox.mode %q is not a sandbox mode (%s)", m, strings.Join(SandboxModes, ", ")))
	}
	if n := c.Sandbox.Network; n != "" && n != "on" && n != "off" {
		return valueError(path, data, []any{"sandbox", "network"}, fmt.Errorf("sandbox.network %q: want on or off", n))
	}
	for i, w := range c.Sandbox.Writable {
		if !filepath.IsAbs(w) {
			return valueError(path, data, []any{"sandbox", "writable", i}, fmt.Errorf("sandbox.writable: %q is not an absolute path", w))
		}
	}
	if d := c.Agents.MaxDepth; d != nil && (*d < 0 || *d > MaxAgentDepth) {
		return valueError(path, data, []any{"agents", "max_depth"}, fmt.Errorf("agents.max_depth %d: want 0 to %d", *d, MaxAgentDepth))
	}
	if n := c.Agents.MaxParallel; n < 0 {
		return valueError(path, data, []any{"agents", "max_parallel"}, fmt.Errorf("agents.max_parallel %d: want 1 or more (0: the default)", n))
	}
	if n := c.Agents.MaxPerPrompt; n < 0 {
		return valueError(path, data, []any{"agents", "max_per_prompt"}, fmt.Errorf("agents.max_per_prompt %d: want 1 or more (0: the default)", n))
	}
	for dir, f := range c.Folders {
		if !filepath.IsAbs(dir) {
			return valueError(path, data, []any{"folders", dir}, fmt.Errorf("folders: %q is not an absolute path", dir))
		}
		if err := checkPermissions(path, data, []any{"folders", dir, "permissions"}, f.Permissions); err != nil {
			return err
		}
	}
	return nil
}

// checkPermissions checks that every rule of p parses.
func checkPermissions(path string, data []byte, at []any, p Permissions) error {
	for _, list := range []struct {
		name  string
		rules []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		for i, r := range list.rules {
			if _, err := ParseRule(r); err != nil {
				where := append(append([]any{}, at...), list.name, i)
				return valueError(path, data, where, fmt.Errorf("%s: %w", dotted(where), err))
			}
		}
	}
	return nil
}

// dotted writes a path as "permissions.allow[2]".
func dotted(at []any) string {
	var b strings.Builder
	for _, p := range at {
		switch p := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(p) + "]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

// valueError is a *FileError about the value at the path at of data.
func valueError(path string, data []byte, at []any, err error) error {
	fe := &FileError{Path: path, Err: err}
	if off, ok := offsetOf(data, at); ok {
		fe.Line, fe.Col = position(data, off)
	}
	return fe
}

// position turns a byte offset of data into a line and a column, both
// from 1 (the column counts bytes).
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// offsetOf returns the offset in data, a valid JSON document, of the
// value at the path at: object members by name, array items by index.
func offsetOf(data []byte, at []any) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for _, step := range at {
		tok, err := dec.Token()
		if err != nil {
			return 0, false
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return 0, false
		}
		switch d {
		case '{':
			name, ok := step.(string)
			if !ok {
				return 0, false
			}
			for {
				k, err := dec.Token()
				if err != nil {
					return 0, false
				}
				if k == json.Delim('}') {
					return 0, false
				}
				if k == name {
					break
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return 0, false
				}
			}
		case '[':
			n, ok := step.(int)
			if !ok {
				return 0, false
			}
			for i := 0; i < n; i++ {
				if !dec.More() {
					return 0, false
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return 0, false
				}
			}
			if !dec.More() {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	// The next value starts after the separator and any space.
	off := dec.InputOffset()
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
