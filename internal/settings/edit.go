package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"zot.dev/zot/internal/atomicfile"
)

// Doc is a settings file being changed: its JSON object, with the
// members zot does not know kept as they are.
type Doc struct {
	m map[string]any
}

// Get returns the value at the path at (object members by name).
func (d *Doc) Get(at []string) (any, bool) {
	var cur any = d.m
	for _, k := range at {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Set puts v at the path at, making the objects on the way.
func (d *Doc) Set(at []string, v any) error {
	obj := d.m
	for i, k := range at[:len(at)-1] {
		next, ok := obj[k]
		if !ok {
			m := map[string]any{}
			obj[k] = m
			obj = m
			continue
		}
		if obj, ok = next.(map[string]any); !ok {
			return fmt.Errorf("%s is not an object", dottedKeys(at[:i+1]))
		}
	}
	obj[at[len(at)-1]] = v
	return nil
}

// Delete removes the value at the path at, and the objects on the way
// that it leaves empty. It reports whether there was one.
func (d *Doc) Delete(at []string) bool {
	var del func(obj map[string]any, at []string) bool
	del = func(obj map[string]any, at []string) bool {
		if len(at) == 1 {
			_, ok := obj[at[0]]
			delete(obj, at[0])
			return ok
		}
		next, ok := obj[at[0]].(map[string]any)
		if !ok {
			return false
		}
		found := del(next, at[1:])
		if len(next) == 0 {
			delete(obj, at[0])
		}
		return found
	}
	return del(d.m, at)
}

// List returns the list of strings at the path at.
func (d *Doc) List(at []string) ([]string, error) {
	v, ok := d.Get(at)
	if !ok || v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", dottedKeys(at))
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("%s holds a value that is not a string", dottedKeys(at))
		}
		out = append(out, s)
	}
	return out, nil
}

// Add appends s to the list of strings at the path at, unless it holds
// it already.
func (d *Doc) Add(at []string, s string) error {
	list, err := d.List(at)
	if err != nil {
		return err
	}
	if slices.Contains(list, s) {
		return nil
	}
	return d.SetList(at, append(list, s))
}

// Remove takes s out of the list at the path at, reporting whether it
// was there; an emptied list is removed.
func (d *Doc) Remove(at []string, s string) (bool, error) {
	list, err := d.List(at)
	if err != nil {
		return false, err
	}
	i := slices.Index(list, s)
	if i < 0 {
		return false, nil
	}
	return true, d.SetList(at, slices.Delete(list, i, i+1))
}

// SetList puts the list at the path at; an empty list removes it.
func (d *Doc) SetList(at []string, list []string) error {
	if len(list) == 0 {
		d.Delete(at)
		return nil
	}
	items := make([]any, len(list))
	for i, s := range list {
		items[i] = s
	}
	return d.Set(at, items)
}

// dottedKeys writes a path of keys for a message.
func dottedKeys(at []string) string {
	parts := make([]any, len(at))
	for i, k := range at {
		parts[i] = k
	}
	return dotted(parts)
}

// Update changes the user's config.json at path: change is given the
// file's object (empty when there is none), and the result, checked as
// LoadConfig checks a file, replaces the file whole, under a lock on
// path+".lock" so that two zots changing it at once both keep their
// change. A file that does not parse, or that holds a value zot cannot
// use, is never written: Update fails with its *FileError.
func Update(path string, change func(*Doc) error) error {
	return update(path, func(p string, data []byte) error {
		var c Config
		if err := decode(p, data, &c); err != nil {
			return err
		}
		return checkConfig(p, data, c)
	}, change)
}

// UpdateProject changes the settings file of the project folder dir as
// Update changes config.json.
func UpdateProject(dir string, change func(*Doc) error) error {
	return update(filepath.Join(dir, ProjectFile), func(p string, data []byte) error {
		var pr Project
		if err := decode(p, data, &pr); err != nil {
			return err
		}
		return checkPermissions(p, data, []any{"permissions"}, pr.Permissions)
	}, change)
}

// update reads path under its lock, refuses a file check fails, lets
// change change it, checks the result and writes it.
func update(path string, check func(path string, data []byte) error, change func(*Doc) error) error {
	unlock, err := lock(path)
	if err != nil {
		return &FileError{Path: path, Err: err}
	}
	defer unlock()
	data, err := readFile(path)
	if err != nil {
		return err
	}
	d := &Doc{m: map[string]any{}}
	if data != nil {
		if err := check(path, data); err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&d.m); err != nil {
			return &FileError{Path: path, Err: err}
		}
	}
	if err := change(d); err != nil {
		return err
	}
	out, err := json.MarshalIndent(d.m, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if err := check(path, out); err != nil {
		return err
	}
	if err := atomicfile.Write(path, out); err != nil {
		return &FileError{Path: path, Err: err}
	}
	return nil
}

// lock takes the lock of the settings file path, waiting up to lockWait
// for another zot that holds it; the returned func releases it.
func lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	lp := path + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		f, held, err := tryLock(lp)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", lp, err)
		}
		if !held {
			return func() { f.Close() }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: another zot has held it for %s", lp, lockWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Last is what the interactive client used last: the provider, the
// model and the permission mode.
type Last struct {
	Provider string
	Model    string
	Mode     string
}

// Remember records last in the config.json of the zot home dir home (the
// directory home.Current() resolves: $ZOT_HOME, else the platform's), so
// that the next interactive session starts with the same provider, model
// and mode (and every door with the same provider and model when no flag
// names them). It is for the interactive client, on the user's change
// (a /model, a mode switch), and for `zot config set`: a one-shot run
// (zot -p), zot rpc, the daemon, the SDK and tests never call it. Empty
// fields of last are left as the file has them. The file is changed
// under its lock and replaced whole, keeping what else it holds; a file
// that does not parse is never written over: Remember then fails with a
// *FileError naming the file and the line:column.
func Remember(home string, last Last) error {
	if last.Mode != "" && !contains(Modes, last.Mode) {
		return fmt.Errorf("mode %q is not a permission mode", last.Mode)
	}
	return Update(ConfigFile(home), func(d *Doc) error {
		for _, f := range []struct{ key, val string }{{"provider", last.Provider}, {"model", last.Model}, {"mode", last.Mode}} {
			if f.val != "" {
				if err := d.Set([]string{f.key}, f.val); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Recall returns what Remember recorded in the zot home dir home: the
// zero Last when nothing was. A config.json that does not parse gives
// the zero Last and its *FileError, which the caller shows (one line)
// before going on with its defaults.
func Recall(home string) (Last, error) {
	c, err := LoadConfig(ConfigFile(home))
	if err != nil {
		return Last{}, err
	}
	return Last{Provider: c.Provider, Model: c.Model, Mode: c.Mode}, nil
}
