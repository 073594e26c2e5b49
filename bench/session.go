package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"zot.dev/zot/bench/fakeprovider"
)

// sessionKind is one of the processes a repetition runs.
type sessionKind int

const (
	streamSession sessionKind = iota
	seqSession
	toolSession
	numSessions
)

// sessionMetrics are the metrics a session's work measures.
var sessionMetrics = [numSessions][]Metric{
	streamSession: {EventsPerSec, StreamCPU},
	seqSession:    {SeqLatency, SeqCPU},
	toolSession:   {ToolRoundTrip, ReadRoundTrip},
}

var sessionNames = [numSessions]string{"stream", "sequential", "tool"}

// sessionResult is what one process measured.
type sessionResult struct {
	ping   time.Duration
	pinged bool
	// pingFile and pingAnon are the resident memory after the ping, in
	// bytes; residentErr says why they are missing.
	pingFile, pingAnon int64
	residentErr        error
	// endFile and endAnon are the resident memory at the end of the
	// work, before stdin closes; endErr says why they are missing.
	endFile, endAnon int64
	endErr           error
	values           map[Metric]float64
	rss              int64 // peak RSS in bytes, 0 when unknown
	state            *os.ProcessState
	err              error
}

// repetition runs the sessions of one repetition of binary b with
// provider p and adds what they measured to col.
func (h *harness) repetition(ctx context.Context, b Binary, p string, col *column) {
	var peak int64
	rssOK := true
	for kind := range numSessions {
		if col.failed[kind] {
			rssOK = false
			continue
		}
		res := h.session(ctx, b, p, kind)
		if res.pinged {
			col.add(SpawnPing, ms(res.ping))
			if res.residentErr != nil {
				col.fail(PingRSSFile, res.residentErr)
				col.fail(PingRSSAnon, res.residentErr)
			} else {
				col.add(PingRSSFile, float64(res.pingFile)/(1<<20))
				col.add(PingRSSAnon, float64(res.pingAnon)/(1<<20))
			}
		}
		if res.err != nil && !res.pinged {
			// A binary that cannot start or answer a ping is broken for
			// this provider: one error for every metric, no more sessions.
			for _, m := range Metrics() {
				col.fail(m, res.err)
			}
			col.failed = [numSessions]bool{true, true, true}
			return
		}
		if res.err != nil {
			col.failed[kind] = true
			err := fmt.Errorf("%s session: %w", sessionNames[kind], res.err)
			for _, m := range sessionMetrics[kind] {
				col.fail(m, err)
			}
			col.fail(PeakRSS, err)
			col.fail(EndRSSFile, err)
			col.fail(EndRSSAnon, err)
			rssOK = false
			continue
		}
		if res.endErr != nil {
			col.fail(EndRSSFile, res.endErr)
			col.fail(EndRSSAnon, res.endErr)
		} else {
			col.add(EndRSSFile, float64(res.endFile)/(1<<20))
			col.add(EndRSSAnon, float64(res.endAnon)/(1<<20))
		}
		for _, m := range sessionMetrics[kind] {
			if v, ok := res.values[m]; ok {
				col.add(m, v)
			} else {
				col.fail(m, errors.New("CPU time is not readable here"))
			}
		}
		if res.rss == 0 {
			col.fail(PeakRSS, errors.New("peak RSS is not readable here"))
			rssOK = false
		}
		peak = max(peak, res.rss)
	}
	if rssOK {
		col.add(PeakRSS, float64(peak)/(1<<20))
	}
}

// session spawns b, pings it, runs the work of kind, reads the peak RSS and
// reaps the process.
func (h *harness) session(ctx context.Context, b Binary, p string, kind sessionKind) sessionResult {
	var res sessionResult
	start := time.Now()
	c, err := spawn(ctx, resolve(b.Path), h.args(p), h.fx.cwd, h.env, h.cfg.Timeout)
	if err != nil {
		res.err = err
		return res
	}
	if err := c.ping(); err != nil {
		res.err = c.fail(fmt.Errorf("ping: %w", err))
		return res
	}
	res.ping, res.pinged = time.Since(start), true
	res.pingFile, res.pingAnon, res.residentErr = readResident(c.pid())
	var exitCPU bool
	switch kind {
	case streamSession:
		res.values, exitCPU, err = h.stream(c)
	case seqSession:
		res.values, err = h.sequence(c)
	case toolSession:
		res.values, err = h.tool(c)
	}
	if err != nil {
		res.err = c.fail(err)
		return res
	}
	res.endFile, res.endAnon, res.endErr = readResident(c.pid())
	rss, rssErr := readPeakRSS(c.pid())
	if err := c.reap(h.cfg.Timeout); err != nil {
		res.err = fmt.Errorf("after stdin closed: %w", err)
		return res
	}
	res.state = c.cmd.ProcessState
	if rssErr != nil {
		rss = exitMaxRSS(res.state)
	}
	res.rss = rss
	if exitCPU {
		// Without /proc, the CPU time of the whole process is what is known.
		res.values[StreamCPU] = ms(res.state.UserTime() + res.state.SystemTime())
	}
	return res
}

