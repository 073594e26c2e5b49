package models

import (
	"sort"
	"sync"
)

// Catalog is a set of models keyed by provider and id, with a default model
// per provider. It is safe for concurrent use.
//
// The "openai" and "openai-responses" providers share one list: a model
// added under either name is seen by both, and lookups through either name
// return the model with Provider set to the name asked for.
type Catalog struct {
	mu       sync.RWMutex
	models   map[key]Model
	aliases  map[key]alias
	defaults map[string]string // by family
	// underived marks the built-in models that still lack what the family
	// rules say of them (withFamily): it is added as a model is read, so a
	// process that reads one model (every door at start) does not apply
	// the rules to all of them.
	underived map[key]bool
}

// alias is a second id of a model of the catalog: a dated snapshot, sent
// as given, or a retired id, for which the successor's id is sent.
type alias struct {
	provider, id string
	to           string // the model's id in the catalog
	retired      bool   // the id no longer works: use to instead
}

// key identifies a model within a catalog.
type key struct{ family, id string }

// newCatalog returns an empty catalog.
func newCatalog() *Catalog {
	return &Catalog{models: map[key]Model{}, aliases: map[key]alias{}, defaults: map[string]string{}, underived: map[key]bool{}}
}

// Builtin returns a new catalog holding zot's built-in models. Each call
// returns a fresh copy, so merging into it affects no other catalog.
func Builtin() *Catalog {
	c := newCatalog()
	for _, list := range [][]Model{anthropicModels, openaiModels, geminiModels, deepseekModels, kimiModels, scriptedModels} {
		for _, m := range list {
			k := key{family(m.Provider), m.ID}
			c.models[k], c.underived[k] = m, true
		}
	}
	for _, list := range [][]alias{anthropicAliases, deepseekAliases} {
		for _, a := range list {
			c.aliases[key{family(a.provider), a.id}] = a
		}
	}
	for p, id := range builtinDefaults {
		c.defaults[p] = id
	}
	return c
}

// withFamily fills in what the family rules say of a built-in model and
// its entry leaves out: the reasoning levels it takes and whether its
// thinking is bound to the conversation.
func withFamily(m Model) Model {
	if f, ok := byFamily(family(m.Provider), m.ID); ok {
		if m.Efforts == nil {
			m.Efforts = f.Efforts
		}
		m.BoundThinking = m.BoundThinking || f.BoundThinking
	}
	return m
}

// Lookup returns the model id of provider, and false when the catalog does
// not hold it.
//
// An alias of a model (a dated snapshot) returns that model under the id
// asked for. A retired id returns its successor, whose id is then the one
// sent; [Catalog.Successor] says whether that happened.
func (c *Catalog) Lookup(provider, id string) (Model, bool) {
	c.mu.RLock()
	k := key{family(provider), id}
	m, ok := c.models[k]
	if !ok {
		if a, isAlias := c.aliases[k]; isAlias {
			k = key{family(provider), a.to}
			m, ok = c.models[k]
			if ok && !a.retired {
				m.ID = id
			}
		}
	}
	underived := c.underived[k]
	c.mu.RUnlock()
	if underived {
		m = withFamily(m)
	}
	if !ok {
		return Model{}, false
	}
	m.Provider = provider
	return m, true
}

// Successor returns the model that answers a retired id of provider, and
// false when id is not a retired id.
func (c *Catalog) Successor(provider, id string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, ok := c.models[key{family(provider), id}]; ok {
		return "", false
	}
	a, ok := c.aliases[key{family(provider), id}]
	if !ok || !a.retired {
		return "", false
	}
	return a.to, true
}

// Resolve returns the model id of provider. An id the catalog does not hold
// is allowed: the family rules of its vendor give what its id says of it
// (how it reasons, which endpoint it needs, its limits; see byFamily), and
// otherwise it gets [DefaultContextWindow], an unknown output limit, no
// reasoning and no images. Either way it is Unpriced, with Name set to the
// id.
func (c *Catalog) Resolve(provider, id string) Model {
	if m, ok := c.Lookup(provider, id); ok {
		return m
	}
	m, ok := byFamily(family(provider), id)
	if !ok {
		m = Model{ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput}
	}
	m.ID, m.Provider, m.Name, m.Unpriced = id, provider, id, true
	return m
}

// List returns the models of provider sorted by id. It is empty for a
// provider with no models.
func (c *Catalog) List(provider string) []Model {
	f := family(provider)
	c.mu.RLock()
	var out []Model
	for k, m := range c.models {
		if k.family == f {
			if c.underived[k] {
				m = withFamily(m)
			}
			m.Provider = provider
			out = append(out, m)
		}
	}
	c.mu.RUnlock()
	// sort.Slice rather than slices.SortFunc: the generic sort is compiled
	// anew for each struct type, 10–20 KB of code that every start maps in.
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Default returns the default model id of provider, and false when the
// provider has none.
func (c *Catalog) Default(provider string) (string, bool) {
	c.mu.RLock()
	id, ok := c.defaults[family(provider)]
	c.mu.RUnlock()
	return id, ok
}

// Merge adds the models of user to c, replacing any model with the same
// provider and id. Within an entry, an empty Name and a zero ContextWindow or
// MaxOutput are taken from the model it replaces, or else from the unknown-
// model defaults (the id, [DefaultContextWindow], [DefaultMaxOutput]); every
// other field, prices included, is taken as given. Merge does not validate
// provider names; [Load] does.
func (c *Catalog) Merge(user []Model) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range user {
		k := key{family(m.Provider), m.ID}
		old, ok := c.models[k]
		if !ok {
			old = Model{Name: m.ID, ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput}
		}
		if m.Name == "" {
			m.Name = old.Name
		}
		if m.ContextWindow == 0 {
			m.ContextWindow = old.ContextWindow
		}
		if m.MaxOutput == 0 {
			m.MaxOutput = old.MaxOutput
		}
		c.models[k] = m
		delete(c.underived, k)
	}
}

// builtinDefaults is the default model id of each provider family.
var builtinDefaults = map[string]string{
	"anthropic": "claude-sonnet-5-5",
	"openai":    "gpt-6.1-sol",
	"gemini":    "gemini-3.8-flash",
	"deepseek":  "deepseek-flash",
	"kimi":      "kimi-for-coding",
	"scripted":  "scripted",
}
