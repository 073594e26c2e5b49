package mcphost

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

func TestParseConfigTakesOtherAgentsFiles(t *testing.T) {
	list, err := ParseConfig([]byte(`{
	  "mcpServers": {
	    "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"A": "1"}, "cwd": "sub"},
	    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": 1500},
	    "gemini": {"httpUrl": "http://127.0.0.1:9/mcp"},
	    "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
	    "off": {"command": "x", "disabled": true},
	    "extra": {"command": "x", "alwaysAllow": ["a"], "autoApprove": []}
	  },
	  "otherSettings": true
	}`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name+":"+s.Kind())
	}
	if got := strings.Join(names, " "); got != "extra:stdio files:stdio gemini:http legacy:sse remote:http" {
		t.Fatalf("servers = %s", got)
	}
	files := list[1]
	if files.Command != "npx" || len(files.Args) != 3 || files.Env["A"] != "1" || files.CWD != "sub" {
		t.Fatalf("files = %+v", files)
	}
	if r := list[4]; r.Timeout != 1500*time.Millisecond || r.Headers["Authorization"] != "Bearer x" {
		t.Fatalf("remote = %+v", r)
	}
}

func TestParseConfigRefusesBrokenFiles(t *testing.T) {
	for _, bad := range []string{
		`not json`,
		`{"servers": {}}`,
		`{"mcpServers": {"x": {}}}`,
		`{"mcpServers": {"x": {"command": "a", "url": "http://h/"}}}`,
		`{"mcpServers": {"x": {"url": "file:///etc/passwd"}}}`,
		`{"mcpServers": {"x": {"command": 7}}}`,
		`{"mcpServers": {"x": {"command": "a", "timeout": -1}}}`,
		`{"mcpServers": {}} garbage`,
		`{"mcpServers": {}}
{"mcpServers": {"x": {"command": "a"}}}`,
		`{"mcpServers": {"x": {"command": "a"}}}}`,
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%s) succeeded", bad)
		}
	}
	if list, err := ParseConfig([]byte("{\"mcpServers\": {\"x\": {\"command\": \"a\"}}}\n\r\n\t ")); err != nil || len(list) != 1 {
		t.Errorf("white space after the object: %v %v", list, err)
	}
}

func TestDiscoverProjectWinsPerName(t *testing.T) {
	home := filepath.Join(t.TempDir(), "mcp.json")
	cwd := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(home, `{"mcpServers": {"a": {"command": "home-a"}, "b": {"command": "home-b"}}}`)
	write(filepath.Join(cwd, ".zot", "mcp.json"), `{"mcpServers": {"b": {"command": "project-b"}, "c": {"command": "project-c"}}}`)
	list, problems := Discover(cwd, home)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.Name+"="+s.Command)
	}
	if strings.Join(got, " ") != "a=home-a b=project-b c=project-c" {
		t.Fatalf("discovered %v", got)
	}
	// A broken project file is a problem; the home's servers still count.
	write(filepath.Join(cwd, ".zot", "mcp.json"), `{`)
	list, problems = Discover(cwd, home)
	if len(problems) != 1 || len(list) != 2 {
		t.Fatalf("list %v problems %v", list, problems)
	}
	// Missing files are no problem.
	list, problems = Discover(t.TempDir(), filepath.Join(t.TempDir(), "none.json"))
	if len(list) != 0 || len(problems) != 0 {
		t.Fatalf("list %v problems %v", list, problems)
	}
}

func TestFromWire(t *testing.T) {
	ms := int64(2500)
	s, err := FromWire(wire.MCPServer{Name: "x", URL: "http://127.0.0.1:1/mcp", Headers: []byte(`{"A":"b"}`), Timeout: &ms})
	if err != nil || s.Kind() != TransportHTTP || s.Headers["A"] != "b" || s.Timeout != 2500*time.Millisecond {
		t.Fatalf("FromWire = %+v, %v", s, err)
	}
	if _, err := FromWire(wire.MCPServer{Name: "x", Command: "a", Env: []byte(`{"A":1}`)}); err == nil {
		t.Fatal("an env of numbers was accepted")
	}
}

func TestToolNames(t *testing.T) {
	cases := map[[2]string]string{
		{"files", "read_file"}:          "mcp__files__read_file",
		{"my server", "get-sum"}:        "mcp__my_server__get-sum",
		{"ünï", "tool.v2"}:              "mcp___n___tool_v2",
		{strings.Repeat("s", 70), "t"}:  "mcp__" + strings.Repeat("s", 56) + "__t",
		{"a", strings.Repeat("t", 100)}: "mcp__a__" + strings.Repeat("t", 56),
		// The server part goes first, down to 16 characters.
		{strings.Repeat("s", 40), strings.Repeat("t", 30)}: "mcp__" + strings.Repeat("s", 27) + "__" + strings.Repeat("t", 30),
		{strings.Repeat("s", 40), strings.Repeat("t", 50)}: "mcp__" + strings.Repeat("s", 16) + "__" + strings.Repeat("t", 41),
	}
	for in, want := range cases {
		if got := ToolName(in[0], in[1]); got != want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
		if len(ToolName(in[0], in[1])) > MaxToolName {
			t.Errorf("ToolName(%q, %q) is over %d", in[0], in[1], MaxToolName)
		}
	}
	// Collisions: the first keeps the name, the next get _2, _3 within
	// the limit, the same way every time.
	long := strings.Repeat("x", 64)
	var renamed []string
	got := assignNames([]string{"mcp__a_b__t", "mcp__a_b__t", long, long, "mcp__a_b__t"}, map[string]bool{}, func(w, g string) { renamed = append(renamed, g) })
	want := []string{"mcp__a_b__t", "mcp__a_b__t_2", long, strings.Repeat("x", 62) + "_2", "mcp__a_b__t_3"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("assignNames = %v, want %v", got, want)
		}
	}
	if len(renamed) != 3 {
		t.Fatalf("renamed = %v", renamed)
	}
}

