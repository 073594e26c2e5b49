package home

import (
	"errors"
	"path/filepath"
	"testing"
)

func env(vars map[string]string, goos string, dirs ...string) Env {
	return Env{
		Getenv:  func(k string) string { return vars[k] },
		UserDir: func() (string, error) { return "/u", nil },
		GOOS:    goos,
		IsDir: func(p string) bool {
			for _, d := range dirs {
				if d == p {
					return true
				}
			}
			return false
		},
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name   string
		env    Env
		dir    string
		legacy bool
	}{
		{"ZOT_HOME wins", env(map[string]string{"ZOT_HOME": "/z", "XDG_STATE_HOME": "/x"}, "linux", "/u/.zot"), "/z", false},
		{"XDG state", env(map[string]string{"XDG_STATE_HOME": "/x"}, "linux"), "/x/zot", false},
		{"relative XDG is ignored", env(map[string]string{"XDG_STATE_HOME": "x"}, "linux"), "/u/.local/state/zot", false},
		{"linux default", env(nil, "linux"), "/u/.local/state/zot", false},
		{"macOS", env(nil, "darwin"), "/u/Library/Application Support/zot", false},
		{"legacy kept", env(nil, "linux", "/u/.zot"), "/u/.zot", true},
		{"new default beats legacy", env(nil, "linux", "/u/.zot", "/u/.local/state/zot"), "/u/.local/state/zot", false},
	}
	for _, tc := range cases {
		h, err := Resolve(tc.env)
		if err != nil || h.Dir != filepath.FromSlash(tc.dir) || h.Legacy != tc.legacy {
			t.Errorf("%s: %+v, %v; want %s legacy=%v", tc.name, h, err, tc.dir, tc.legacy)
		}
		if (h.Notice() != "") != tc.legacy {
			t.Errorf("%s: notice %q", tc.name, h.Notice())
		}
	}
	h, _ := Resolve(env(nil, "linux"))
	if h.AuthFile() != "/u/.local/state/zot/auth.json" || h.Sessions() != "/u/.local/state/zot/sessions" || h.Socket() != "/u/.local/state/zot/daemon.sock" {
		t.Errorf("paths %s %s %s", h.AuthFile(), h.Sessions(), h.Socket())
	}
}

func TestResolveWithoutAHome(t *testing.T) {
	e := env(nil, "linux")
	e.UserDir = func() (string, error) { return "", errors.New("no HOME") }
	if _, err := Resolve(e); err == nil {
		t.Error("no home directory and no ZOT_HOME resolved")
	}
}
