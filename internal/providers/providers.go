// Package providers builds the model provider a run asks for, by name,
// from explicit settings. It reads nothing from the environment or the
// disk itself except a script file it is given; credential lookup lives
// in package credentials, so embedders stay hermetic.
package providers

import (
	"fmt"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/anthropic"
	"zot.dev/zot/internal/provider/gemini"
	"zot.dev/zot/internal/provider/openai"
	"zot.dev/zot/internal/provider/responses"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/internal/provider/transport"
)

// Spec says which provider to build and how to reach it.
type Spec struct {
	// Name is the provider id: anthropic, openai, openai-responses, gemini
	// or scripted.
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
	// Transport configures retries and timeouts of HTTP providers.
	Transport transport.Options
}

// Build returns the provider of spec.
func Build(spec Spec) (llm.Provider, error) {
	if spec.ScriptPath != "" && spec.Name != "scripted" {
		return nil, fmt.Errorf("a script is only played by --provider scripted, not %s", spec.Name)
	}
	switch spec.Name {
	case "anthropic":
		return anthropic.New(anthropic.Config{APIKey: spec.APIKey, BaseURL: spec.BaseURL, Options: spec.Transport}), nil
	case "openai":
		return openai.New(openai.Config{APIKey: spec.APIKey, BaseURL: spec.BaseURL, Options: spec.Transport}), nil
	case "openai-responses":
		return responses.New(responses.Config{APIKey: spec.APIKey, BaseURL: spec.BaseURL, Options: spec.Transport}), nil
	case "gemini":
		return gemini.New(gemini.Config{APIKey: spec.APIKey, BaseURL: spec.BaseURL, Options: spec.Transport}), nil
	case "scripted":
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
	return nil, fmt.Errorf("unknown provider %q (known: %s)", spec.Name, strings.Join(models.Providers(), ", "))
}

// NeedsKey reports whether the provider needs an API key when it talks to
// its vendor's own endpoint. A custom base URL (a local server, a proxy)
// may work without one.
func NeedsKey(name, baseURL string) bool {
	return name != "scripted" && baseURL == ""
}
