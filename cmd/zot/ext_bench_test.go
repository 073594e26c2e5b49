package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkSpawnToPing times `zot rpc` from its start to the answer of
// its first ping, with no extension and with five installed in the
// project (the Go test extension of package exthost), alternately, so
// that the machine's load weighs on both alike. Extensions start in the
// background: the ping must not wait for them.
func BenchmarkSpawnToPing(b *testing.B) {
	goext := filepath.Join(b.TempDir(), "goext")
	if out, err := exec.Command("go", "build", "-o", goext, "../../internal/exthost/testdata/goext").CombinedOutput(); err != nil {
		b.Fatalf("building the Go test extension: %v\n%s", err, out)
	}
	bare, withExt := b.TempDir(), b.TempDir()
	for i := range 5 {
		name := "gx" + string(rune('a'+i))
		dir := filepath.Join(withExt, ".zot", "extensions", name)
		os.MkdirAll(dir, 0o755)
		m, _ := json.Marshal(map[string]any{"name": name, "exec": goext, "args": []string{name}})
		if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchSpawnToPing(b, bare, withExt, "five")
}

// benchSpawnToPing times `zot rpc` in bare and in loaded, alternately,
// from its start to the answer of its first ping, and reports both
// medians and their ratio, naming loaded's by label.
func benchSpawnToPing(b *testing.B, bare, loaded, label string) {
	b.Helper()
	env := append(cleanEnv(), "ZOT_VALIDATE=0")
	ping := func(cwd string) time.Duration {
		// The folders are the benchmark's own: trusted for the run.
		cmd := exec.Command(zotBin, "rpc", "--provider", "scripted", "--cwd", cwd, "--trust-project")
		cmd.Env = env
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		in.Write([]byte(`{"id":1,"type":"ping"}` + "\n"))
		line, err := bufio.NewReader(out).ReadBytes('\n')
		took := time.Since(start)
		if err != nil || !json.Valid(line) {
			b.Fatalf("ping: %q %v", line, err)
		}
		in.Close()
		cmd.Wait()
		return took
	}
	var without, with []time.Duration
	b.ResetTimer()
	for range b.N {
		without = append(without, ping(bare))
		with = append(with, ping(loaded))
	}
	b.StopTimer()
	slices.Sort(without)
	slices.Sort(with)
	w, x := with[len(with)/2], without[len(without)/2]
	b.ReportMetric(float64(x.Microseconds()), "none-median-µs")
	b.ReportMetric(float64(w.Microseconds()), label+"-median-µs")
	b.ReportMetric(float64(w)/float64(x), label+"/none")
}
