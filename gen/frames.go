package gen

// The `frames` section lists a protocol's frames direction by direction:
// the extension protocol has no commands and events but two unions, one
// per direction.
func init() { docWriters["frames"] = (*docGen).frames }

// frames writes one table per union, in file order, each headed by its
// file's title and the union's description.
func (g *docGen) frames() {
	for _, f := range g.m.Files {
		for _, d := range f.Defs {
			if d.Kind != KindUnion {
				continue
			}
			g.p("**%s** ([%s](%s)): %s", f.Title, d.Name, anchor(d.Name), d.Description)
			g.p("")
			g.p("| `type` | fields | meaning |")
			g.p("|---|---|---|")
			for _, v := range d.Variants {
				g.p("| [`%s`](%s) | %s | %s |", v.TypeConst, anchor(v.Name), fieldList(v), cell(v.Description))
			}
			g.p("")
		}
	}
}