// stream measures one prompt answered with the long stream of deltas. It
// reports exitCPU when the prompt's CPU time could not be sampled and the
// whole process's must be used.
func (h *harness) stream(c *child) (vals map[Metric]float64, exitCPU bool, err error) {
	// A client's first exchange: what a binary starts beside its first
	// prompt (extensions, MCP servers) starts in it, and the stream is
	// timed on a warm connection.
	if _, err := c.prompt(fakeprovider.PromptShort); err != nil {
		return nil, false, fmt.Errorf("first short prompt: %w", err)
	}
	before, cpuErr := readCPU(c.pid())
	res, err := c.prompt(fakeprovider.PromptDeltas(h.cfg.Deltas))
	if err != nil {
		return nil, false, err
	}
	if want := h.cfg.Deltas * fakeprovider.DeltaSize; res.deltaBytes != want {
		return nil, false, fmt.Errorf("streamed %d bytes of text in %d deltas, want %d bytes", res.deltaBytes, res.deltas, want)
	}
	vals = map[Metric]float64{EventsPerSec: float64(res.deltas) / res.elapsed.Seconds()}
	if cpuErr != nil {
		return vals, true, nil
	}
	after, err := readCPU(c.pid())
	if err != nil {
		return nil, false, err
	}
	vals[StreamCPU] = ms(cpuDelta(before, after))
	return vals, false, nil
}

// sequence measures short prompts sent one after another, and the CPU
// time they cost when it can be sampled.
func (h *harness) sequence(c *child) (map[Metric]float64, error) {
	before, cpuErr := readCPU(c.pid())
	lat := make([]float64, 0, h.cfg.Seq)
	for i := range h.cfg.Seq {
		res, err := c.prompt(fakeprovider.PromptShort)
		if err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i+1, err)
		}
		if res.deltas == 0 {
			return nil, fmt.Errorf("prompt %d streamed no text", i+1)
		}
		lat = append(lat, ms(res.elapsed))
	}
	vals := map[Metric]float64{SeqLatency: median(lat)}
	if cpuErr == nil {
		if after, err := readCPU(c.pid()); err == nil {
			vals[SeqCPU] = ms(cpuDelta(before, after)) / float64(h.cfg.Seq)
		}
	}
	return vals, nil
}

// tool measures prompts with a tool round trip, cfg.Trips with bash and
// as many with read, alternating, after a first short prompt; it checks
// with the fake provider that each tool's output came back to it.
func (h *harness) tool(c *child) (map[Metric]float64, error) {
	if _, err := c.prompt(fakeprovider.PromptShort); err != nil {
		return nil, fmt.Errorf("first short prompt: %w", err)
	}
	var bash, read []float64
	for i := range h.cfg.Trips {
		d, err := h.bashTrip(c)
		if err != nil {
			return nil, fmt.Errorf("bash round trip %d: %w", i+1, err)
		}
		bash = append(bash, d)
		if d, err = h.readTrip(c); err != nil {
			return nil, fmt.Errorf("read round trip %d: %w", i+1, err)
		}
		read = append(read, d)
	}
	return map[Metric]float64{ToolRoundTrip: median(bash), ReadRoundTrip: median(read)}, nil
}

// bashTrip times one prompt whose answer runs bash.
func (h *harness) bashTrip(c *child) (float64, error) {
	before := h.fake.Stats()
	res, err := c.prompt(fakeprovider.PromptTool)
	if err != nil {
		return 0, err
	}
	after := h.fake.Stats()
	if after.ToolCalls == before.ToolCalls {
		return 0, errors.New("the provider was not asked for the tool call")
	}
	if after.ToolResultsOK == before.ToolResultsOK {
		return 0, fmt.Errorf("the provider never received the output of %q", fakeprovider.ToolCommand)
	}
	if res.deltas == 0 {
		return 0, errors.New("no text streamed after the tool result")
	}
	return ms(res.elapsed), nil
}

// readTrip times one prompt whose answer reads the fixture's text file.
func (h *harness) readTrip(c *child) (float64, error) {
	before := h.fake.Stats()
	res, err := c.prompt(fakeprovider.PromptRead(h.fx.readFile))
	if err != nil {
		return 0, err
	}
	after := h.fake.Stats()
	if after.ToolCalls == before.ToolCalls {
		return 0, errors.New("the provider was not asked for the tool call")
	}
	if res.toolResults == 0 {
		return 0, errors.New("no tool_result came")
	}
	// The answer quotes the start of the tool's result.
	if !bytes.Contains(res.head, []byte(readFileHead)) {
		return 0, fmt.Errorf("the answer does not quote the file's first line: %q", res.head)
	}
	return ms(res.elapsed), nil
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