func TestCollidingServersGetDistinctNames(t *testing.T) {
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(t.Context(), []Server{stdio("a.b"), stdio("a_b")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(t.Context())
	// Servers go by name: "a.b" sorts before "a_b" and keeps the plain names.
	list := m.List()
	if list[0].Tools[0] != "mcp__a_b__add" || list[1].Tools[0] != "mcp__a_b__add_2" {
		t.Fatalf("tools = %v / %v", list[0].Tools, list[1].Tools)
	}
	if r := call(t, sess, "mcp__a_b__echo_2", `{"text":"second"}`); text(r) != "echo: second" {
		t.Fatalf("echo = %+v", r)
	}
}

func TestParseConfigExpandsEnvironmentReferences(t *testing.T) {
	t.Setenv("ZOT_TEST_TOKEN", "s3cret")
	t.Setenv("ZOT_TEST_EMPTY", "")
	list, err := ParseConfig([]byte(`{"mcpServers": {
	  "a": {"command": "${ZOT_TEST_BIN:-/bin/srv}", "args": ["--token=${ZOT_TEST_TOKEN}", "$HOME", "${ZOT_TEST_EMPTY:-dflt}"], "env": {"T": "${ZOT_TEST_TOKEN}"}},
	  "b": {"url": "http://127.0.0.1:1/${ZOT_TEST_UNSET}", "headers": {"Authorization": "Bearer ${ZOT_TEST_TOKEN}"}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := list[0], list[1]
	if a.Command != "/bin/srv" || strings.Join(a.Args, " ") != "--token=s3cret $HOME dflt" || a.Env["T"] != "s3cret" {
		t.Fatalf("a = %+v", a)
	}
	if b.URL != "http://127.0.0.1:1/" || b.Headers["Authorization"] != "Bearer s3cret" {
		t.Fatalf("b = %+v", b)
	}
}

func TestProgressIsThrottled(t *testing.T) {
	var got []string
	fn := throttle(func(s string) { got = append(got, s) }, time.Hour)
	fn("a")
	fn("b")
	if strings.Join(got, "") != "a" {
		t.Fatalf("passed on %q", got)
	}
	fn = throttle(func(s string) { got = append(got, s) }, 0)
	fn("c")
	fn("d")
	if strings.Join(got, "") != "acd" {
		t.Fatalf("passed on %q", got)
	}
}

func TestHugeTimeoutsSaturate(t *testing.T) {
	list, err := ParseConfig([]byte(`{"mcpServers":{"a":{"command":"x","timeout":1e300},"b":{"command":"x","timeout":1500}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Timeout != time.Duration(math.MaxInt64) || list[1].Timeout != 1500*time.Millisecond {
		t.Fatalf("timeouts %v %v", list[0].Timeout, list[1].Timeout)
	}
	huge := int64(9223372036854776)
	s, err := FromWire(wire.MCPServer{Name: "w", Command: "x", Timeout: &huge})
	if err != nil || s.Timeout != time.Duration(math.MaxInt64) {
		t.Fatalf("FromWire: %v %v", s.Timeout, err)
	}
}

func TestParseConfigNamesUnsetVariables(t *testing.T) {
	t.Setenv("ZOT_TEST_SET", "yes")
	t.Setenv("ZOT_TEST_EMPTY", "")
	list, err := ParseConfig([]byte(`{"mcpServers":{"a":{"command":"x${ZOT_TEST_SET}","args":["${ZOT_TEST_EMPTY}","${ZOT_TEST_NOPE:-d}","${ZOT_TEST_NOPE2}${ZOT_TEST_EMPTY}"],"headers":{"h":"${ZOT_TEST_NOPE2}"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(list[0].Unset, ","); got != "ZOT_TEST_EMPTY,ZOT_TEST_NOPE2" {
		t.Fatalf("unset = %q", got)
	}
	_, err = ParseConfig([]byte(`{"mcpServers":{"a":{"command":"${ZOT_TEST_NOPE3}"}}}`))
	if err == nil || !strings.Contains(err.Error(), "ZOT_TEST_NOPE3") {
		t.Fatalf("error = %v", err)
	}
}
