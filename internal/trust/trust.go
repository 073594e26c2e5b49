// Package trust decides whether a project folder may run its own code:
// the extensions of its .zot/extensions and the MCP servers of its
// .zot/mcp.json; and whether the permission rules of its
// .zot/settings.json may let calls run without asking. Opening someone else's repository must not run what it
// ships, so these start only in a folder the user trusts (`zot trust`),
// or for one run (`--trust-project`). What the user configured outside
// the folder (the zot home's extensions and mcp.json, --ext,
// --mcp-config) is trusted as always.
//
// The [Store] is a file in the zot home that records each trusted
// folder by its real path, with a hash of the files that say what it
// runs (.zot/mcp.json and every .zot/extensions/*/extension.json): when
// one of them changes, the folder must be trusted again. A [Gate]
// applies the store for one run and says once per folder what it left
// out.
package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

	"zot.dev/zot/internal/atomicfile"
)

// The files, relative to a project folder, that make it run code.
var (
	// ExtensionsDir holds the project's extensions, one folder each.
	ExtensionsDir = filepath.Join(".zot", "extensions")
	// MCPFile lists the project's MCP servers.
	MCPFile = filepath.Join(".zot", "mcp.json")
	// SettingsFile holds the project's permission rules, whose allow
	// rules apply only in a trusted folder (internal/settings).
	SettingsFile = filepath.Join(".zot", "settings.json")
)

// manifestFile is an extension's manifest in its folder.
const manifestFile = "extension.json"

// Project is what a folder would run: its extensions and MCP servers.
type Project struct {
	// Dir is the folder's real path (symbolic links resolved).
	Dir string
	// Extensions names the folders of .zot/extensions that hold a
	// manifest, sorted.
	Extensions []string
	// MCP is set when .zot/mcp.json exists; MCPServers names its servers
	// when it can be read, sorted.
	MCP        bool
	MCPServers []string
	// Settings is set when .zot/settings.json exists: permission rules,
	// which run nothing (Empty leaves them out) but whose allow rules
	// apply only once the folder is trusted.
	Settings bool
	// Hash is "sha256:<hex>" of .zot/mcp.json, .zot/settings.json and
	// every manifest of .zot/extensions, with their paths: what trusting
	// the folder trusts. Empty when the folder has none of them.
	Hash string
	// Foreign, when set, names what of the folder belongs to another
	// user (neither this process's nor root): the folder, its .zot,
	// .zot/mcp.json or an extension's folder or manifest, symbolic
	// links followed. ForeignUID is that user. Such a folder is never
	// trusted from the store: its owner could change the programs it
	// runs, which the hash does not cover, and run them as you.
	Foreign    string
	ForeignUID int
}

// Empty reports whether the folder runs nothing of its own.
func (p Project) Empty() bool { return len(p.Extensions) == 0 && !p.MCP }

