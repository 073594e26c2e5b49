// Package registry is the one table of the providers zot knows: each
// one's name, the catalog family whose models it lists, where its API key
// comes from, whether it needs one, and how its client is built. The CLI's
// help, credential lookup, the model catalog and the engine all read it,
// so a provider is added in one place.
//
// Building reads nothing from the environment or the disk except a script
// file it is given; credential lookup (APIKey) is separate, so embedders
// stay hermetic.
package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/anthropic"
	"zot.dev/zot/internal/provider/gemini"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/openai"
	"zot.dev/zot/internal/provider/responses"
	"zot.dev/zot/internal/provider/scripted"
)

// Provider is one row of the table.
type Provider struct {
	// Name is the id given to --provider and Config.Provider.
	Name string
	// Family is the provider whose catalog models this one lists (the
	// OpenAI Chat Completions and Responses providers share model ids and
	// prices).
	Family string
	// Summary says in a few words what the provider talks to.
	Summary string
	// KeyVars are the environment variables that hold its API key, in the
	// order they are tried.
	KeyVars []string
	// Keyless is set for a provider that never needs a key.
	Keyless bool
	// Aliases are other names that select this provider.
	Aliases []string
	// build makes its client.
	build func(Spec) (llm.Provider, error)
	// list asks its models endpoint; nil for a provider without one.
	list func(context.Context, Spec) ([]llm.ListedModel, error)
}

// table lists the providers in the order help shows them.
var table = []Provider{
	{
		Name: "anthropic", Family: "anthropic", Summary: "Anthropic Messages API",
		KeyVars: []string{"ANTHROPIC_API_KEY"},
		build: func(s Spec) (llm.Provider, error) {
			return anthropic.New(anthropic.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Options: s.HTTP}), nil
		},
		list: func(ctx context.Context, s Spec) ([]llm.ListedModel, error) {
			return anthropic.ListModels(ctx, anthropic.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Options: s.HTTP})
		},
	},
	{
		Name: "openai", Family: "openai", Summary: "OpenAI Chat Completions and compatible servers",
		KeyVars: []string{"OPENAI_API_KEY"},
		build: func(s Spec) (llm.Provider, error) {
			// The models that refuse tools with reasoning on Chat
			// Completions are asked on the Responses API of the same base
			// URL.
			cfg := openai.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Options: s.HTTP,
				Responses: responses.New(responses.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Name: "openai", Options: s.HTTP})}
			return openai.New(cfg), nil
		},
		list: listCompatible("openai", ""),
	},
	{
		Name: "deepseek", Family: "deepseek", Summary: "DeepSeek API (Chat Completions)",
		KeyVars: []string{"DEEPSEEK_API_KEY"},
		build: func(s Spec) (llm.Provider, error) {
			return compatible("deepseek", deepseekBaseURL, s), nil
		},
		list: listCompatible("deepseek", deepseekBaseURL),
	},
	{
		Name: "ollama", Family: "ollama", Summary: "a local Ollama server (Chat Completions), no key",
		Keyless: true,
		build: func(s Spec) (llm.Provider, error) {
			return compatible("ollama", ollamaBaseURL, s), nil
		},
		list: listCompatible("ollama", ollamaBaseURL),
	},
	{
		Name: "kimi", Family: "kimi", Summary: "Kimi's coding API (Chat Completions)",
		KeyVars: []string{"KIMI_API_KEY", "MOONSHOT_API_KEY"}, Aliases: []string{"moonshot"},
		build: func(s Spec) (llm.Provider, error) {
			return compatible("kimi", kimiBaseURL, s), nil
		},
		list: listCompatible("kimi", kimiBaseURL),
	},
	{
		Name: "openai-responses", Family: "openai", Summary: "OpenAI Responses API",
		KeyVars: []string{"OPENAI_API_KEY"},
		build: func(s Spec) (llm.Provider, error) {
			return responses.New(responses.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Options: s.HTTP}), nil
		},
		list: listCompatible("openai-responses", ""),
	},
	{
		Name: "gemini", Family: "gemini", Summary: "Google Gemini API",
		KeyVars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Aliases: []string{"google"},
		build: func(s Spec) (llm.Provider, error) {
			return gemini.New(gemini.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Options: s.HTTP}), nil
		},
		list: func(ctx context.Context, s Spec) ([]llm.ListedModel, error) {
			return gemini.ListModels(ctx, gemini.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, Options: s.HTTP})
		},
	},
	{
		Name: "scripted", Family: "scripted", Summary: "plays a script offline, no key",
		Keyless: true,
		build:   buildScripted,
	},
}

// compatible returns the Chat Completions client of an OpenAI-compatible
// provider named name, at base unless spec gives a base URL.
func compatible(name, base string, s Spec) llm.Provider {
	if s.BaseURL != "" {
		base = s.BaseURL
	}
	return openai.New(openai.Config{Name: name, APIKey: s.APIKey, BaseURL: base, Options: s.HTTP})
}

