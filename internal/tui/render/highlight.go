package render

import (
	"strings"
	"sync"
	"unicode"

	"zot.dev/zot/internal/tui/style"
)

// lang is what the tokenizer knows of a language: its keywords, its
// line-comment markers and whether backquotes delimit strings.
type lang struct {
	keywords map[string]bool
	types    map[string]bool
	comments []string
	backtick bool
}

// The languages' table is built at the first highlighted line, never at
// start-up: a package-level value built by a call would run at every
// start of zot, zot rpc's too.
var (
	langsOnce  sync.Once
	langsTable map[string]*lang
)

// langs returns the languages' table.
func langs() map[string]*lang {
	langsOnce.Do(func() { langsTable = buildLangs() })
	return langsTable
}

// buildLangs builds the languages' table.
func buildLangs() map[string]*lang {
	set := func(words string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(words) {
			m[w] = true
		}
		return m
	}
	goLang := &lang{
		keywords: set("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota"),
		types:    set("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any"),
		comments: []string{"//"}, backtick: true,
	}
	py := &lang{
		keywords: set("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self"),
		types:    set("int str float bool list dict set tuple bytes object"),
		comments: []string{"#"},
	}
	js := &lang{
		keywords: set("break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield async await of null undefined true false interface type enum implements readonly"),
		types:    set("string number boolean any unknown never void object"),
		comments: []string{"//"}, backtick: true,
	}
	sh := &lang{
		keywords: set("if then else elif fi case esac for while until do done in function return local export readonly set unset echo exit cd"),
		comments: []string{"#"},
	}
	rust := &lang{
		keywords: set("as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while async await dyn"),
		types:    set("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box"),
		comments: []string{"//"},
	}
	c := &lang{
		keywords: set("auto break case catch class const continue default delete do else enum extern for friend goto if inline namespace new operator private protected public return sizeof static struct switch template this throw try typedef union using virtual volatile while null nullptr true false import package extends implements final abstract synchronized"),
		types:    set("void char short int long float double signed unsigned bool boolean String size_t"),
		comments: []string{"//"},
	}
	data := &lang{keywords: set("true false null"), comments: []string{"#"}}
	return map[string]*lang{
		"go": goLang, "golang": goLang,
		"python": py, "py": py,
		"js": js, "javascript": js, "ts": js, "typescript": js, "jsx": js, "tsx": js, "node": js,
		"sh": sh, "bash": sh, "shell": sh, "zsh": sh, "console": sh,
		"rust": rust, "rs": rust,
		"c": c, "cpp": c, "c++": c, "h": c, "java": c, "cs": c, "csharp": c, "kotlin": c, "swift": c,
		"json": data, "yaml": data, "yml": data, "toml": data,
	}
}

// Highlight colours one line of code of language name (a fence's info
// word); a language it does not know is returned as plain code.
func Highlight(t *style.Theme, name, line string) string {
	l := langs()[name]
	if l == nil {
		return t.Code.Render(line)
	}
	var out strings.Builder
	rs := []rune(line)
	for i := 0; i < len(rs); {
		r := rs[i]
		rest := string(rs[i:])
		if c := commentAt(l, rest); c {
			out.WriteString(t.Comment.Render(rest))
			break
		}
		switch {
		case r == '"' || r == '\'' || (r == '`' && l.backtick):
			j := i + 1
			for j < len(rs) && rs[j] != r {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(rs))
			out.WriteString(t.String.Render(string(rs[i:j])))
			i = j
		case unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || rs[j] == 'x' || rs[j] == '_' || (rs[j] >= 'a' && rs[j] <= 'f')) {
				j++
			}
			out.WriteString(t.Number.Render(string(rs[i:j])))
			i = j
		case unicode.IsLetter(r) || r == '_':
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '_') {
				j++
			}
			w := string(rs[i:j])
			switch {
			case l.keywords[w]:
				out.WriteString(t.Keyword.Render(w))
			case l.types[w]:
				out.WriteString(t.Type.Render(w))
			default:
				out.WriteString(t.Code.Render(w))
			}
			i = j
		default:
			j := i
			for j < len(rs) && !unicode.IsLetter(rs[j]) && !unicode.IsDigit(rs[j]) && rs[j] != '_' && rs[j] != '"' && rs[j] != '\'' && rs[j] != '`' && !commentAt(l, string(rs[j:])) {
				j++
			}
			if j == i {
				j++
			}
			out.WriteString(t.Code.Render(string(rs[i:j])))
			i = j
		}
	}
	return out.String()
}

func commentAt(l *lang, s string) bool {
	for _, c := range l.comments {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return false
}
