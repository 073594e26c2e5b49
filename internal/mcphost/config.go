package mcphost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/wire"
)

// Transport kinds of a Server.
const (
	// TransportStdio runs Command with Args and speaks over its stdin and
	// stdout.
	TransportStdio = "stdio"
	// TransportHTTP speaks streamable HTTP to URL.
	TransportHTTP = "http"
	// TransportSSE speaks the legacy HTTP+SSE transport (protocol
	// 2024-11-05) to URL.
	TransportSSE = "sse"
)

// Server is one MCP server, in the same shape in every door: the SDK's
// Config, `zot rpc`'s mcp_add, the mcp.json files, ACP's mcpServers.
type Server struct {
	// Name names the server; unique in a session. Any text: it is
	// sanitised only where it becomes part of a tool name.
	Name string
	// Type is "", "stdio", "http" or "sse"; "" means stdio when Command
	// is set and http when URL is.
	Type string
	// Command is the program of a stdio server, looked up in PATH.
	Command string
	// Args are its arguments.
	Args []string
	// Env is added to zot's own environment for the program.
	Env map[string]string
	// CWD is the program's working directory; "" means the session's.
	CWD string
	// URL is the endpoint of an http or sse server.
	URL string
	// Headers are sent with every request to URL.
	Headers map[string]string
	// Timeout bounds one tool call; 0 means the Manager's CallTimeout.
	Timeout time.Duration
	// Unset names the environment variables the server's file entry
	// refers to (${VAR}, no default) that were unset or empty, sorted;
	// their references were replaced by nothing. AddServers warns of
	// them.
	Unset []string
}

// Kind returns the server's transport: TransportStdio, TransportHTTP or
// TransportSSE.
func (s Server) Kind() string {
	switch strings.ToLower(s.Type) {
	case "stdio":
		return TransportStdio
	case "sse":
		return TransportSSE
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return TransportHTTP
	}
	if s.Command == "" && s.URL != "" {
		return TransportHTTP
	}
	return TransportStdio
}

// Validate reports the first problem that makes s unusable, as an
// error with the code invalid_params (wire.CodeOf): whoever gave s is
// to change it.
func (s Server) Validate() error {
	if err := s.validate(); err != nil {
		return &ConfigError{Err: err}
	}
	return nil
}

// ConfigError says a server's configuration cannot be used.
type ConfigError struct{ Err error }

// Error returns the message of the ConfigError.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// ErrorCode returns invalid_params: the configuration is its giver's to
// change.
func (e *ConfigError) ErrorCode() wire.ErrorCode { return wire.CodeInvalidParams }

func (s Server) validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("an MCP server has no name")
	}
	switch strings.ToLower(s.Type) {
	case "", "stdio", "sse", "http", "streamable-http", "streamablehttp", "streamable_http":
	default:
		return fmt.Errorf("MCP server %q: unknown type %q (stdio, http or sse)", s.Name, s.Type)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("MCP server %q: negative timeout", s.Name)
	}
	switch s.Kind() {
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("MCP server %q: a stdio server needs a command", s.Name)
		}
		if s.URL != "" {
			return fmt.Errorf("MCP server %q: give a command or a url, not both", s.Name)
		}
	default:
		if s.URL == "" {
			return fmt.Errorf("MCP server %q: an %s server needs a url", s.Name, s.Kind())
		}
		if s.Command != "" {
			return fmt.Errorf("MCP server %q: give a command or a url, not both", s.Name)
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("MCP server %q: url %q is not an http(s) URL", s.Name, s.URL)
		}
	}
	return nil
}

// fileEntry is one server in the mcpServers file shape. Members other
// agents write that zot has no use for are ignored.
type fileEntry struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	CWD      string            `json:"cwd"`
	URL      string            `json:"url"`
	HTTPURL  string            `json:"httpUrl"`
	Headers  map[string]string `json:"headers"`
	Timeout  *float64          `json:"timeout"`
	Disabled bool              `json:"disabled"`
}

// ParseConfig reads the {"mcpServers": {"<name>": {...}}} shape other
// agents use, giving the servers sorted by name. Entries with
// "disabled": true are left out; unknown members are ignored. A server's
// "timeout" is in milliseconds. ${VAR} and ${VAR:-default} in command,
// args, env and headers values, cwd and url are replaced by the
// environment's values.
func ParseConfig(data []byte) ([]Server, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not an mcpServers file: %w", err)
	}
	// Something after the object (a second object pasted below the first,
	// a stray brace) would otherwise be ignored with the servers it holds.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not an mcpServers file: more after its JSON object, at byte %d", dec.InputOffset())
	}
	if doc.MCPServers == nil {
		return nil, errors.New(`not an mcpServers file: no "mcpServers" object`)
	}
	names := make([]string, 0, len(doc.MCPServers))
	for name := range doc.MCPServers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Server
	for _, name := range names {
		var e fileEntry
		if err := json.Unmarshal(doc.MCPServers[name], &e); err != nil {
			return nil, fmt.Errorf("MCP server %q: %w", name, err)
		}
		if e.Disabled {
			continue
		}
		var x expander
		s := Server{Name: name, Type: e.Type, Command: x.expand(e.Command), Args: x.all(e.Args), Env: x.values(e.Env), CWD: x.expand(e.CWD), URL: x.expand(e.URL), Headers: x.values(e.Headers)}
		if s.URL == "" && e.HTTPURL != "" {
			s.URL = x.expand(e.HTTPURL)
			if s.Type == "" {
				s.Type = TransportHTTP
			}
		}
		if e.Timeout != nil {
			if *e.Timeout < 0 {
				return nil, fmt.Errorf("MCP server %q: negative timeout", name)
			}
			s.Timeout = millis(*e.Timeout)
		}
		sort.Strings(x.unset)
		s.Unset = x.unset
		if err := s.Validate(); err != nil {
			if len(s.Unset) > 0 {
				err = fmt.Errorf("%w (environment variables not set: %s)", err, strings.Join(s.Unset, ", "))
			}
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// LoadFile reads and parses the mcpServers file at path.
func LoadFile(path string) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MCP config: %w", err)
	}
	list, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("MCP config %s: %w", path, err)
	}
	return list, nil
}