// Inspect reads what the folder dir would run.
func Inspect(dir string) (Project, error) {
	real, err := realPath(dir)
	if err != nil {
		return Project{}, err
	}
	p := Project{Dir: real}
	owned := func(path string) {
		if p.Foreign != "" {
			return
		}
		if fi, err := os.Stat(path); err == nil {
			if uid, other := otherOwner(fi); other {
				p.Foreign, p.ForeignUID = path, uid
			}
		}
	}
	owned(real)
	owned(filepath.Join(real, ".zot"))
	type file struct {
		rel  string
		data []byte
	}
	var files []file
	if data, err := os.ReadFile(filepath.Join(real, MCPFile)); err == nil {
		p.MCP = true
		owned(filepath.Join(real, MCPFile))
		files = append(files, file{MCPFile, data})
		var cfg struct {
			Servers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(data, &cfg) == nil {
			for name := range cfg.Servers {
				p.MCPServers = append(p.MCPServers, name)
			}
			sort.Strings(p.MCPServers)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Project{}, fmt.Errorf("reading %s: %w", filepath.Join(real, MCPFile), err)
	}
	if data, err := os.ReadFile(filepath.Join(real, SettingsFile)); err == nil {
		p.Settings = true
		owned(filepath.Join(real, SettingsFile))
		files = append(files, file{SettingsFile, data})
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Project{}, fmt.Errorf("reading %s: %w", filepath.Join(real, SettingsFile), err)
	}
	entries, err := os.ReadDir(filepath.Join(real, ExtensionsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Project{}, fmt.Errorf("reading %s: %w", filepath.Join(real, ExtensionsDir), err)
	}
	for _, e := range entries {
		rel := filepath.Join(ExtensionsDir, e.Name(), manifestFile)
		data, err := os.ReadFile(filepath.Join(real, rel))
		if err != nil {
			continue // not an extension (no manifest), or not a folder
		}
		p.Extensions = append(p.Extensions, e.Name())
		owned(filepath.Join(real, ExtensionsDir, e.Name()))
		owned(filepath.Join(real, rel))
		files = append(files, file{rel, data})
	}
	if len(files) == 0 {
		return p, nil
	}
	// sort.Slice rather than slices.SortFunc: the generic sort is compiled
	// anew for each struct type, 10–20 KB of code that every start maps in.
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(f.rel), len(f.data))
		h.Write(f.data)
	}
	p.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return p, nil
}

// realPath returns dir made absolute, its symbolic links resolved.
func realPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", abs, err)
	}
	return real, nil
}

// Entry is one trusted folder, or one whose trust was declined.
type Entry struct {
	// Dir is the folder's real path.
	Dir string `json:"dir"`
	// Hash is the Project.Hash it was trusted (or declined) with.
	Hash string `json:"hash"`
	// Trusted is when it was trusted (or declined).
	Trusted time.Time `json:"trusted_at"`
}

// Store is the file of trusted folders (home.Home.TrustFile). Its
// methods read the file each time, so that a folder trusted by another
// zot counts at once; a change is made under a lock (File with ".lock"
// added) and written to a temporary file renamed over it, so a reader
// sees the old store or the new one, and two zots changing it at once
// both have their change.
type Store struct {
	// File is the store's path.
	File string
}

// storeFile is the store's JSON form.
type storeFile struct {
	Folders []Entry `json:"folders"`
	// Declined are the folders whose trust the person declined when
	// asked (the terminal asks once per folder): asked no more until
	// zot trust or zot untrust.
	Declined []Entry `json:"declined,omitempty"`
}

// read reads the store; a store not written yet is empty.
func (s *Store) read() (storeFile, error) {
	var f storeFile
	data, err := os.ReadFile(s.File)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("trust store: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("trust store %s: %w", s.File, err)
	}
	sortByDir(f.Folders)
	sortByDir(f.Declined)
	return f, nil
}

// List returns the trusted folders, sorted by path.
func (s *Store) List() ([]Entry, error) {
	f, err := s.read()
	return f.Folders, err
}

// ListDeclined returns the folders whose trust was declined, sorted by
// path.
func (s *Store) ListDeclined() ([]Entry, error) {
	f, err := s.read()
	return f.Declined, err
}

// Lookup returns the entry of the folder whose real path is dir.
func (s *Store) Lookup(dir string) (Entry, bool, error) {
	list, err := s.List()
	return find(list, dir, err)
}

// LookupDeclined returns the decline of the folder whose real path is
// dir, when its trust was declined.
func (s *Store) LookupDeclined(dir string) (Entry, bool, error) {
	list, err := s.ListDeclined()
	return find(list, dir, err)
}

