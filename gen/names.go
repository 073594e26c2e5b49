package gen

import "strings"

// initialisms are written in upper case inside Go names.
var initialisms = map[string]string{
	"id": "ID", "usd": "USD", "mime": "MIME", "json": "JSON", "url": "URL",
	"utf8": "UTF8", "http": "HTTP", "api": "API", "cwd": "CWD",
	"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WebP",
}

// goName turns a snake_case JSON name into an exported Go name.
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		if up, ok := initialisms[part]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// camelEnum turns an enum value such as "image/png" or "end_turn" into
// the tail of a Go constant name.
func camelEnum(s string) string {
	s = strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(s)
	return goName(s)
}