// ProjectFile is where a project keeps its MCP servers, relative to its
// directory.
var ProjectFile = filepath.Join(".zot", "mcp.json")

// DiscoverTrusted is Discover for a project folder whose own servers run
// only when gate trusts it: when it does not, <cwd>/.zot/mcp.json is
// left out, and the refusal returned for the caller to tell (once:
// gate.FirstReport). A nil gate trusts the folder.
func DiscoverTrusted(cwd, homeFile string, gate *trust.Gate) (servers []Server, problems []error, untrusted *trust.Decision) {
	if cwd != "" && gate != nil {
		if d := gate.Check(cwd); !d.Allowed {
			untrusted = &d
			cwd = ""
		}
	}
	servers, problems = Discover(cwd, homeFile)
	return servers, problems, untrusted
}

// Discover returns the servers of <cwd>/.zot/mcp.json and of homeFile
// ($ZOT_HOME/mcp.json), the project's entry winning per name, sorted by
// name. A missing file is not a problem; a broken one is returned as a
// problem and the other file still counts. An empty path is skipped.
func Discover(cwd, homeFile string) (servers []Server, problems []error) {
	load := func(path string) []Server {
		if path == "" {
			return nil
		}
		list, err := LoadFile(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, err)
			}
			return nil
		}
		return list
	}
	home := load(homeFile)
	var project []Server
	if cwd != "" {
		project = load(filepath.Join(cwd, ProjectFile))
	}
	return Merge(home, project), problems
}

// Merge returns base with over's servers replacing those of the same
// name, sorted by name.
func Merge(base, over []Server) []Server {
	byName := make(map[string]Server, len(base)+len(over))
	for _, s := range base {
		byName[s.Name] = s
	}
	for _, s := range over {
		byName[s.Name] = s
	}
	out := make([]Server, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	// sort.Slice rather than slices.SortFunc: the generic sort is compiled
	// anew for each struct type, 10–20 KB of code that every start maps in.
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FromWire returns the server w describes (mcp_add's form), checked: a
// server that cannot be used is a *ConfigError.
func FromWire(w wire.MCPServer) (Server, error) {
	s := Server{Name: w.Name, Type: w.Type, Command: w.Command, Args: w.Args, CWD: w.CWD, URL: w.URL}
	var err error
	if s.Env, err = stringMap(w.Env); err != nil {
		return Server{}, &ConfigError{Err: fmt.Errorf("MCP server %q: env: %w", w.Name, err)}
	}
	if s.Headers, err = stringMap(w.Headers); err != nil {
		return Server{}, &ConfigError{Err: fmt.Errorf("MCP server %q: headers: %w", w.Name, err)}
	}
	if w.Timeout != nil {
		if *w.Timeout < 0 {
			return Server{}, &ConfigError{Err: fmt.Errorf("MCP server %q: negative timeout", w.Name)}
		}
		s.Timeout = millis(float64(*w.Timeout))
	}
	if err := s.Validate(); err != nil {
		return Server{}, err
	}
	return s, nil
}

// WireMCPServer returns s in the wire's shape (mcp_add's form), the
// inverse of FromWire: a Go program's server reaches a zot rpc process
// as it reaches an in-process session (client.Client's AddMCPServers).
func (s Server) WireMCPServer() wire.MCPServer {
	w := wire.MCPServer{Name: s.Name, Type: s.Type, Command: s.Command, Args: s.Args, CWD: s.CWD, URL: s.URL}
	if len(s.Env) > 0 {
		w.Env, _ = json.Marshal(s.Env)
	}
	if len(s.Headers) > 0 {
		w.Headers, _ = json.Marshal(s.Headers)
	}
	if s.Timeout > 0 {
		ms := max(s.Timeout.Milliseconds(), 1)
		w.Timeout = &ms
	}
	return w
}

// millis returns ms milliseconds (not negative) as a Duration; one past
// the longest Duration (about 292 years: a "timeout" of
// Number.MAX_SAFE_INTEGER meant as "never") is the longest instead of
// wrapping around to a few microseconds or a negative value.
func millis(ms float64) time.Duration {
	if ms >= float64(math.MaxInt64)/float64(time.Millisecond) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// stringMap decodes a JSON object of strings; empty or null is nil.
func stringMap(raw json.RawMessage) (map[string]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("must be an object of strings")
	}
	return m, nil
}

// envRef is ${NAME} or ${NAME:-default}.
// It is compiled on first use: most configurations have none.
var envRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)
})

// expander replaces ${VAR} and ${VAR:-default} references and notes the
// variables that are unset or empty and have no default.
type expander struct{ unset []string }

// expand replaces the ${VAR} and ${VAR:-default} references in s.
func (x *expander) expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	re := envRef()
	return re.ReplaceAllStringFunc(s, func(ref string) string {
		m := re.FindStringSubmatch(ref)
		if v, ok := os.LookupEnv(m[1]); ok && v != "" {
			return v
		}
		if !strings.Contains(ref, ":-") && !slices.Contains(x.unset, m[1]) {
			x.unset = append(x.unset, m[1])
		}
		return m[2]
	})
}

func (x *expander) all(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = x.expand(s)
	}
	return out
}

func (x *expander) values(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = x.expand(v)
	}
	return out
}
