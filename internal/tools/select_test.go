package tools

import (
	"strings"
	"testing"
)

func names(ts []Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return strings.Join(out, ",")
}

func TestSelect(t *testing.T) {
	all := Builtins(Config{CWD: t.TempDir()})
	got, err := Select(all, nil, false)
	if err != nil || names(got) != names(all) {
		t.Errorf("nil names: %v %v", names(got), err)
	}
	got, err = Select(all, nil, true)
	if err != nil || len(got) != 0 {
		t.Errorf("none: %v %v", names(got), err)
	}
	got, err = Select(all, []string{"ls", "read", "bash", "read"}, false)
	if err != nil || names(got) != "read,bash,ls" {
		t.Errorf("subset: %q %v", names(got), err)
	}
	_, err = Select(all, []string{"read", "shell", "web"}, false)
	if err == nil {
		t.Fatal("unknown names: no error")
	}
	for _, want := range []string{`"shell"`, `"web"`, "known: read, write, edit, bash, grep, find, ls"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if _, err := Select(all, []string{"read"}, true); err == nil {
		t.Error("none with names: no error")
	}
}
