package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
)

// Report is the outcome of a run: one section per provider, one row per
// metric, one cell per binary.
type Report struct {
	Config   Config
	Binaries []Binary
	Sections []Section
	// Extra is the section on abort and large input (Config.Extras), whose
	// rows have no cell for the floor; nil when it was not measured.
	Extra *Section
	// Daemon is the section on zot daemon and zot acp (Config.Daemon);
	// nil when it was not measured.
	Daemon *DaemonSection
	// Sandbox is the section on what zot's sandbox adds to a bash round
	// trip (Config.Sandbox); nil when it was not measured.
	Sandbox *SandboxSection
	// Inits are the package inits of each binary at its start, in the
	// order of Binaries; nil when they were not measured.
	Inits []InitRow
}

// Section holds the rows measured with one provider.
type Section struct {
	Provider string
	Rows     []Row
}

// Row holds one metric's cells, in the order of Report.Binaries.
type Row struct {
	Metric Metric
	Cells  []Cell
}

// Cell is the median of one metric for one binary, or the error that kept
// it from being measured.
type Cell struct {
	Value float64
	// Samples is the number of values the median was taken of.
	Samples int
	// Err is set when any repetition failed.
	Err string
}

// OK reports whether the cell holds a measured value.
func (c Cell) OK() bool { return c.Err == "" && c.Samples > 0 }

// floorIndex is the position of the floor among the binaries, or -1.
func (r *Report) floorIndex() int {
	for i, b := range r.Binaries {
		if b.Floor {
			return i
		}
	}
	return -1
}

// Markdown renders the report as Markdown.
func (r *Report) Markdown() string {
	var sb strings.Builder
	r.writeMarkdown(&sb)
	return sb.String()
}

