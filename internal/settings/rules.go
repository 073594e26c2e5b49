package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/trust"
)

// Verdict is what the rules decide about a call before anybody is asked.
type Verdict struct {
	// Deny: a deny rule matches; the call never runs.
	Deny bool
	// Allow: no deny rule matches and allow rules cover the call; it
	// runs without asking (unless the permission mode refuses it).
	Allow bool
	// Rule and From say which rule decided and where it is written (a
	// file, or "the session's configuration").
	Rule, From string
}

// Reason says, for a denied call, why: the rule and its file.
func (v Verdict) Reason() string {
	return fmt.Sprintf("denied by the permission rule %s in %s", v.Rule, v.From)
}

// Rules are the permission rules of one session: config.json's (those of
// every folder, and those saved for the session's folder or a folder
// above it), the project's .zot/settings.json, and those given in code.
// Deny wins over allow wherever each is written; a project's allow rules
// count only in a trusted folder. The files are read again when they
// change, so a rule saved by another zot counts at once. Its methods are
// safe for concurrent use.
type Rules struct {
	// Home is the zot home whose config.json applies; empty: none.
	Home string
	// Dir is the session's working directory (absolute).
	Dir string
	// Project also applies Dir/.zot/settings.json.
	Project bool
	// Trust decides whether the project's allow rules apply; nil: they
	// never do.
	Trust *trust.Gate
	// Given are rules given in code (the SDK's Config), of every folder.
	Given Permissions
	// Warn is told, once each, what the rules had to leave out: a file
	// that does not parse, a project's allow rules in a folder that is
	// not trusted. nil drops it.
	Warn func(msg string)

	mu    sync.Mutex
	user  cached
	proj  cached
	told  map[string]bool
	trust struct {
		key     string // the stats it was decided with
		allowed bool
	}
}

// cached is one settings file as last read.
type cached struct {
	stat  string // size and time of the file read; "" before the first read
	perms []source
	err   error
}

// source is a set of rules and where they are written.
type source struct {
	from        string
	perms       Permissions
	allow, deny []Rule // perms parsed (the files were checked: every rule parses)
	base        string // the folder relative path patterns are under; "" for the session's
	proj        bool   // a project's file: its allow rules need trust
}

// newSource is a source of the rules p.
func newSource(from string, p Permissions, base string, proj bool) source {
	s := source{from: from, perms: p, base: base, proj: proj}
	for _, list := range []struct {
		texts []string
		out   *[]Rule
	}{{p.Allow, &s.allow}, {p.Deny, &s.deny}} {
		for _, text := range list.texts {
			if r, err := ParseRule(text); err == nil {
				*list.out = append(*list.out, r)
			}
		}
	}
	return s
}

// statKey identifies a version of the file at path; "-" when it is
// missing.
func statKey(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano())
}

// loadLocked returns the sources of the rules, reading again the files
// that changed.
// The caller holds r.mu.
func (r *Rules) loadLocked() []source {
	var out []source
	if r.Given.Allow != nil || r.Given.Deny != nil {
		out = append(out, newSource("the session's configuration", r.Given, "", false))
	}
	if r.Home != "" {
		path := ConfigFile(r.Home)
		if k := statKey(path); k != r.user.stat {
			r.user = cached{stat: k}
			c, err := LoadConfig(path)
			if err != nil {
				r.user.err = err
			} else {
				r.user.perms = configSources(path, c, r.Dir)
			}
		}
		r.warnLocked(r.user.err)
		out = append(out, r.user.perms...)
	}
	if r.Project {
		path := filepath.Join(r.Dir, ProjectFile)
		if k := statKey(path); k != r.proj.stat {
			r.proj = cached{stat: k}
			p, err := LoadProject(r.Dir)
			if err != nil {
				r.proj.err = err
			} else if !p.Permissions.empty() {
				r.proj.perms = []source{newSource(path, p.Permissions, "", true)}
			}
		}
		r.warnLocked(r.proj.err)
		out = append(out, r.proj.perms...)
	}
	return out
}

// configSources are the sources of config.json c for a session in dir:
// its rules of every folder, then those of dir and each folder above it
// (by dir as given or with its symbolic links resolved).
func configSources(path string, c Config, dir string) []source {
	real := realPath(dir)
	var out []source
	if !c.Permissions.empty() {
		out = append(out, newSource(path, c.Permissions, "", false))
	}
	for folder, f := range c.Folders {
		if f.Permissions.empty() || !(within(dir, folder) || within(real, folder)) {
			continue
		}
		out = append(out, newSource(path+" (folder "+folder+")", f.Permissions, folder, false))
	}
	return out
}

