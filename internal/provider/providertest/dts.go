package providertest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The vendors' TypeScript SDK packages, pinned in testtools/package.json,
// declare their request types in .d.ts files. CheckDTS holds the
// transcribed VendorTypes to those declarations, so that a pinned version
// that adds a required member, drops one zot sends, or renames a type
// literal fails a test instead of a user's request.

// DTSMember is one member of a TypeScript interface.
type DTSMember struct {
	Optional bool
	// Type is the member's type as declared (one line, spaces collapsed).
	Type string
}

// DTSInterface is one interface: its own members and the interfaces it
// extends.
type DTSInterface struct {
	Members map[string]DTSMember
	Extends []string
}

var (
	dtsInterface = regexp.MustCompile(`^\s*(?:export\s+)?interface\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+extends\s+([^{]+))?\s*\{\s*$`)
	dtsNamespace = regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?namespace\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{$`)
	dtsMember    = regexp.MustCompile(`^\s*(?:readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)(\?)?:\s*(.*)$`)
)

// ParseDTS returns the interfaces declared in src, by name (an interface
// declared inside a namespace is named Namespace.Name).
func ParseDTS(src string) map[string]DTSInterface {
	out := map[string]DTSInterface{}
	var (
		ns        []string // enclosing namespaces
		nsDepth   []int
		cur       string
		curDepth  int
		depth     int
		inComment bool
		member    string // a member whose type goes on over more lines
	)
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if inComment {
			if strings.Contains(t, "*/") {
				inComment = false
			}
			continue
		}
		if strings.HasPrefix(t, "/*") {
			inComment = !strings.Contains(t, "*/")
			continue
		}
		if strings.HasPrefix(t, "//") {
			continue
		}
		if m := dtsNamespace.FindStringSubmatch(t); m != nil && cur == "" {
			ns = append(ns, m[1])
			nsDepth = append(nsDepth, depth)
			depth++
			continue
		}
		if m := dtsInterface.FindStringSubmatch(line); m != nil && cur == "" {
			cur = strings.Join(append(slices.Clone(ns), m[1]), ".")
			iface := DTSInterface{Members: map[string]DTSMember{}}
			for _, e := range strings.Split(m[2], ",") {
				if e = strings.TrimSpace(e); e != "" {
					iface.Extends = append(iface.Extends, strings.Join(append(slices.Clone(ns), e), "."), e)
				}
			}
			out[cur] = iface
			curDepth = depth
			depth++
			continue
		}
		if cur != "" && depth == curDepth+1 {
			if member != "" && (strings.HasPrefix(t, "|") || strings.HasPrefix(t, "&")) {
				mm := out[cur].Members[member]
				mm.Type += " " + t
				out[cur].Members[member] = mm
			} else if m := dtsMember.FindStringSubmatch(line); m != nil {
				out[cur].Members[m[1]] = DTSMember{Optional: m[2] == "?", Type: strings.TrimSpace(m[3])}
				member = m[1]
			}
		}
		depth += strings.Count(t, "{") - strings.Count(t, "}")
		if cur != "" && depth <= curDepth {
			cur, member = "", ""
		}
		for len(nsDepth) > 0 && depth <= nsDepth[len(nsDepth)-1] {
			ns, nsDepth = ns[:len(ns)-1], nsDepth[:len(nsDepth)-1]
		}
	}
	return out
}

// members returns the members of name with those of the interfaces it
// extends (its own win).
func members(ifaces map[string]DTSInterface, name string) (map[string]DTSMember, bool) {
	iface, ok := ifaces[name]
	if !ok {
		return nil, false
	}
	out := map[string]DTSMember{}
	for _, e := range iface.Extends {
		if m, ok := members(ifaces, e); ok {
			for k, v := range m {
				out[k] = v
			}
		}
	}
	for k, v := range iface.Members {
		out[k] = v
	}
	return out, true
}

// SDKFile returns the path of file in the vendor SDK packages that
// testtools/ installs, skipping the test when they are not installed
// (`make testtools`), unless ZOT_E2E_REQUIRED is set.
func SDKFile(t testing.TB, file string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "testtools", "node_modules", file)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	msg := "the vendor SDK packages are not installed (" + file + "): run make testtools"
	if os.Getenv("ZOT_E2E_REQUIRED") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// LoadDTS parses the declaration files of the SDK packages (paths under
// testtools/node_modules), skipping the test when they are not installed.
func LoadDTS(t testing.TB, files ...string) map[string]DTSInterface {
	t.Helper()
	out := map[string]DTSInterface{}
	for _, f := range files {
		b, err := os.ReadFile(SDKFile(t, f))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range ParseDTS(string(b)) {
			if _, dup := out[k]; !dup {
				out[k] = v
			}
		}
	}
	return out
}

// CheckDTS checks each definition of vt named in names (definition →
// interface of the SDK package) against that interface: every member the
// definition lets zot send is declared, the definition requires exactly
// the members the interface does not mark optional, and its Type literal
// is the one the interface's tag member declares.
func (vt VendorTypes) CheckDTS(t testing.TB, ifaces map[string]DTSInterface, names map[string]string) {
	t.Helper()
	for def, iface := range names {
		d, ok := vt.Defs[def]
		if !ok {
			t.Errorf("%s: no such definition", def)
			continue
		}
		mem, ok := members(ifaces, iface)
		if !ok {
			t.Errorf("%s: the SDK declares no interface %s", def, iface)
			continue
		}
		for m := range d.Members {
			if _, ok := mem[m]; !ok {
				t.Errorf("%s: member %q is not in the SDK's %s", def, m, iface)
			}
		}
		var required []string
		for m, v := range mem {
			if !v.Optional && !strings.HasPrefix(v.Type, "never") {
				required = append(required, m)
			}
		}
		slices.Sort(required)
		want := slices.Sorted(slices.Values(d.Required))
		if !slices.Equal(required, want) {
			t.Errorf("%s: the SDK's %s requires %v, the definition %v", def, iface, required, want)
		}
		if d.Type != "" {
			tag := d.Tag
			if tag == "" {
				tag = "type"
			}
			if got := strings.TrimSuffix(mem[tag].Type, ";"); got != "'"+d.Type+"'" {
				t.Errorf("%s: the SDK's %s.%s is %s, the definition %q", def, iface, tag, got, d.Type)
			}
		}
	}
}
