package schema

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// TestVendoredACP checks that the vendored ACP schema files are the ones
// acp/SOURCE records, byte for byte, and that meta.json's version is the
// protocol version recorded there.
func TestVendoredACP(t *testing.T) {
	src, err := FS.ReadFile("acp/SOURCE")
	if err != nil {
		t.Fatal(err)
	}
	var version string
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "protocolVersion" && len(f) == 2:
			version = f[1]
		case f[0] == "sha256" && len(f) == 3:
			sums[f[2]] = f[1]
		default:
			t.Fatalf("acp/SOURCE: cannot read line %q", sc.Text())
		}
	}
	if len(sums) != 2 || version == "" {
		t.Fatalf("acp/SOURCE records %d files and version %q; want schema.json, meta.json and a version", len(sums), version)
	}
	for name, want := range sums {
		data, err := FS.ReadFile("acp/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("acp/%s has sha256 %s, SOURCE records %s: the vendored file was changed (vendor a new release and update SOURCE)", name, got, want)
		}
	}
	meta, _ := FS.ReadFile("acp/meta.json")
	var m struct {
		Version json.Number `json:"version"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version.String() != version {
		t.Errorf("meta.json says version %s, SOURCE says %s", m.Version, version)
	}
}
