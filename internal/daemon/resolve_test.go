package daemon

import (
	"strings"
	"testing"

	"zot.dev/zot/internal/home"
)

func TestResolveSocket(t *testing.T) {
	long := "/h/" + strings.Repeat("d", maxSocketPath)
	env := func(vars map[string]string, dir string) *Env {
		return &Env{
			Getenv:  func(k string) string { return vars[k] },
			Home:    func() (home.Home, error) { return home.Home{Dir: dir}, nil },
			TempDir: func() string { return "/tmp" },
			UID:     1000,
		}
	}
	cases := []struct {
		name     string
		vars     map[string]string
		dir      string
		want     string // prefix of the path
		fallback bool
		err      string
	}{
		{"default", nil, "/home/u/.local/state/zot", "/home/u/.local/state/zot/daemon.sock", false, ""},
		{"override", map[string]string{"ZOT_SOCKET": "/run/z.sock"}, long, "/run/z.sock", false, ""},
		{"override too long", map[string]string{"ZOT_SOCKET": long}, "/h", "", false, "ZOT_SOCKET"},
		{"runtime dir", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, long, "/run/user/1000/zot/", true, ""},
		{"temp dir", nil, long, "/tmp/zot-1000/", true, ""},
		{"nothing fits", map[string]string{"XDG_RUNTIME_DIR": long}, long, "", false, "set ZOT_SOCKET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ResolveSocket(env(tc.vars, tc.dir))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error with %q", s, err, tc.err)
				}
				return
			}
			if err != nil || !strings.HasPrefix(s.Path, tc.want) || s.Fallback != tc.fallback || len(s.Path) > maxSocketPath {
				t.Fatalf("got %+v, %v; want %s… fallback %v", s, err, tc.want, tc.fallback)
			}
		})
	}
	// Two homes never share a fallback endpoint.
	a, _ := ResolveSocket(env(nil, long+"a"))
	b, _ := ResolveSocket(env(nil, long+"b"))
	if a.Path == b.Path {
		t.Errorf("two homes share %s", a.Path)
	}
}
