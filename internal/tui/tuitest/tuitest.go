// Package tuitest helps the terminal client's tests: keys from their
// names, a view as plain text with reverse video marked, and golden files
// that `go test -update` rewrites.
package tuitest

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// Update is the -update flag: golden files are written, not compared.
var Update = flag.Bool("update", false, "rewrite the golden files of the screens")

// Key is the key press named like Bubble Tea's Keystroke: "a", "A", "enter",
// "shift+enter", "alt+b", "ctrl+w", "up", "space", "esc".
func Key(name string) tea.KeyPressMsg {
	var k tea.KeyPressMsg
	parts := strings.Split(name, "+")
	base := parts[len(parts)-1]
	if base == "" && len(parts) > 1 { // "ctrl++"
		base = "+"
	}
	for _, mod := range parts[:len(parts)-1] {
		switch mod {
		case "ctrl":
			k.Mod |= tea.ModCtrl
		case "alt":
			k.Mod |= tea.ModAlt
		case "shift":
			k.Mod |= tea.ModShift
		case "super":
			k.Mod |= tea.ModSuper
		}
	}
	if code, ok := special[base]; ok {
		k.Code = code
		if code == tea.KeySpace && k.Mod == 0 {
			k.Text = " "
		}
		return k
	}
	r, _ := utf8.DecodeRuneInString(base)
	k.Code = r
	if k.Mod&^tea.ModShift == 0 {
		k.Text = base
	}
	return k
}

var special = map[string]rune{
	"enter": tea.KeyEnter, "tab": tea.KeyTab, "backspace": tea.KeyBackspace,
	"esc": tea.KeyEscape, "space": tea.KeySpace, "up": tea.KeyUp, "down": tea.KeyDown,
	"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd,
	"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "delete": tea.KeyDelete,
}

// Type is the key presses that type s, one per character.
func Type(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		if r == ' ' {
			out = append(out, Key("space"))
			continue
		}
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// Screen is a view as plain text: styles dropped, reverse video (the
// cursor, a selection) marked ⟨like this⟩, trailing spaces cut.
func Screen(view string) string {
	var b strings.Builder
	rev := false
	for i := 0; i < len(view); {
		if view[i] == 0x1b && i+1 < len(view) && view[i+1] == '[' {
			j := i + 2
			for j < len(view) && (view[j] < 0x40 || view[j] > 0x7e) {
				j++
			}
			if j < len(view) && view[j] == 'm' {
				on := sgrReverse(view[i+2:j], rev)
				if on != rev {
					if on {
						b.WriteString("⟨")
					} else {
						b.WriteString("⟩")
					}
					rev = on
				}
			}
			i = j + 1
			continue
		}
		if view[i] == 0x1b { // another escape: drop it and its final byte
			i += 2
			continue
		}
		b.WriteByte(view[i])
		i++
	}
	if rev {
		b.WriteString("⟩")
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// sgrReverse says whether reverse video is on after the SGR parameters
// params, given whether it was on before.
func sgrReverse(params string, on bool) bool {
	if params == "" {
		return false
	}
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(strings.SplitN(ps[i], ":", 2)[0])
		switch n {
		case 0:
			on = false
		case 7:
			on = true
		case 27:
			on = false
		case 38, 48, 58: // extended colours: skip their arguments
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		}
	}
	return on
}

// Golden compares got with the file testdata/<name>.golden, or writes it
// under -update.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if *Update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("screen %s differs from %s (go test -update rewrites it)\n--- want\n%s\n--- got\n%s", name, file, want, got)
	}
}
