package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// MissingKeyError says a provider has no credential, and how to give one.
type MissingKeyError struct {
	Provider string
	AuthFile string
}

// Error returns the message of the MissingKeyError.
func (e *MissingKeyError) Error() string {
	env := "an API key variable"
	if p, ok := Find(e.Provider); ok && len(p.KeyVars) > 0 {
		env = p.KeyVars[0]
	}
	return fmt.Sprintf("no API key for %s: set %s, pass --api-key, or add it to %s; to run offline use --provider scripted", e.Provider, env, e.AuthFile)
}

// APIKey finds the API key for provider: the flag value first, then the
// environment (getenv), then the auth file (a JSON object mapping provider
// names to {"api_key": "..."}), which must not be readable by others.
// It returns "" and no error when nothing is found.
func APIKey(provider, flagKey string, getenv func(string) string, authFile string) (string, error) {
	if flagKey != "" {
		return flagKey, nil
	}
	p, _ := Find(provider)
	for _, v := range p.KeyVars {
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
