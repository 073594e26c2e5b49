package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"time"
	"unicode"
	"unicode/utf8"

	"zot.dev/zot/internal/atomicfile"
	"zot.dev/zot/internal/llm"
)

// Listed is what the models endpoints of the providers said they serve,
// as `zot models --refresh` caches it in the zot home
// (models-cache.json): per provider, when it was asked and each model's
// id with the limits it gave.
type Listed struct {
	Providers map[string]ListedProvider `json:"providers"`
}

// ListedProvider is one provider's answer.
type ListedProvider struct {
	// Fetched is when the endpoint was asked, in UTC.
	Fetched time.Time `json:"fetched"`
	// Models are the models it listed, sorted by id.
	Models []ListedModel `json:"models"`
}

// ListedModel is one model a models endpoint listed; a limit it did not
// give is 0 (and left out of the file).
type ListedModel struct {
	ID            string `json:"id"`
	ContextWindow int    `json:"context_window,omitempty"`
	MaxOutput     int    `json:"max_output,omitempty"`
}

// LoadListed reads the cache at path; a missing file is an empty cache.
func LoadListed(path string) (*Listed, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Listed{Providers: map[string]ListedProvider{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the models cache: %w", err)
	}
	var l Listed
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if l.Providers == nil {
		l.Providers = map[string]ListedProvider{}
	}
	return &l, nil
}

// MaxListed bounds the models cached for one provider: every zot start
// reads the cache, and the largest real lists (OpenRouter's) hold a few
// hundred.
const MaxListed = 5000

// maxListedID bounds the length of a listed model id.
const maxListedID = 256

// listedID reports whether id can be a model id: not empty, at most
// maxListedID bytes of UTF-8 without spaces or control characters (which
// `zot models` would otherwise print to a terminal as they came).
func listedID(id string) bool {
	if id == "" || len(id) > maxListedID || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// Set records what provider's endpoint listed at t and returns how many
// models it keeps: those whose id can be a model id (see listedID), each
// once, the first MaxListed of them in id order.
func (l *Listed) Set(provider string, t time.Time, list []llm.ListedModel) int {
	p := ListedProvider{Fetched: t.UTC(), Models: make([]ListedModel, 0, min(len(list), MaxListed))}
	for _, m := range list {
		if listedID(m.ID) {
			p.Models = append(p.Models, ListedModel{ID: m.ID, ContextWindow: max(m.ContextWindow, 0), MaxOutput: max(m.MaxOutput, 0)})
		}
	}
	// sort.Slice rather than slices.SortFunc: the generic sort is compiled
	// anew for each struct type, 10–20 KB of code that every start maps in.
	sort.Slice(p.Models, func(i, j int) bool { return p.Models[i].ID < p.Models[j].ID })
	p.Models = slices.CompactFunc(p.Models, func(a, b ListedModel) bool { return a.ID == b.ID })
	if len(p.Models) > MaxListed {
		p.Models = p.Models[:MaxListed]
	}
	l.Providers[provider] = p
	return len(p.Models)
}

// Save writes the cache to path (mode 0600, replacing the file whole).
func (l *Listed) Save(path string) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the models cache: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("writing the models cache: %w", err)
	}
	return nil
}

// AddListed adds to c the models of l that it does not hold: each gets
// what the family rules say of its id (see [Catalog.Resolve]), the limits
// its endpoint gave, and stays unpriced. Models c holds (built in, or from
// a model file) keep their facts.
func (c *Catalog) AddListed(l *Listed) {
	if l == nil {
		return
	}
	for provider, p := range l.Providers {
		for i, lm := range p.Models {
			if i >= MaxListed {
				break
			}
			if !listedID(lm.ID) {
				continue // a cache edited by hand
			}
			if _, ok := c.Lookup(provider, lm.ID); ok {
				continue
			}
			m := c.Resolve(provider, lm.ID)
			if lm.ContextWindow > 0 {
				m.ContextWindow = lm.ContextWindow
			}
			if lm.MaxOutput > 0 {
				m.MaxOutput = lm.MaxOutput
			}
			c.mu.Lock()
			c.models[key{family(provider), lm.ID}] = m
			c.mu.Unlock()
		}
	}
}
