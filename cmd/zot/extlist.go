package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/trust"
)

// extListEntry is one extension in `zot ext list --json`. Every key is
// always present: an empty string says the manifest has no such field.
type extListEntry struct {
	// Name is the manifest's name, or the folder's when the manifest
	// cannot be read.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Source is where it was found: "flag" (--ext), "project"
	// (./.zot/extensions) or "user" ($ZOT_HOME/extensions).
	Source string `json:"source"`
	// Enabled says whether the manifest is usable and leaves it on.
	Enabled bool `json:"enabled"`
	// Trusted says whether a session may start it: false for a project
	// extension of a folder the user has not trusted (`zot trust`).
	Trusted bool `json:"trusted"`
	// State is what the text list shows: enabled, disabled, invalid,
	// untrusted (a project extension of a folder not trusted: no session
	// starts it) or shadowed (an extension of the same name found before
	// it wins).
	State       string `json:"state"`
	Language    string `json:"language"`
	Description string `json:"description"`
	// Folder is the extension's folder, Manifest its extension.json.
	Folder   string `json:"folder"`
	Manifest string `json:"manifest"`
	// Exec is the program that runs it, resolved as zot starts it.
	Exec string `json:"exec"`
	// Error says why an invalid manifest cannot be used.
	Error string `json:"error"`
}

// flagEntries reads the extensions named by --ext (folders or manifest
// files, relative to the working directory), as source "flag".
func flagEntries(paths []string) []extEntry {
	var out []extEntry
	for _, p := range paths {
		file := p
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			file = filepath.Join(p, exthost.ManifestFile)
		}
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		dir := filepath.Dir(file)
		if _, err := os.Stat(file); err != nil && filepath.Base(file) != exthost.ManifestFile {
			dir = file // a folder that is not there: rpc reads it as the manifest and fails the same way
		}
		e := extEntry{scope: "flag", dir: dir, file: file, name: filepath.Base(dir)}
		e.spec, _, e.err = exthost.ReadManifest(file)
		if e.err == nil {
			e.name = e.spec.Name()
		}
		out = append(out, e)
	}
	return out
}

// markShadowed marks, in load order, each extension whose name an
// enabled one before it already took: zot loads only the first. An
// untrusted one takes no name: a session leaves it out.
func markShadowed(all []extEntry) {
	seen := map[string]bool{}
	for i := range all {
		on := all[i].enabled() && !all[i].untrusted
		all[i].shadow = on && seen[all[i].name]
		if on {
			seen[all[i].name] = true
		}
	}
}

// state is the extension's state as the list shows it.
func (e extEntry) state() string {
	switch {
	case e.err != nil:
		return "invalid"
	case !e.enabled():
		return "disabled"
	case e.untrusted:
		return "untrusted"
	case e.shadow:
		return "shadowed"
	}
	return "enabled"
}

// list prints the extensions a session would find, in load order: those
// of --ext (paths), the project's, then the user's; as a table, or as a
// JSON array with asJSON. The project's are untrusted when gate does not
// trust the folder, as a session leaves them out; the table then says
// how to trust it.
func (x *extDirs) list(paths []string, asJSON bool, gate *trust.Gate, w io.Writer) error {
	found, err := x.all()
	if err != nil {
		return err
	}
	var untrusted *trust.Decision
	if projectCount(found) > 0 {
		if d := gate.Check(x.cwd); !d.Allowed {
			untrusted = &d
			for i := range found {
				found[i].untrusted = found[i].scope == "project"
			}
		}
	}
	all := append(flagEntries(paths), found...)
	markShadowed(all)
	if asJSON {
		out := make([]extListEntry, 0, len(all))
		for _, e := range all {
			m := e.spec.Manifest
			le := extListEntry{
				Name: e.name, Version: m.Version, Source: e.scope, Enabled: e.enabled(), Trusted: !e.untrusted, State: e.state(),
				Language: m.Language, Description: m.Description, Folder: e.dir, Manifest: e.file, Exec: e.spec.Exec,
			}
			if e.err != nil {
				le.Error = e.err.Error()
			}
			out = append(out, le)
		}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the list: %w", err)
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	if len(all) == 0 {
		fmt.Fprintf(w, "no extensions in %s or %s\n", x.global, x.project)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSTATE\tSCOPE\tLANGUAGE\tDIR")
	var problems []string
	for _, e := range all {
		if e.err != nil {
			problems = append(problems, e.err.Error())
		}
		m := e.spec.Manifest
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.name, dash(m.Version), e.state(), e.scope, dash(m.Language), e.dir)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if untrusted != nil {
		fmt.Fprintln(w, untrustedHint(*untrusted))
	}
	return nil
}

// untrustedHint says why the project's extensions are not started, and
// how to trust the folder.
func untrustedHint(d trust.Decision) string {
	if d.Project.Foreign != "" {
		return fmt.Sprintf("the project's extensions are untrusted: %s; pass --trust-project to a session to run them this once", d.Reason())
	}
	return fmt.Sprintf("the project's extensions are untrusted: %s, so no session starts them; run %s to trust it, or pass --trust-project to a session for one run",
		strings.Replace(d.Reason(), "the folder", "the folder "+d.Project.Dir, 1), d.TrustCommand())
}
