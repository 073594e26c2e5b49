package inittrace

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The lines are what go1.26's runtime printed for zot rpc, with a
// program's own stderr mixed in.
const sample = `init internal/bytealg @0.009 ms, 0 ms clock, 0 bytes, 0 allocs
init runtime @0.055 ms, 0.11 ms clock, 0 bytes, 0 allocs
zot: something the program wrote
init encoding/gob @1.1 ms, 0.23 ms clock, 26768 bytes, 363 allocs
init github.com/google/jsonschema-go/jsonschema @1.4 ms, 0.21 ms clock, 81240 bytes, 296 allocs
init zot.dev/zot/sdk/wire @1.6 ms, 0.053 ms clock, 18520 bytes, 91 allocs
`

func TestParse(t *testing.T) {
	tr, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 5 {
		t.Fatalf("got %d inits, want 5:\n%s", len(tr), tr)
	}
	if got, want := tr.Bytes(), int64(26768+81240+18520); got != want {
		t.Errorf("Bytes = %d, want %d", got, want)
	}
	if got, want := tr.Allocs(), int64(363+296+91); got != want {
		t.Errorf("Allocs = %d, want %d", got, want)
	}
	if got := tr.ClockMS(); got < 0.60 || got > 0.62 {
		t.Errorf("ClockMS = %g, want 0.603", got)
	}
	h := tr.Heaviest(2)
	if len(h) != 2 || h[0].Package != "github.com/google/jsonschema-go/jsonschema" || h[1].Package != "encoding/gob" {
		t.Errorf("Heaviest(2) = %v", h)
	}
	if got := len(tr.Heaviest(10)); got != 5 {
		t.Errorf("Heaviest(10) has %d inits, want all 5", got)
	}
}

func TestParseRefusesAChangedFormat(t *testing.T) {
	_, err := Parse(strings.NewReader("init runtime @0.05 ms, 0.1 ms clock, 12 kilobytes, 3 allocs\n"))
	if err == nil || !strings.Contains(err.Error(), "not in the form") {
		t.Fatalf("err = %v, want a refusal of the line", err)
	}
}

// TestParseThisRuntime reads the trace of a real start of the test binary
// itself, so that a Go release that changes the format fails here first.
func TestParseThisRuntime(t *testing.T) {
	if os.Getenv("INITTRACE_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestParseThisRuntime$")
	cmd.Env = append(os.Environ(), "INITTRACE_CHILD=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tr, err := Parse(strings.NewReader(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	sawRuntime := false
	for _, in := range tr {
		sawRuntime = sawRuntime || in.Package == "runtime"
	}
	if !sawRuntime || tr.Bytes() <= 0 {
		t.Fatalf("the trace of a test binary has no runtime init or allocates nothing:\n%s", tr)
	}
}
