package agent

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

// BuiltinSource names the built-in tools in a ToolSet.
const BuiltinSource = "builtin"

// ToolSet is the set of tools a session offers the model: the built-in
// tools and whatever other sources (extensions, MCP servers) add. The
// agent reads it at the start of every step, so a change made while a
// prompt runs is seen by the next model call; the calls of one step always
// run against the set that step offered.
//
// Names are unique in what the model sees. When two sources offer the
// same name the built-in tool wins, then the source added first; the
// losing tool is left out and reported to the conflict callback. A
// ToolSet is safe for concurrent use.
type ToolSet struct {
	onConflict func(name, kept, dropped string)

	mu      sync.Mutex
	sources []toolSource // in the order they were first set; builtin first
	view    atomic.Pointer[ToolView]
}

// toolSource is the tools one source offers.
type toolSource struct {
	name  string
	tools []tools.Tool
}

// ToolView is an immutable snapshot of a ToolSet.
type ToolView struct {
	list  []tools.Tool
	index map[string]tools.Tool
	owner map[string]string // the source of each tool offered
	specs []llm.ToolSpec
}

// NewToolSet returns a set holding the built-in tools. onConflict, when
// not nil, is told about every tool left out because its name was taken;
// it is called with the set's lock held and must not call back into it.
func NewToolSet(builtin []tools.Tool, onConflict func(name, kept, dropped string)) (*ToolSet, error) {
	s := &ToolSet{onConflict: onConflict}
	seen := make(map[string]bool, len(builtin))
	for _, t := range builtin {
		if t == nil {
			return nil, errors.New("agent: nil tool")
		}
		if seen[t.Name()] {
			return nil, fmt.Errorf("agent: two tools are named %q", t.Name())
		}
		seen[t.Name()] = true
	}
	s.sources = []toolSource{{name: BuiltinSource, tools: slices.Clone(builtin)}}
	s.rebuild()
	return s, nil
}

// Set replaces the tools that source offers (adding the source after the
// others when it is new). Setting BuiltinSource replaces the built-ins.
// Nil tools are skipped.
func (s *ToolSet) Set(source string, list []tools.Tool) {
	list = slices.DeleteFunc(slices.Clone(list), func(t tools.Tool) bool { return t == nil })
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.sources, func(src toolSource) bool { return src.name == source })
	if i < 0 {
		s.sources = append(s.sources, toolSource{name: source, tools: list})
	} else {
		s.sources[i].tools = list
	}
	s.rebuild()
}

// SourceTools is the tools one source offers, for SetSources.
type SourceTools struct {
	Source string
	Tools  []tools.Tool
}

// SetSources sets the tools of several sources (as Set does, in order)
// and drops the sources of drop (as Remove does) in one change: a reader
// sees all of it or none of it, and a tool is reported left out only when
// its name is still taken once every source is set, not when one source
// takes a name another gives up in the same change.
func (s *ToolSet) SetSources(set []SourceTools, drop []string) {
	lists := make([][]tools.Tool, len(set))
	for i, st := range set {
		lists[i] = slices.DeleteFunc(slices.Clone(st.Tools), func(t tools.Tool) bool { return t == nil })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources = slices.DeleteFunc(s.sources, func(src toolSource) bool {
		return src.name != BuiltinSource && slices.Contains(drop, src.name)
	})
	for i, st := range set {
		j := slices.IndexFunc(s.sources, func(src toolSource) bool { return src.name == st.Source })
		if j < 0 {
			s.sources = append(s.sources, toolSource{name: st.Source, tools: lists[i]})
		} else {
			s.sources[j].tools = lists[i]
		}
	}
	s.rebuild()
}

// Remove drops every tool of source. The built-in tools cannot be
// removed this way (set them to nil instead).
func (s *ToolSet) Remove(source string) {
	if source == BuiltinSource {
		s.Set(BuiltinSource, nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources = slices.DeleteFunc(s.sources, func(src toolSource) bool { return src.name == source })
	s.rebuild()
}

// Refresh reads the tools' descriptions again: a tool whose description
// follows a setting (bash's follows the session's sandbox) is offered as
// it reads now from the next step on. Nothing changes, and no conflict is
// reported again, when every description reads as before.
func (s *ToolSet) Refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.view.Load()
	var specs []llm.ToolSpec
	for i, t := range old.list {
		if d := t.Description(); d != old.specs[i].Description {
			if specs == nil {
				specs = slices.Clone(old.specs)
			}
			specs[i].Description = d
		}
	}
	if specs != nil {
		s.view.Store(&ToolView{list: old.list, index: old.index, owner: old.owner, specs: specs})
	}
}

// View returns the current snapshot.
func (s *ToolSet) View() *ToolView { return s.view.Load() }

// rebuild makes a new snapshot. The caller holds s.mu.
func (s *ToolSet) rebuild() {
	owner := make(map[string]string)
	v := &ToolView{index: make(map[string]tools.Tool), owner: owner}
	for _, src := range s.sources {
		for _, t := range src.tools {
			name := t.Name()
			if kept, taken := owner[name]; taken {
				if s.onConflict != nil {
					s.onConflict(name, kept, src.name)
				}
				continue
			}
			owner[name] = src.name
			v.list = append(v.list, t)
			v.index[name] = t
			v.specs = append(v.specs, llm.ToolSpec{Name: name, Description: t.Description(), Schema: t.Schema()})
		}
	}
	s.view.Store(v)
}

// Tools returns the tools in the order they are offered. The slice must
// not be modified.
func (v *ToolView) Tools() []tools.Tool { return v.list }

// Lookup returns the tool of that name.
func (v *ToolView) Lookup(name string) (tools.Tool, bool) {
	t, ok := v.index[name]
	return t, ok
}

// Source returns the source that offers the tool of that name
// (BuiltinSource, an extension's, an MCP server's, a client's), or "" when
// none does.
func (v *ToolView) Source(name string) string { return v.owner[name] }

// Specs returns what the model is told of each tool, in order.
func (v *ToolView) Specs() []llm.ToolSpec { return v.specs }

// Names lists the tools' names, sorted, or says there are none.
func (v *ToolView) Names() string {
	if len(v.list) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(v.list))
	for _, t := range v.list {
		names = append(names, t.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
