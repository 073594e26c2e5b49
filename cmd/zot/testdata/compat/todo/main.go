// todo is an extension of a panel and a tool written against upstream
// zot's Go extension package; only its import line names zot.dev/zot's
// compatibility package instead. The tests of cmd/zot build it and drive
// it through `zot rpc`.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	ext "zot.dev/zot/sdk/ext/compat"
)

const panelID = "todo-main"

type item struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
}

type list struct {
	mu     sync.Mutex
	file   string
	items  []item
	cursor int
	draft  string
	closes int
}

func (l *list) save() {
	data, _ := json.MarshalIndent(l.items, "", "  ")
	if l.file != "" {
		_ = os.WriteFile(l.file, data, 0o644)
	}
}

// panel is what the panel shows, under l.mu.
func (l *list) panel() ext.Panel {
	lines := []string{}
	for i, it := range l.items {
		mark, box := "  ", "□"
		if i == l.cursor {
			mark = "▸ "
		}
		if it.Done {
			box = "✓"
		}
		lines = append(lines, mark+box+" "+it.Text)
	}
	if len(lines) == 0 {
		lines = append(lines, "(nothing to do)")
	}
	lines = append(lines, "> "+l.draft)
	return ext.Panel{ID: panelID, Title: fmt.Sprintf("Todos (%d)", len(l.items)), Lines: lines, Footer: "type + enter: add · ↑/↓ · space: done · esc: close"}
}

func main() {
	e := ext.New("todo", "1.4.0")
	l := &list{}

	e.OnHello(func(h ext.HostInfo) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.file = filepath.Join(h.DataDir, "todos.json")
		if data, err := os.ReadFile(l.file); err == nil {
			_ = json.Unmarshal(data, &l.items)
		}
	})

	e.Command("todo", "open the todo panel", func(args string) ext.Response {
		l.mu.Lock()
		defer l.mu.Unlock()
		p := l.panel()
		return ext.OpenPanel(p.ID, p.Title, p.Lines, p.Footer)
	})
	e.Command("todo-closed", "how often the panel was closed", func(args string) ext.Response {
		l.mu.Lock()
		defer l.mu.Unlock()
		return ext.Display(fmt.Sprintf("closed %d times", l.closes))
	})

	e.OnPanelKey(panelID, func(key, text string) {
		l.mu.Lock()
		switch key {
		case "rune":
			if text == " " && l.draft == "" && l.cursor < len(l.items) {
				l.items[l.cursor].Done = !l.items[l.cursor].Done
				l.save()
			} else {
				l.draft += text
			}
		case "backspace":
			if l.draft != "" {
				l.draft = l.draft[:len(l.draft)-1]
			}
		case "enter":
			if l.draft != "" {
				l.items = append(l.items, item{Text: l.draft})
				l.draft = ""
				l.cursor = len(l.items) - 1
				l.save()
			}
		case "up":
			if l.cursor > 0 {
				l.cursor--
			}
		case "down":
			if l.cursor < len(l.items)-1 {
				l.cursor++
			}
		case "esc":
			l.mu.Unlock()
			e.ClosePanel(panelID)
			return
		}
		p := l.panel()
		l.mu.Unlock()
		e.RenderPanel(p.ID, p.Title, p.Lines, p.Footer)
	}, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.closes++
	})

	// Only the panel may wipe the list.
	var noWipe ext.InterceptHandler = func(toolName string, args json.RawMessage) (bool, string) {
		if toolName == "todo" && strings.Contains(string(args), `"wipe"`) {
			return false, "todo: the list can only be wiped by hand"
		}
		return true, ""
	}
	e.InterceptToolCall(noWipe)

	e.Tool("todo", "Manage the user's todo list: add an item, list them, or show the panel.",
		json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["add","list","show","wipe"]},"text":{"type":"string"}},"required":["action"]}`),
		func(args json.RawMessage) ext.ToolResult {
			var in struct{ Action, Text string }
			if err := json.Unmarshal(args, &in); err != nil {
				return ext.TextErrorResult("todo: " + err.Error())
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			switch in.Action {
			case "add":
				if in.Text == "" {
					return ext.TextErrorResult("todo: add needs a text")
				}
				l.items = append(l.items, item{Text: in.Text})
				l.save()
			case "show":
				p := l.panel()
				e.OpenPanel(p.ID, p.Title, p.Lines, p.Footer)
				return ext.TextResult("the panel is open")
			case "list":
			default:
				return ext.TextErrorResult("todo: unknown action " + in.Action)
			}
			var b strings.Builder
			for i, it := range l.items {
				fmt.Fprintf(&b, "%d. %v %s\n", i+1, it.Done, it.Text)
			}
			return ext.TextResult(strings.TrimSuffix(b.String(), "\n"))
		})

	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}