// listCompatible lists the models of an OpenAI-compatible provider named
// name, under base unless the spec gives a base URL ("" for OpenAI's own).
func listCompatible(name, base string) func(context.Context, Spec) ([]llm.ListedModel, error) {
	return func(ctx context.Context, s Spec) ([]llm.ListedModel, error) {
		root := base
		if s.BaseURL != "" {
			root = s.BaseURL
		}
		return openai.ListModels(ctx, openai.Config{Name: name, APIKey: s.APIKey, BaseURL: root, Options: s.HTTP})
	}
}

// ListModels asks the models endpoint of spec's provider which models it
// serves (ids, and the limits it gives).
func ListModels(ctx context.Context, spec Spec) ([]llm.ListedModel, error) {
	p, ok := Find(spec.Name)
	if !ok {
		return nil, &UnknownError{Name: spec.Name}
	}
	if p.list == nil {
		return nil, fmt.Errorf("provider %s has no models endpoint", p.Name)
	}
	return p.list(ctx, spec)
}

// The API roots of the OpenAI-compatible providers, where upstream zot
// has them: Ollama's local server and Kimi's coding endpoint.
const (
	ollamaBaseURL = "http://localhost:11434/v1"
	kimiBaseURL   = "https://api.kimi.com/coding/v1"
)

// deepseekBaseURL is DeepSeek's API root for the OpenAI format (its SDK
// examples use it without /v1; the client adds /chat/completions).
const deepseekBaseURL = "https://api.deepseek.com"

// Find returns the provider named name, or whose alias name is; Name of
// the result is the provider's own name.
func Find(name string) (Provider, bool) {
	i := slices.IndexFunc(table, func(p Provider) bool { return p.Name == name || slices.Contains(p.Aliases, name) })
	if i < 0 {
		return Provider{}, false
	}
	return table[i], true
}

// Known reports whether name is a provider zot knows.
func Known(name string) bool {
	_, ok := Find(name)
	return ok
}

// Names returns the providers' names, in the table's order (aliases are
// not listed).
func Names() []string {
	out := make([]string, len(table))
	for i, p := range table {
		out[i] = p.Name
	}
	return out
}

// Family returns the catalog family of provider (itself when unknown).
func Family(provider string) string {
	if p, ok := Find(provider); ok {
		return p.Family
	}
	return provider
}

// UnknownError says a provider name is not in the table, and lists those
// that are.
type UnknownError struct{ Name string }

// Error returns the message of the UnknownError.
func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown provider %q (known: %s); for another OpenAI-compatible server use --provider openai --base-url URL", e.Name, strings.Join(Names(), ", "))
}

// Spec says which provider to build and how to reach it.
type Spec struct {
	// Name is the provider id.
	Name string
	// APIKey is the credential; empty sends none (local servers).
	APIKey string
	// BaseURL overrides the vendor's endpoint, following each vendor's
	// SDK convention: Anthropic takes the host root, OpenAI-style
	// providers the API root including /v1, Gemini its API root.
	BaseURL string
	// ScriptPath is the scripted provider's script; empty plays the
	// built-in one. Only the scripted provider takes it.
	ScriptPath string
	// HTTP configures the retries and timeouts of HTTP providers.
	HTTP httpcall.Options
}

// Build returns the client of spec's provider.
func Build(spec Spec) (llm.Provider, error) {
	p, ok := Find(spec.Name)
	if !ok {
		return nil, &UnknownError{Name: spec.Name}
	}
	if spec.ScriptPath != "" && spec.Name != "scripted" {
		return nil, fmt.Errorf("a script is only played by --provider scripted, not %s", spec.Name)
	}
	return p.build(spec)
}

func buildScripted(spec Spec) (llm.Provider, error) {
	if spec.BaseURL != "" {
		return nil, fmt.Errorf("--base-url does nothing for the scripted provider")
	}
	cfg := scripted.Config{}
	if spec.ScriptPath != "" {
		s, err := scripted.Load(spec.ScriptPath)
		if err != nil {
			return nil, fmt.Errorf("loading script: %w", err)
		}
		cfg.Script = s
	}
	return scripted.New(cfg), nil
}

// NeedsKey reports whether the provider needs an API key when it talks to
// its vendor's own endpoint. A custom base URL (a local server, a proxy)
// may work without one.
func NeedsKey(name, baseURL string) bool {
	p, ok := Find(name)
	return ok && !p.Keyless && baseURL == ""
}

// Help describes the providers on one line, for the CLI.
func Help() string {
	parts := make([]string, len(table))
	for i, p := range table {
		parts[i] = p.Name
		if len(p.Aliases) > 0 {
			parts[i] += " (or " + strings.Join(p.Aliases, ", ") + ")"
		}
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1] + " (offline)"
}
