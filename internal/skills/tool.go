package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"zot.dev/zot/internal/tools"
)

// ToolName is the name of the skill tool.
const ToolName = "skill"

// Tool is the skill tool: it gives the model a skill's instructions, or a
// file of its folder, when the model asks. It only reads.
type Tool struct{ set *Set }

// NewTool returns the skill tool over set (nil: a tool that knows no
// skill, for checking tool names).
func NewTool(set *Set) *Tool { return &Tool{set: set} }

var _ tools.Tool = (*Tool)(nil)

// Name returns "skill".
func (*Tool) Name() string { return ToolName }

// Description tells the model when to call it.
func (*Tool) Description() string {
	return "Load a skill listed under Skills in the system prompt: its instructions, then, as they direct, " +
		"a file or folder inside the skill's folder (file: a path relative to that folder). Load a skill " +
		"before starting a task its description matches."
}

// Schema is the schema of its arguments.
func (*Tool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name, as listed under Skills."},
    "file": {"type": "string", "description": "A file or folder inside the skill's folder, relative to it (e.g. references/forms.md). Absent: the skill's instructions."}
  },
  "required": ["name"],
  "additionalProperties": false
}`)
}

// ReadOnly reports that the tool changes nothing.
func (*Tool) ReadOnly() bool { return true }

// Run loads what the call asks for.
func (t *Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var args struct {
		Name *string `json:"name"`
		File string  `json:"file"`
	}
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return tools.Errorf("invalid arguments: " + err.Error()), nil
	}
	if args.Name == nil || *args.Name == "" {
		return tools.Errorf("invalid arguments: name is required"), nil
	}
	if ctx.Err() != nil {
		return tools.Errorf("aborted"), nil
	}
	l, err := t.set.Load(*args.Name, args.File)
	if err != nil {
		return tools.Errorf(t.explain(*args.Name, args.File, err)), nil
	}
	return tools.Text(Render(l)), nil
}

// explain words a failed load for the model.
func (t *Tool) explain(name, file string, err error) string {
	if _, ok := t.set.Lookup(name); !ok {
		var names []string
		for _, sk := range t.set.Skills() {
			names = append(names, sk.Name)
		}
		if len(names) == 0 {
			return fmt.Sprintf("no skill named %q: this session has no skills", name)
		}
		return fmt.Sprintf("no skill named %q; the skills are: %s", name, strings.Join(names, ", "))
	}
	switch {
	case errors.Is(err, ErrOutside):
		return fmt.Sprintf("refused: %s is outside the folder of skill %s; the skill tool reads only files inside it", file, name)
	case errors.Is(err, ErrNotFound):
		return fmt.Sprintf("skill %s has no file %s", name, file)
	}
	return err.Error()
}

// Render is what the skill tool gives the model for l.
func Render(l Loaded) string {
	var b strings.Builder
	if l.Path == FileName {
		fmt.Fprintf(&b, "Skill %s (folder %s). Paths in it are relative to that folder: read its files with this tool's file argument; run its scripts from that folder.\n\n", l.Skill.Name, l.Skill.Dir)
		b.WriteString(l.Text)
		if len(l.Files) > 0 {
			b.WriteString("\n\nFiles in the skill's folder:")
			for _, f := range l.Files {
				b.WriteString("\n- ")
				b.WriteString(f)
			}
			if len(l.Files) >= maxListed {
				b.WriteString("\n- … (more not listed)")
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, "Skill %s, %s:\n\n", l.Skill.Name, l.Path)
	b.WriteString(l.Text)
	if l.Truncated {
		fmt.Fprintf(&b, "\n\n[cut: only the first %d KiB of %s are shown]", MaxFileBytes>>10, l.Path)
	}
	return b.String()
}
