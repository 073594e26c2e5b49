// Command todo is an example zot extension written with
// zot.dev/zot/sdk/ext: a todo list the user works in a panel (/todo) and
// the model works with a tool (todo). The list is kept in todos.json in
// the extension's data folder, so it survives restarts.
//
// Build it beside its manifest, then install it:
//
//	go build -o todo . && zot ext install .
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"zot.dev/zot/sdk/ext"
)

// panelID names the one panel the extension opens.
const panelID = "todo-main"

// item is one todo.
type item struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
}

// list is the todo list and the panel's cursor; its methods are safe for
// concurrent use (tool calls run concurrently with panel keys).
type list struct {
	mu     sync.Mutex
	file   string
	items  []item
	cursor int
}

func (l *list) load() error {
	data, err := os.ReadFile(l.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(data, &l.items)
}

// saveLocked writes the list through a temporary file, so a crash never
// leaves half a file.
func (l *list) saveLocked() error {
	data, err := json.MarshalIndent(l.items, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.file + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.file)
}

func (l *list) add(text string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, item{Text: text})
	return l.saveLocked()
}

// toggle flips item i (0-based).
func (l *list) toggle(i int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.items) {
		return fmt.Errorf("no todo number %d (there are %d)", i+1, len(l.items))
	}
	l.items[i].Done = !l.items[i].Done
	return l.saveLocked()
}

func (l *list) remove(i int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.items) {
		return fmt.Errorf("no todo number %d (there are %d)", i+1, len(l.items))
	}
	l.items = append(l.items[:i], l.items[i+1:]...)
	l.cursor = min(l.cursor, max(len(l.items)-1, 0))
	return l.saveLocked()
}

func (l *list) move(d int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cursor = min(max(l.cursor+d, 0), max(len(l.items)-1, 0))
}

func (l *list) current() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cursor
}

// text is the list as the model reads it.
func (l *list) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) == 0 {
		return "the todo list is empty"
	}
	var b strings.Builder
	for i, it := range l.items {
		mark := " "
		if it.Done {
			mark = "x"
		}
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, mark, it.Text)
	}
	return strings.TrimRight(b.String(), "\n")
}

// panel is the list as the user sees it.
func (l *list) panel() ext.Panel {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := ext.Panel{ID: panelID, Title: fmt.Sprintf("Todos (%d)", len(l.items)),
		Footer: "↑/↓ move · x done · d delete · esc close · /todo add <text>"}
	if len(l.items) == 0 {
		p.Lines = []string{"(nothing to do)"}
	}
	for i, it := range l.items {
		box := "□"
		if it.Done {
			box = "✓"
		}
		cur := "  "
		if i == l.cursor {
			cur = "▸ "
		}
		p.Lines = append(p.Lines, cur+box+" "+it.Text)
	}
	return p
}

var toolSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "add", "done", "remove"]},
    "text": {"type": "string", "description": "with add: the todo"},
    "number": {"type": "integer", "minimum": 1, "description": "with done and remove: the todo's number in the list"}
  },
  "required": ["action"]
}`)

func main() {
	e := ext.New("todo", "1.0.0")
	l := &list{}
	e.Init(func(ctx context.Context, host ext.HostInfo) error {
		l.file = filepath.Join(host.DataDir, "todos.json")
		return l.load()
	})

	e.Command("todo", "open the todo list, or /todo add <text>", func(ctx context.Context, args string) ext.Response {
		if text, ok := strings.CutPrefix(args, "add "); ok {
			if err := l.add(strings.TrimSpace(text)); err != nil {
				return ext.CommandError("todo: %v", err)
			}
			return ext.Display("added: " + strings.TrimSpace(text))
		}
		return ext.OpenPanel(l.panel())
	})
	e.OnPanelKey(func(ctx context.Context, k ext.PanelKey) {
		var err error
		switch {
		case k.Key == "up":
			l.move(-1)
		case k.Key == "down":
			l.move(1)
		case k.Key == "rune" && k.Text == "x", k.Key == "enter":
			err = l.toggle(l.current())
		case k.Key == "rune" && k.Text == "d", k.Key == "delete":
			err = l.remove(l.current())
		case k.Key == "esc":
			if err := e.ClosePanel(panelID); err != nil {
				e.Logf("closing the panel: %v", err)
			}
			return
		}
		if err != nil {
			_ = e.Notify(ext.LevelWarn, "todo: "+err.Error())
		}
		if err := e.RenderPanel(l.panel()); err != nil {
			e.Logf("rendering the panel: %v", err)
		}
	})

	e.Tool("todo", "Read and update the user's todo list: list it, add a todo, mark one done, remove one.", toolSchema,
		func(ctx context.Context, args json.RawMessage) ext.ToolResult {
			var in struct {
				Action string `json:"action"`
				Text   string `json:"text"`
				Number int    `json:"number"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return ext.ToolError("bad arguments: %v", err)
			}
			var err error
			switch in.Action {
			case "list":
			case "add":
				if strings.TrimSpace(in.Text) == "" {
					return ext.ToolError("add needs text")
				}
				err = l.add(strings.TrimSpace(in.Text))
			case "done":
				err = l.toggle(in.Number - 1)
			case "remove":
				err = l.remove(in.Number - 1)
			default:
				return ext.ToolError("unknown action %q: want list, add, done or remove", in.Action)
			}
			if err != nil {
				return ext.ToolError("%v", err)
			}
			return ext.Text(l.text())
		})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := e.Run(ctx); err != nil {
		e.Logf("todo: %v", err)
		os.Exit(1)
	}
}
