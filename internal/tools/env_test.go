package tools

import (
	"slices"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	in := []string{
		"PATH=/usr/bin",
		"HOME=/home/u",
		"OPENAI_API_KEY=test-key",
		"ANTHROPIC_BASE_URL=http://localhost",
		"OPENAI_ORG=x",
		"GEMINI_MODEL=x",
		"GOOGLE_API_KEY=test-key",
		"GITHUB_TOKEN=test-token",
		"ZOTCORE_RPC_TOKEN=test-token",
		"MY_SECRET=s",
		"my_service_api_key=test-key",
		"AWS_SECRET_ACCESS_KEY=test-key",
		"STRIPE_SECRET_KEY=test-key",
		"AWS_ACCESS_KEY_ID=keep",
		"TOKENIZER=keep",
		"SECRETS_DIR=keep",
		"EMPTY=",
	}
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "AWS_ACCESS_KEY_ID=keep", "TOKENIZER=keep", "SECRETS_DIR=keep", "EMPTY="}
	if got := scrubEnv(in); !slices.Equal(got, want) {
		t.Errorf("scrubEnv = %v, want %v", got, want)
	}
}
