package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvVars lists, per provider, the environment variables that hold its
// API key, in the order they are tried.
var EnvVars = map[string][]string{
	"anthropic":        {"ANTHROPIC_API_KEY"},
	"openai":           {"OPENAI_API_KEY"},
	"openai-responses": {"OPENAI_API_KEY"},
	"gemini":           {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
}

// MissingKeyError says a provider has no credential, and how to give one.
type MissingKeyError struct {
	Provider string
	AuthFile string
}

func (e *MissingKeyError) Error() string {
	env := "an API key variable"
	if vs := EnvVars[e.Provider]; len(vs) > 0 {
		env = vs[0]
	}
	return fmt.Sprintf("no API key for %s: set %s, pass --api-key, or add it to %s; to run offline use --provider scripted", e.Provider, env, e.AuthFile)
}

// Lookup finds the API key for provider: the flag value first, then the
// environment (getenv), then the auth file (a JSON object mapping provider
// names to {"api_key": "..."}), which must not be readable by others.
// It returns "" and no error when nothing is found.
func Lookup(provider, flagKey string, getenv func(string) string, authFile string) (string, error) {
	if flagKey != "" {
		return flagKey, nil
	}
	for _, v := range EnvVars[provider] {
		if k := getenv(v); k != "" {
			return k, nil
		}
	}
	if authFile == "" {
		return "", nil
	}
	info, err := os.Stat(authFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading auth file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("auth file %s is readable by others (mode %04o): run chmod 600 %s", authFile, info.Mode().Perm(), authFile)
	}
	data, err := os.ReadFile(authFile)
	if err != nil {
		return "", fmt.Errorf("reading auth file: %w", err)
	}
	var entries map[string]struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return "", fmt.Errorf("auth file %s: %w", authFile, err)
	}
	return entries[provider].APIKey, nil
}

// AuthFile returns the auth file under the zot home directory: $ZOT_HOME,
// else ~/.zot.
func AuthFile(getenv func(string) string) string {
	if h := getenv("ZOT_HOME"); h != "" {
		return filepath.Join(h, "auth.json")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".zot", "auth.json")
}
