package engine

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestCapabilitiesDocumented: every feature and door Capabilities names
// is named where a client reads what they mean: the descriptions of the
// features and doors in both protocols' schemas (get_capabilities,
// _zot/capabilities) and the prose of docs/rpc.md.
func TestCapabilitiesDocumented(t *testing.T) {
	describe := func(file string, path ...string) string {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		for _, k := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: no %v", file, path)
			}
			v = m[k]
		}
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%s: %v is not a description", file, path)
		}
		return s
	}
	doc, err := os.ReadFile("../../docs/rpc.md")
	if err != nil {
		t.Fatal(err)
	}
	_, prose, _ := strings.Cut(string(doc), "`get_capabilities` says what this zot")
	prose, _, _ = strings.Cut(prose, "\n\n")
	where := map[string]string{
		"schema/rpc/config.json features":      describe("../../schema/rpc/config.json", "$defs", "CapabilitiesResult", "properties", "features", "description"),
		"schema/daemon/daemon.json features":   describe("../../schema/daemon/daemon.json", "$defs", "CapabilitiesResponse", "properties", "features", "description"),
		"docs/rpc.md's get_capabilities prose": prose,
	}
	for place, text := range where {
		for _, f := range Features {
			if !strings.Contains(text, "`"+f+"`") {
				t.Errorf("%s does not name the feature %s", place, f)
			}
		}
	}
	doors := describe("../../schema/daemon/daemon.json", "$defs", "CapabilitiesResponse", "properties", "doors", "description")
	for _, d := range Doors {
		if !strings.Contains(doors, "`"+d+"`") || !strings.Contains(prose, "`"+d+"`") {
			t.Errorf("the door %s is not named in _zot/capabilities' doors or docs/rpc.md", d)
		}
	}
}
