package openai

import (
	"context"
	"net/http"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// modelsList is the answer of GET /models: Model of openai 7.57.0
// (resources/models.d.ts: id, created, object, owned_by), which gives no
// limits. OpenAI-compatible servers add their own: vLLM max_model_len,
// OpenRouter context_length (the context window).
type modelsList struct {
	Data []struct {
		ID            string `json:"id"`
		MaxModelLen   int    `json:"max_model_len"`
		ContextLength int    `json:"context_length"`
	} `json:"data"`
}

// ListModels returns the models the models endpoint under cfg's base URL
// lists (OpenAI's, or an OpenAI-compatible server's).
func ListModels(ctx context.Context, cfg Config) ([]llm.ListedModel, error) {
	name := cfg.Name
	if name == "" {
		name = "openai"
	}
	u := strings.TrimSuffix(endpoint(cfg.BaseURL), "/chat/completions") + "/models"
	header := http.Header{}
	if cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	var list modelsList
	if err := httpcall.GetJSON(ctx, name, u, header, cfg.Options, decodeError, &list); err != nil {
		return nil, err
	}
	out := make([]llm.ListedModel, 0, len(list.Data))
	for _, m := range list.Data {
		out = append(out, llm.ListedModel{ID: m.ID, ContextWindow: max(m.MaxModelLen, m.ContextLength)})
	}
	return out, nil
}