// within reports whether dir is folder or lies under it.
func within(dir, folder string) bool {
	rel, err := filepath.Rel(filepath.Clean(folder), filepath.Clean(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// warnLocked tells Warn about err once. The caller holds r.mu.
func (r *Rules) warnLocked(err error) {
	if err == nil || r.Warn == nil {
		return
	}
	msg := err.Error() + " (its rules are not applied; fix the file: zot never writes over it)"
	if r.told[msg] {
		return
	}
	if r.told == nil {
		r.told = map[string]bool{}
	}
	r.told[msg] = true
	r.Warn(msg)
}

// trustedLocked reports whether the project's allow rules apply, and
// tells Warn once when they do not. The caller holds r.mu.
func (r *Rules) trustedLocked(from string) bool {
	if r.Trust == nil {
		r.tellUntrustedLocked(from, "no trust store decides this folder")
		return false
	}
	key := r.proj.stat
	if r.Trust.Store != nil {
		key += "|" + statKey(r.Trust.Store.File)
	}
	if key != r.trust.key {
		d := r.Trust.Trusts(r.Dir)
		r.trust.key, r.trust.allowed = key, d.Allowed
		if !d.Allowed {
			why := d.Reason() + "; run " + d.TrustCommand() + " to trust it, or pass --trust-project for this run"
			r.tellUntrustedLocked(from, why)
		}
	}
	return r.trust.allowed
}

// tellUntrustedLocked tells Warn once that the allow rules of from are
// left out, and why.
func (r *Rules) tellUntrustedLocked(from, why string) {
	if r.Warn == nil {
		return
	}
	msg := "not applying the allow rules of " + from + ": " + why + " (its deny rules apply)"
	if r.told[msg] {
		return
	}
	if r.told == nil {
		r.told = map[string]bool{}
	}
	r.told[msg] = true
	r.Warn(msg)
}

// Load reads the files, telling Warn what they leave out, so that a
// session reports a file that does not parse when it starts.
func (r *Rules) Load() {
	r.mu.Lock()
	defer r.mu.Unlock()
	srcs := r.loadLocked()
	for _, s := range srcs {
		if s.proj && len(s.perms.Allow) > 0 {
			r.trustedLocked(s.from)
		}
	}
}

// Decide applies the rules to a call: a deny rule that matches wins,
// then allow rules that cover it. The zero Verdict leaves the call to the
// permission mode and whoever answers.
func (r *Rules) Decide(tool string, args []byte) Verdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	srcs := r.loadLocked()
	base := Call{Tool: tool, Args: args, CWD: r.Dir}.decoded()
	call := func(s source) Call {
		c := base
		if s.base != "" {
			c.CWD = s.base
		}
		return c
	}
	for _, s := range srcs {
		for _, rule := range s.deny {
			if rule.matches(call(s), denyEffect) {
				return Verdict{Deny: true, Rule: rule.String(), From: s.from}
			}
		}
	}
	// A bash line is covered when each of its commands is matched by an
	// allow rule, not necessarily the same one.
	var allows []sourcedRule
	for _, s := range srcs {
		if len(s.allow) == 0 || (s.proj && !r.trustedLocked(s.from)) {
			continue
		}
		for _, rule := range s.allow {
			if rule.nameMatches(tool) {
				allows = append(allows, sourcedRule{rule, s, call(s)})
			}
		}
	}
	if v, ok := covered(tool, allows); ok {
		return v
	}
	return Verdict{}
}

// sourcedRule is an allow rule, where it is written and the call as it
// reads it.
type sourcedRule struct {
	rule Rule
	src  source
	call Call
}

// covered decides whether allow rules cover the call: one rule that
// matches it whole, or, for a bash line of several commands, a rule for
// each command.
func covered(tool string, allows []sourcedRule) (Verdict, bool) {
	for _, a := range allows {
		if a.rule.matches(a.call, allowEffect) {
			return Verdict{Allow: true, Rule: a.rule.String(), From: a.src.from}, true
		}
	}
	if tool != "bash" || len(allows) == 0 {
		return Verdict{}, false
	}
	cmd, ok := allows[0].call.arg("command")
	if !ok {
		return Verdict{}, false
	}
	parts, opaque := splitCommand(cmd)
	if opaque || len(parts) < 2 {
		return Verdict{}, false
	}
	var used []string
	for _, p := range parts {
		found := false
		for _, a := range allows {
			if a.rule.Pattern == "" || commandMatches(a.rule.Pattern, p) {
				used = append(used, a.rule.String())
				found = true
				break
			}
		}
		if !found {
			return Verdict{}, false
		}
	}
	return Verdict{Allow: true, Rule: strings.Join(used, ", "), From: allows[0].src.from}, true
}

// Scope says where Save keeps a rule.
type Scope string

const (
	// ScopeProject keeps it in config.json for the session's folder.
	ScopeProject Scope = "project"
	// ScopeEverywhere keeps it in config.json for every folder.
	ScopeEverywhere Scope = "everywhere"
)

// ErrNoHome is returned by Save when the rules have no zot home to save
// into.
var ErrNoHome = errors.New("no zot home to save the rule in")

// Save adds text, an allow rule, to config.json for scope (the session's
// folder, or every folder). The file is changed under its lock and
// replaced whole; one that does not parse is left as it is and Save
// fails with its *FileError.
func (r *Rules) Save(scope Scope, text string) error {
	if r.Home == "" {
		return ErrNoHome
	}
	rule, err := ParseRule(text)
	if err != nil {
		return err
	}
	var at []string
	switch scope {
	case ScopeEverywhere:
		at = []string{"permissions", "allow"}
	case ScopeProject:
		at = []string{"folders", r.Dir, "permissions", "allow"}
	default:
		return fmt.Errorf("save %q: want project or everywhere", scope)
	}
	err = Update(ConfigFile(r.Home), func(d *Doc) error {
		return d.Add(at, rule.String())
	})
	if err != nil {
		return err
	}
	// Read the file again at the next call, even within the same tick
	// of the file's clock.
	r.mu.Lock()
	r.user.stat = ""
	r.mu.Unlock()
	return nil
}

// MatchesCall reports whether text, a rule, names tool and matches the
// call (as an allow rule), for a client that names the rule to save.
func MatchesCall(text, tool string, args []byte, cwd string) (Rule, error) {
	rule, err := ParseRule(text)
	if err != nil {
		return Rule{}, err
	}
	c := Call{Tool: tool, Args: args, CWD: cwd}
	if !rule.nameMatches(tool) {
		return Rule{}, fmt.Errorf("rule %s does not name the tool %s", rule, tool)
	}
	if !rule.matches(c, allowEffect) {
		return Rule{}, fmt.Errorf("rule %s does not match this call", rule)
	}
	return rule, nil
}

// lockWait bounds how long a change waits for another zot's change of
// the same file.
const lockWait = 10 * time.Second
