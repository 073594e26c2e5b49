package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/registry"
)

// refreshTimeout bounds one provider's answer to zot models --refresh.
const refreshTimeout = 30 * time.Second

// loadCatalog returns the catalog a command uses: the built-in one or
// modelsFile's, with the models the last `zot models --refresh` cached in
// h added (a missing cache adds nothing). The cache only adds to what zot
// knows, so one that cannot be read is left out with a warning on warn,
// never a reason for zot not to start.
func loadCatalog(modelsFile string, h home.Home, warn io.Writer) (*models.Catalog, error) {
	catalog := models.Builtin()
	if modelsFile != "" {
		c, err := models.Load(modelsFile)
		if err != nil {
			return nil, &exitError{code: 1, msg: "models file: " + err.Error()}
		}
		catalog = c
	}
	if h.Dir == "" {
		return catalog, nil
	}
	if _, err := os.Stat(h.ModelsCache()); err != nil {
		return catalog, nil
	}
	listed, err := models.LoadListed(h.ModelsCache())
	if err != nil {
		fmt.Fprintf(warn, "zot: warning: the models cache is left out: %s (zot models --refresh writes it again)\n", oneLineErr(err))
		return catalog, nil
	}
	catalog.AddListed(listed)
	return catalog, nil
}

// refreshModels asks the models endpoint of each provider that has a key
// (or of --provider alone, with --api-key and --base-url), reports one
// line per provider on w, and caches what they listed in h. It fails when
// no provider answered.
func refreshModels(ctx context.Context, cmd *cli.Command, h home.Home, w io.Writer) error {
	names := registry.Names()
	only := cmd.IsSet("provider")
	if only {
		names = []string{cmd.String("provider")}
	} else if cmd.IsSet("api-key") || cmd.IsSet("base-url") {
		return usagef("--api-key and --base-url with --refresh need --provider")
	}
	listed, err := models.LoadListed(h.ModelsCache())
	if err != nil {
		listed, _ = models.LoadListed("") // a broken cache is replaced
	}
	asked, answered := 0, 0
	for _, name := range names {
		p, _ := registry.Find(name)
		if name == "scripted" {
			if only {
				return usagef("the scripted provider has no models endpoint")
			}
			continue
		}
		key := ""
		if only {
			key = cmd.String("api-key")
		}
		if key == "" && !p.Keyless {
			key, _ = registry.APIKey(p.Name, "", os.Getenv, h.AuthFile())
		}
		base := ""
		if only {
			base = cmd.String("base-url")
		}
		// Without --provider, only providers that have a key are asked;
		// a keyless one (a local server) only when named.
		if !only && (key == "" || p.Keyless) {
			continue
		}
		asked++
		cctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		list, err := registry.ListModels(cctx, registry.Spec{Name: p.Name, APIKey: key, BaseURL: base})
		cancel()
		if err != nil {
			// The provider's errors name it already.
			fmt.Fprintf(w, "%s: %s\n", p.Name, strings.TrimPrefix(oneLineErr(err), p.Name+": "))
			continue
		}
		answered++
		kept := listed.Set(p.Name, time.Now(), list)
		if left := len(list) - kept; left > 0 {
			fmt.Fprintf(w, "%s: %d models (%d more left out: repeated, not a model id, or past the first %d)\n", p.Name, kept, left, models.MaxListed)
		} else {
			fmt.Fprintf(w, "%s: %d models\n", p.Name, kept)
		}
	}
	if asked == 0 {
		return &exitError{code: 1, msg: "no provider has a key to ask its models endpoint with: set one (zot --help lists the variables) or give --provider with --api-key or --base-url"}
	}
	if answered == 0 {
		return &exitError{code: 1, msg: "no models endpoint answered"}
	}
	if err := listed.Save(h.ModelsCache()); err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	return nil
}

// oneLineErr is err's message on one line.
func oneLineErr(err error) string {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.msg
	}
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
