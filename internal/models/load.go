package models

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models/strictjson"
	"zot.dev/zot/internal/registry"
)

// Load returns the built-in catalog with the models of the user file at path
// merged in (see [Catalog.MergeJSON] for the format).
func Load(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading model file: %w", err)
	}
	c := Builtin()
	if err := c.MergeJSON(data, path); err != nil {
		return nil, err
	}
	return c, nil
}

// The fields of a model entry in a user file.
var entryFields = []string{
	"id", "provider", "name", "context_window", "max_output",
	"reasoning", "images", "input", "output", "cache_read", "cache_write",
	"reasoning_control", "always_reasons", "no_chat_tools_reasoning",
	"reasoning_levels", "thinks_by_default", "bound_thinking",
}

// MergeJSON merges the models of a user file into c. name names the file in
// errors. The file is one JSON object:
//
//	{"models": [{"id": "my-model", "provider": "openai", "context_window": 32000,
//	             "max_output": 4096, "input": 0.5, "output": 1.5}]}
//
// "id" (a non-empty string) and "provider" (one of [registry.Names], or an
// alias) are required. The other fields are "name" (string),
// "context_window" and "max_output" (positive integers), "reasoning" and
// "images" (booleans), "input", "output", "cache_read" and "cache_write"
// (non-negative USD per million tokens), and the request capabilities
// "reasoning_control" ("budget" or "effort"), "always_reasons" and
// "no_chat_tools_reasoning" (booleans). A field left out keeps the value of
// the model being overridden, or for a new model the value
// [Catalog.Resolve] gives unknown ids.
//
// Decoding is strict: an unknown field, a value of the wrong type, a missing
// id or provider, or the same model twice is an error that names the file
// and the entry, and then nothing is merged.
func (c *Catalog) MergeJSON(data []byte, name string) error {
	root, err := strictjson.Parse(data, name)
	if err != nil {
		return err
	}
	top, err := root.Object()
	if err != nil {
		return err
	}
	if err := top.Allow("models"); err != nil {
		return err
	}
	list, err := top.Require("models")
	if err != nil {
		return err
	}
	entries, err := list.Array()
	if err != nil {
		return err
	}
	seen := map[key]string{}
	var out []Model
	for _, e := range entries {
		m, err := c.decodeEntry(e)
		if err != nil {
			return err
		}
		k := key{family(m.Provider), m.ID}
		if first, dup := seen[k]; dup {
			return e.Errorf("%s model %q is already defined at %s", m.Provider, m.ID, first)
		}
		seen[k] = e.Path()
		out = append(out, m)
	}
	c.Merge(out)
	return nil
}

// decodeEntry decodes one model entry over the model it overrides.
func (c *Catalog) decodeEntry(v strictjson.Value) (Model, error) {
	o, err := v.Object()
	if err != nil {
		return Model{}, err
	}
	if err := o.Allow(entryFields...); err != nil {
		return Model{}, err
	}
	id, err := requiredString(o, "id")
	if err != nil {
		return Model{}, err
	}
	provider, err := requiredString(o, "provider")
	if err != nil {
		return Model{}, err
	}
	if !registry.Known(provider) {
		f, _ := o.Get("provider")
		return Model{}, f.Errorf("unknown provider %q (known: %s)", provider, strings.Join(registry.Names(), ", "))
	}
	m := c.Resolve(provider, id)
	if err := decodeFields(o, &m); err != nil {
		return Model{}, err
	}
	for _, name := range []string{"input", "output", "cache_read", "cache_write"} {
		if _, ok := o.Get(name); ok {
			m.Unpriced = false // a price given, if only $0, is a price
		}
	}
	return m, nil
}

// requiredString returns the non-empty string field name of o.
func requiredString(o *strictjson.Object, name string) (string, error) {
	f, err := o.Require(name)
	if err != nil {
		return "", err
	}
	s, err := f.String()
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", f.Errorf("must not be empty")
	}
	return s, nil
}

// decodeFields sets the optional fields of m that o has, checking them in
// the order of entryFields so that the first bad field is always the one
// reported.
func decodeFields(o *strictjson.Object, m *Model) error {
	ints := map[string]*int{"context_window": &m.ContextWindow, "max_output": &m.MaxOutput}
	bools := map[string]*bool{"reasoning": &m.Reasoning, "images": &m.Images,
		"always_reasons": &m.AlwaysReasons, "no_chat_tools_reasoning": &m.NoChatToolsReasoning,
		"thinks_by_default": &m.ThinksByDefault, "bound_thinking": &m.BoundThinking}
	prices := map[string]*float64{"input": &m.Input, "output": &m.Output, "cache_read": &m.CacheRead, "cache_write": &m.CacheWrite}
	for _, name := range entryFields {
		f, ok := o.Get(name)
		if !ok {
			continue
		}
		var err error
		switch {
		case name == "name":
			m.Name, err = f.String()
		case name == "reasoning_control":
			var c string
			if c, err = f.String(); err == nil {
				switch llm.ReasoningControl(c) {
				case "", llm.ReasoningBudget, llm.ReasoningEffort:
					m.ReasoningControl = llm.ReasoningControl(c)
				default:
					err = f.Errorf("want \"budget\", \"effort\" or \"\", got %q", c)
				}
			}
		case name == "reasoning_levels":
			m.Efforts, err = decodeLevels(f)
		case ints[name] != nil:
			*ints[name], err = f.Int(1, math.MaxInt32)
		case bools[name] != nil:
			*bools[name], err = f.Bool()
		case prices[name] != nil:
			*prices[name], err = f.Float()
			if err == nil && *prices[name] < 0 {
				err = f.Errorf("a price must not be negative")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeLevels reads a list of reasoning levels, each once, and returns
// them in llm.ReasoningLevels order (an empty list: the model takes none).
func decodeLevels(f strictjson.Value) ([]string, error) {
	items, err := f.Array()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, it := range items {
		l, err := it.String()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(llm.ReasoningLevels, l) {
			return nil, it.Errorf("want one of %s, got %q", strings.Join(llm.ReasoningLevels, ", "), l)
		}
		if seen[l] {
			return nil, it.Errorf("%q is listed twice", l)
		}
		seen[l] = true
	}
	out := []string{}
	for _, l := range llm.ReasoningLevels {
		if seen[l] {
			out = append(out, l)
		}
	}
	return out, nil
}