func find(list []Entry, dir string, err error) (Entry, bool, error) {
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range list {
		if e.Dir == dir {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// Trust records p's folder as trusted, with its hash now (a decline of
// it is forgotten).
func (s *Store) Trust(p Project) (Entry, error) {
	e := Entry{Dir: p.Dir, Hash: p.Hash, Trusted: time.Now().UTC().Truncate(time.Second)}
	err := s.update(func(f *storeFile) {
		f.Folders = slices.DeleteFunc(f.Folders, func(x Entry) bool { return x.Dir == p.Dir })
		f.Folders = append(f.Folders, e)
		f.Declined = slices.DeleteFunc(f.Declined, func(x Entry) bool { return x.Dir == p.Dir })
	})
	return e, err
}

// Decline records that the person declined to trust p's folder: it is
// not trusted, and is not to be asked about again until zot trust (which
// trusts it) or zot untrust (which forgets the decline).
func (s *Store) Decline(p Project) (Entry, error) {
	e := Entry{Dir: p.Dir, Hash: p.Hash, Trusted: time.Now().UTC().Truncate(time.Second)}
	err := s.update(func(f *storeFile) {
		f.Folders = slices.DeleteFunc(f.Folders, func(x Entry) bool { return x.Dir == p.Dir })
		f.Declined = slices.DeleteFunc(f.Declined, func(x Entry) bool { return x.Dir == p.Dir })
		f.Declined = append(f.Declined, e)
	})
	return e, err
}

// Untrust forgets the folder dir (made real as Inspect does; a folder
// that no longer exists is forgotten by the path given, made absolute),
// trusted or declined. It reports whether it was trusted, and whether a
// decline of it was forgotten.
func (s *Store) Untrust(dir string) (trusted, declined bool, err error) {
	key, err := realPath(dir)
	if err != nil {
		if key, err = filepath.Abs(dir); err != nil {
			return false, false, err
		}
	}
	err = s.update(func(f *storeFile) {
		f.Folders = slices.DeleteFunc(f.Folders, func(x Entry) bool {
			trusted = trusted || x.Dir == key
			return x.Dir == key
		})
		f.Declined = slices.DeleteFunc(f.Declined, func(x Entry) bool {
			declined = declined || x.Dir == key
			return x.Dir == key
		})
	})
	return trusted, declined, err
}

// lockWait bounds how long a change waits for another zot's change of
// the store to end.
const lockWait = 10 * time.Second

// lock takes the store's lock, File with ".lock" added, waiting up to
// lockWait for another process that holds it; the returned func releases
// it.
func (s *Store) lock() (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(s.File), 0o700); err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	path := s.File + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		f, held, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("trust store lock %s: %w", path, err)
		}
		if !held {
			return func() { f.Close() }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("trust store lock %s: another zot has held it for %s", path, lockWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// update rewrites the store with change applied to its entries, under
// the store's lock, so that two processes changing it at once do not
// lose one's change: each reads what the other wrote.
func (s *Store) update(change func(*storeFile)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	change(&f)
	sortByDir(f.Folders)
	sortByDir(f.Declined)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := atomicfile.Write(s.File, data); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	return nil
}

// Decision is what a Gate decided about a folder.
type Decision struct {
	// Allowed says the folder's own extensions and MCP servers may run.
	Allowed bool
	// Project is what the folder would run.
	Project Project
	// Changed is set when the folder was trusted with other files than
	// it has now (a manifest or mcp.json changed since); Since is when.
	Changed bool
	Since   time.Time
	// Err is set when the folder or the store could not be read: the
	// folder is not trusted.
	Err error
}

// Gate applies a Store for one run (one process; one session of the
// daemon). Its methods are safe for concurrent use.
type Gate struct {
	// Store is the trust store; nil trusts no folder (unless All).
	Store *Store
	// All trusts every folder: --trust-project.
	All bool

	mu       sync.Mutex
	reported map[string]bool // "<dir>\x00<hash>" said already
}

// Check decides whether the folder dir may run its own extensions and
// MCP servers: yes when it runs none, when the gate trusts all, or when
// the store has it with the hash it has now.
func (g *Gate) Check(dir string) Decision {
	p, err := Inspect(dir)
	if err != nil {
		return Decision{Project: Project{Dir: dir}, Err: err}
	}
	d := Decision{Project: p}
	if g.All || p.Empty() {
		d.Allowed = true
		return d
	}
	if g.Store == nil || p.Foreign != "" {
		return d
	}
	e, ok, err := g.Store.Lookup(p.Dir)
	switch {
	case err != nil:
		d.Err = err
	case ok && e.Hash == p.Hash:
		d.Allowed = true
	case ok:
		d.Changed, d.Since = true, e.Trusted
	}
	return d
}

// Trusts decides whether the folder dir's own settings may grant what
// they say (the allow rules of .zot/settings.json): yes when the gate
// trusts all, or when the store has the folder with the hash it has now.
// Unlike Check, a folder that runs nothing is not trusted for that.
func (g *Gate) Trusts(dir string) Decision {
	p, err := Inspect(dir)
	if err != nil {
		return Decision{Project: Project{Dir: dir}, Err: err}
	}
	d := Decision{Project: p}
	if g.All {
		d.Allowed = true
		return d
	}
	if g.Store == nil || p.Foreign != "" || p.Hash == "" {
		return d
	}
	e, ok, err := g.Store.Lookup(p.Dir)
	switch {
	case err != nil:
		d.Err = err
	case ok && e.Hash == p.Hash:
		d.Allowed = true
	case ok:
		d.Changed, d.Since = true, e.Trusted
	}
	return d
}

// FirstReport reports whether d, a refusal, is to be told: true the first
// time for its folder and files, false after, so that a refusal seen by
// both the extensions and the MCP servers of a run is told once.
func (g *Gate) FirstReport(d Decision) bool {
	key := d.Project.Dir + "\x00" + d.Project.Hash
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reported[key] {
		return false
	}
	if g.reported == nil {
		g.reported = map[string]bool{}
	}
	g.reported[key] = true
	return true
}

// Message says, in one line, what a refusal left out and how to trust
// the folder.
func (d Decision) Message() string {
	var what []string
	p := d.Project
	if len(p.Extensions) > 0 {
		what = append(what, "its extensions ("+strings.Join(p.Extensions, ", ")+")")
	}
	if p.MCP {
		servers := filepath.Join(p.Dir, MCPFile)
		if len(p.MCPServers) > 0 {
			servers = strings.Join(p.MCPServers, ", ")
		}
		what = append(what, "its MCP servers ("+servers+")")
	}
	var b bytes.Buffer
	if p.Foreign != "" {
		fmt.Fprintf(&b, "not starting %s in %s: %s; pass --trust-project to run them this once",
			strings.Join(what, " and "), p.Dir, d.Reason())
		return b.String()
	}
	fmt.Fprintf(&b, "not starting %s in %s: %s; run %s to trust it, or pass --trust-project for this run",
		strings.Join(what, " and "), p.Dir, d.Reason(), d.TrustCommand())
	return b.String()
}

// Reason says why a refusal refused: the folder is not trusted, its .zot
// changed since, or its trust could not be checked.
func (d Decision) Reason() string {
	switch {
	case d.Err != nil:
		return fmt.Sprintf("its trust could not be checked: %v", d.Err)
	case d.Project.Foreign != "":
		return fmt.Sprintf("%s belongs to another user (uid %d), who could change what it runs, so it is never trusted for good", d.Project.Foreign, d.Project.ForeignUID)
	case d.Changed:
		return fmt.Sprintf("its .zot changed since it was trusted on %s", d.Since.Format(time.DateOnly))
	}
	return "the folder is not trusted"
}

// TrustCommand is the command that trusts the decision's folder, quoted
// in backquotes for a message.
func (d Decision) TrustCommand() string {
	return "`zot trust " + shellQuote(d.Project.Dir) + "`"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sortByDir sorts entries by folder. It uses sort.Slice rather than
// slices.SortFunc: the generic sort is compiled anew for each struct type,
// 10–20 KB of code that every start maps in.
func sortByDir(entries []Entry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Dir < entries[j].Dir })
}