// WriteMarkdown writes the report as Markdown to w.
func (r *Report) WriteMarkdown(w io.Writer) error {
	if _, err := io.WriteString(w, r.Markdown()); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

func (r *Report) writeMarkdown(sb *strings.Builder) {
	cfg := r.Config
	fmt.Fprintf(sb, "## zot bench\n\n")
	fmt.Fprintf(sb, "Medians of %d repetitions; long answer %d × 16 B text deltas; %d sequential short prompts; %s/%s, %d CPUs. "+
		"Ratios are binary ÷ floor; targets apply to every ratio.\n\n",
		cfg.Reps, cfg.Deltas, cfg.Seq, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	sb.WriteString("Spawn → ping runs from exec to reading the ping response (every process). " +
		"Events/s counts text_delta lines from writing the prompt to reading its done; " +
		"CPU is the process's user+system time over that prompt. " +
		"Peak RSS is the largest VmHWM of a repetition's three processes, read before stdin closes; " +
		"the resident memory after the first ping and at the end of the work (RssFile, RssAnon) is split into " +
		"the file-backed part (the binary's pages) and the anonymous part (heap, stacks, the runtime's own).\n\n")
	if cfg.Setup == SetupUser {
		fmt.Fprintf(sb, "Setup: user. Every binary runs with a zot home holding %d installed extensions, %d log files and %d past sessions, "+
			"in a project folder whose .zot holds %d extension(s) and an MCP server (stdio) in mcp.json. "+
			"The project is %s. The stream and the tool round trips follow a first short prompt.\n\n",
			len(cfg.HomeExts), logFiles, pastSessions, len(cfg.ProjectExts), trusted(cfg.TrustProject))
	} else {
		sb.WriteString("Setup: bare. Every binary runs with an empty zot home in an empty folder. " +
			"The stream and the tool round trips follow a first short prompt.\n\n")
	}
	sb.WriteString("| binary | path |\n|---|---|\n")
	for _, b := range r.Binaries {
		fmt.Fprintf(sb, "| %s | `%s` |\n", escape(b.Name), escape(b.Path))
	}
	notes := &footnotes{}
	floor := r.floorIndex()
	for _, s := range r.Sections {
		fmt.Fprintf(sb, "\n### %s\n\n", s.Provider)
		head := []string{"metric", "target"}
		align := []string{"---", "---"}
		for i, b := range r.Binaries {
			head, align = append(head, escape(b.Name)), append(align, "---:")
			if i != floor && floor >= 0 {
				head, align = append(head, escape(b.Name)+" ÷ floor"), append(align, "---:")
			}
		}
		writeRow(sb, head)
		writeRow(sb, align)
		for _, row := range s.Rows {
			target, hasTarget := row.Metric.Target()
			cells := []string{row.Metric.label(cfg), "—"}
			if hasTarget {
				cells[1] = target.String()
			}
			for i, c := range row.Cells {
				cells = append(cells, r.valueCell(notes, s.Provider, i, row.Metric, c))
				if i != floor && floor >= 0 {
					cells = append(cells, ratioCell(c, row.Cells[floor], target, hasTarget))
				}
			}
			writeRow(sb, cells)
		}
	}
	r.writeVs(sb)
	if r.Inits != nil {
		r.writeInits(sb)
	}
	if r.Extra != nil {
		r.writeExtra(sb, notes)
	}
	if r.Sandbox != nil {
		r.writeSandbox(sb) // sandbox.go
	}
	if r.Daemon != nil {
		r.writeDaemon(sb)
	}
	if len(notes.list) > 0 {
		sb.WriteString("\nErrors:\n\n")
		for i, n := range notes.list {
			fmt.Fprintf(sb, "%d. %s\n", i+1, oneLine(n))
		}
	}
}

// trusted says how zot was told of the project.
func trusted(t bool) string {
	if t {
		return "trusted (zot trust), so zot runs its extension and MCP server"
	}
	return "not trusted, so zot leaves its extension and MCP server out"
}

// writeVs renders, when there are --vs binaries, zot's values as ratios to
// theirs, with the goals zot has against another runtime.
func (r *Report) writeVs(sb *strings.Builder) {
	zot := -1
	var vs []int
	for i, b := range r.Binaries {
		switch {
		case b.Floor:
		case zot < 0:
			zot = i
		default:
			vs = append(vs, i)
		}
	}
	if zot < 0 || len(vs) == 0 {
		return
	}
	for _, s := range r.Sections {
		fmt.Fprintf(sb, "\n### %s against the other binaries (%s)\n\n", escape(r.Binaries[zot].Name), s.Provider)
		head := []string{"metric", "goal", escape(r.Binaries[zot].Name)}
		align := []string{"---", "---", "---:"}
		for _, i := range vs {
			name := escape(r.Binaries[i].Name)
			head = append(head, name, escape(r.Binaries[zot].Name)+" ÷ "+name)
			align = append(align, "---:", "---:")
		}
		writeRow(sb, head)
		writeRow(sb, align)
		for _, row := range s.Rows {
			if !slices.Contains(vsMetrics, row.Metric) {
				continue
			}
			target, hasTarget := row.Metric.VsTarget()
			cells := []string{row.Metric.label(r.Config), "—", cellValue(row.Metric, row.Cells[zot])}
			if hasTarget {
				cells[1] = target.String()
			}
			for _, i := range vs {
				ratio := "—"
				if row.Cells[i].OK() {
					ratio = ratioCell(row.Cells[zot], row.Cells[i], target, hasTarget)
				}
				cells = append(cells, cellValue(row.Metric, row.Cells[i]), ratio)
			}
			writeRow(sb, cells)
		}
	}
}

// cellValue renders a measured value, or "—" (the error is in the
// provider's own table).
func cellValue(m Metric, c Cell) string {
	if !c.OK() {
		return "—"
	}
	return m.format(c.Value)
}

// writeExtra renders the section on abort and large input: one column per
// binary but the floor, and goals of their own.
func (r *Report) writeExtra(sb *strings.Builder, notes *footnotes) {
	s := r.Extra
	fmt.Fprintf(sb, "\n### abort and large input (%s format)\n\n", s.Provider)
	sb.WriteString("An abort is sent " + r.Config.AbortAfter.String() + " after the tool starts and timed to the prompt's done. " +
		"The floor has neither abort nor a read tool, so it has no column here.\n\n")
	head, align := []string{"metric", "goal"}, []string{"---", "---"}
	for _, b := range r.Binaries {
		if !b.Floor {
			head, align = append(head, escape(b.Name)), append(align, "---:")
		}
	}
	writeRow(sb, head)
	writeRow(sb, align)
	for _, row := range s.Rows {
		cells := []string{row.Metric.label(r.Config), "—"}
		if row.Metric == BigPromptRSS {
			cells[1] = fmt.Sprintf("≤ %d× the line", bigPromptGoal)
		}
		for i, c := range row.Cells {
			if r.Binaries[i].Floor {
				continue
			}
			cell := r.valueCell(notes, s.Provider, i, row.Metric, c)
			if row.Metric == BigPromptRSS && c.OK() {
				times := c.Value * (1 << 20) / float64(r.Config.BigPrompt)
				verdict := "pass"
				if times > bigPromptGoal {
					verdict = "**FAIL**"
				}
				cell += fmt.Sprintf(" (%.2f× %s)", times, verdict)
			}
			cells = append(cells, cell)
		}
		writeRow(sb, cells)
	}
}

// valueCell renders one binary's value, or a reference to its error.
func (r *Report) valueCell(notes *footnotes, provider string, bin int, m Metric, c Cell) string {
	switch {
	case c.Err != "":
		return fmt.Sprintf("error [%d]", notes.ref(fmt.Sprintf("%s, %s: %s", r.Binaries[bin].Name, provider, c.Err)))
	case c.Samples == 0:
		return "—"
	}
	return m.format(c.Value)
}

// ratioCell renders a binary's value over the floor's, with the target's
// verdict.
func ratioCell(c, floor Cell, target Target, hasTarget bool) string {
	if !c.OK() {
		return "—"
	}
	if !floor.OK() || floor.Value == 0 {
		return "n/a"
	}
	ratio := c.Value / floor.Value
	s := fmt.Sprintf("%.2f×", ratio)
	if hasTarget {
		if target.Met(ratio) {
			s += " pass"
		} else {
			s += " **FAIL**"
		}
	}
	return s
}

// footnotes numbers distinct error texts.
type footnotes struct {
	list []string
	num  map[string]int
}

// ref returns the number of text, adding it when new.
func (f *footnotes) ref(text string) int {
	if f.num == nil {
		f.num = map[string]int{}
	}
	if n, ok := f.num[text]; ok {
		return n
	}
	f.list = append(f.list, text)
	f.num[text] = len(f.list)
	return len(f.list)
}

func writeRow(sb *strings.Builder, cells []string) {
	sb.WriteString("| ")
	sb.WriteString(strings.Join(cells, " | "))
	sb.WriteString(" |\n")
}

// escape keeps text from breaking a table cell.
func escape(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// oneLine folds text onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
