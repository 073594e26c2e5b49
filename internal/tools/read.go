package tools

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
)

// Limits of the read tool's output.
const (
	readDefaultLimit = 2000
	readMaxLineRunes = 2000
	// readOutputCap bounds the text of one read call; when the requested
	// lines would exceed it, fewer are shown and the footer says where to
	// continue.
	readOutputCap = 100 << 10
	// readMaxScan bounds the bytes one read call takes from a file to
	// reach and show its lines. It stops files that never end (a /proc
	// file stats as empty however much it yields); lines past it are for
	// bash.
	readMaxScan = 1 << 30
	// readCountBytes bounds how far read looks past the lines it shows to
	// count the lines that remain; past it the footer gives a lower bound.
	readCountBytes = 4 << 20
)

// readTool shows a text file's lines or returns an image.
type readTool struct {
	cfg Config
	// maxScan replaces readMaxScan when not zero.
	maxScan int64
}

func (*readTool) Name() string { return "read" }

func (*readTool) Description() string {
	return "Read a file. Text files are returned with numbered lines (" +
		fmt.Sprint(readDefaultLimit) + " lines by default; use offset and limit to page " +
		"through large files; lines longer than " + fmt.Sprint(readMaxLineRunes) +
		" characters are truncated). PNG, JPEG, GIF and WebP images are returned as images. " +
		"Use ls for directories. Only regular files are read: named pipes, sockets and devices " +
		"are refused. One call looks at most " + byteSize(readMaxScan) + " into a file; use bash " +
		"(tail, sed) for lines past that."
}

func (*readTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to read, absolute or relative to the working directory."},
    "offset": {"type": "integer", "minimum": 1, "description": "1-based line number to start reading at. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func (t *readTool) Run(ctx context.Context, call Call) (Result, error) {
	var path string
	offset, limit := 1, readDefaultLimit
	if _, err := decodeArgs(call.Args, "",
		stringArg("path", true, &path),
		intArg("offset", false, &offset),
		intArg("limit", false, &limit),
	); err != nil {
		return invalidArgs(err), nil
	}
	switch {
	case path == "":
		return Errorf(`invalid arguments: field "path" must not be empty`), nil
	case offset < 1:
		return Errorf(fmt.Sprintf(`invalid arguments: field "offset" must be at least 1, got %d`, offset)), nil
	case limit < 1:
		return Errorf(fmt.Sprintf(`invalid arguments: field "limit" must be at least 1, got %d`, limit)), nil
	}
	abs := resolvePath(t.cfg.CWD, path)
	shown := displayPath(t.cfg.CWD, abs)
	if fa := fileAccess(ctx); fa != nil {
		if res, ok := t.readThrough(ctx, fa, abs, shown, offset, limit); ok {
			return res, nil
		}
	}

	f, st, err := openRegular(abs)
	var wrong *wrongTypeError
	switch {
	case errors.As(err, &wrong) && wrong.mode.IsDir():
		return Errorf(fmt.Sprintf("%s is a directory; use ls to list it", shown)), nil
	case wrong != nil:
		return Errorf(fmt.Sprintf("%s %v; read reads only regular files", shown, wrong)), nil
	case err != nil:
		return Errorf(fmt.Sprintf("cannot read %s: %v", shown, unwrapPathError(err))), nil
	}
	defer f.Close()
	return t.readFrom(ctx, f, shown, st.Size(), offset, limit)
}

// readFrom shows the content of r, a file of size bytes by its stat (0 for
// some files that hold more), as an image or as lines offset..offset+limit-1.
func (t *readTool) readFrom(ctx context.Context, r io.Reader, shown string, size int64, offset, limit int) (Result, error) {
	cr := &capReader{ctx: ctx, r: r, max: cmp.Or(t.maxScan, readMaxScan)}
	br := readBuffers.Get().(*bufio.Reader)
	br.Reset(cr)
	defer func() {
		br.Reset(nil) // let go of the file
		readBuffers.Put(br)
	}()
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errCapped) {
		return readFailure(ctx, shown, err), nil
	}
	if mime := images.Sniff(head); mime != "" {
		return t.readImage(br, shown, mime, size)
	}
	if looksBinary(head) {
		return Errorf(fmt.Sprintf("%s is a binary file (%d bytes); read shows only text files and images", shown, size)), nil
	}
	return readText(ctx, br, cr, shown, size, offset, limit)
}

// readBuffers are the read buffers of readFrom: a read is done with its
// buffer when it returns, and a buffer per call was a third of what a
// call allocated.
var readBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// readImage returns the image held in r if it is within the size cap.
func (t *readTool) readImage(r io.Reader, shown, mime string, size int64) (Result, error) {
	limit := t.cfg.MaxImageBytes
	if size > int64(limit) {
		return Errorf(fmt.Sprintf("%s is an image (%s) of %s (%d bytes), above the cap of %s (%d bytes) for images",
			shown, mime, byteSize(size), size, byteSize(int64(limit)), limit)), nil
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return Errorf(fmt.Sprintf("cannot read %s: %v", shown, unwrapPathError(err))), nil
	}
	if len(data) > limit {
		return Errorf(fmt.Sprintf("%s is an image (%s) larger than the cap of %s (%d bytes) for images", shown, mime, byteSize(int64(limit)), limit)), nil
	}
	return Result{Content: []llm.Block{
		&llm.TextBlock{Text: fmt.Sprintf("%s: %s image, %s", shown, mime, byteSize(int64(len(data))))},
		&llm.ImageBlock{MIME: mime, Data: data},
	}}, nil
}

// readText formats lines offset..offset+limit-1 of br, which reads from
// cr, with line numbers. size is the file's size, 0 when not known: the
// output is sized from it.
func readText(ctx context.Context, br *bufio.Reader, cr *capReader, shown string, size int64, offset, limit int) (Result, error) {
	lr := &lineReader{br: br, keepBytes: readMaxLineRunes * 4}
	skipped, err := lr.skip(ctx, offset-1)
	if errors.Is(err, errCapped) {
		return beyondScan(cr, shown, offset, skipped), nil
	}
	if err != nil {
		return readFailure(ctx, shown, err), nil
	}
	if skipped < offset-1 {
		if skipped == 0 {
			return Errorf(fmt.Sprintf("offset %d is beyond the end of %s, which is empty", offset, shown)), nil
		}
		return Errorf(fmt.Sprintf("offset %d is beyond the end of %s (%d lines)", offset, shown, skipped)), nil
	}

	var out strings.Builder
	var entry []byte
	last := offset - 1
	for n := 0; n < limit; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return readFailure(ctx, shown, ctx.Err()), nil
		}
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		capped := errors.Is(err, errCapped)
		if err != nil && !capped {
			return readFailure(ctx, shown, err), nil
		}
		if capped && ln.size == 0 {
			if last < offset {
				return beyondScan(cr, shown, offset, offset-1), nil
			}
			return scanStopped(cr, &out, offset, last), nil
		}
		entry = appendNumbered(entry[:0], last+1, ln, capped)
		if n > 0 && out.Len()+len(entry) > readOutputCap {
			// Unread: the line stays for the next call.
			return finishRead(ctx, lr, cr, &out, shown, offset, last, 1)
		}
		if out.Cap() == 0 {
			out.Grow(outputSize(size, offset))
		}
		out.Write(entry)
		last++
		if capped {
			return scanStopped(cr, &out, offset, last), nil
		}
	}
	if last < offset {
		if offset == 1 {
			return Text(fmt.Sprintf("%s is empty", shown)), nil
		}
		return Errorf(fmt.Sprintf("offset %d is beyond the end of %s (%d lines)", offset, shown, offset-1)), nil
	}
	return finishRead(ctx, lr, cr, &out, shown, offset, last, 0)
}

// outputSize is the room to make for the numbered lines of a file of
// size bytes read from line offset: the whole file with a number for
// about every 40 bytes when it is read from its start, so a small file's
// output is written without growing; 1/16 of the cap otherwise.
func outputSize(size int64, offset int) int {
	if offset != 1 || size <= 0 {
		return readOutputCap / 16
	}
	return int(min(size+size/4+64, readOutputCap))
}

// finishRead adds the continuation footer when lines remain after last.
// pending counts lines already taken from lr but not shown. It counts the
// lines that remain within readCountBytes only: a huge file is not read to
// its end for the count.
func finishRead(ctx context.Context, lr *lineReader, cr *capReader, out *strings.Builder, shown string, offset, last, pending int) (Result, error) {
	cr.max = min(cr.max, cr.n+readCountBytes)
	rest, err := lr.count(ctx)
	total := last + pending + rest
	switch {
	case errors.Is(err, errCapped):
		fmt.Fprintf(out, "\n[showing lines %d-%d of more than %d; call read with offset=%d to continue]\n", offset, last, total, last+1)
	case err != nil:
		return readFailure(ctx, shown, err), nil
	case total > last:
		fmt.Fprintf(out, "\n[showing lines %d-%d of %d; call read with offset=%d to continue]\n", offset, last, total, last+1)
	}
	return Text(out.String()), nil
}

// scanStopped ends a read that reached the scan limit before the file
// ended.
func scanStopped(cr *capReader, out *strings.Builder, offset, last int) Result {
	fmt.Fprintf(out, "\n[showing lines %d-%d; the file goes on, but read looks at most %s into a file; use bash (tail, sed) for the rest]\n",
		offset, last, byteSize(cr.max))
	return Text(out.String())
}

// beyondScan refuses an offset past the scan limit; lines counts the lines
// before the limit.
func beyondScan(cr *capReader, shown string, offset, lines int) Result {
	return Errorf(fmt.Sprintf("offset %d is past the first %s of %s (%d lines), which is as far as read looks into a file; use bash (tail, sed) for lines past it",
		offset, byteSize(cr.max), shown, lines))
}

// appendNumbered appends line number n right-aligned in six columns
// (as %6d), a tab, the line as formatLine renders it and a newline.
func appendNumbered(b []byte, n int, ln line, partial bool) []byte {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	for range 6 - len(digits) {
		b = append(b, ' ')
	}
	b = append(b, digits...)
	b = append(b, '\t')
	text, cut := truncateRunes(ln.text, readMaxLineRunes)
	if utf8.Valid(text) && !partial && !cut && ln.size <= len(ln.text) {
		b = append(b, text...)
	} else {
		b = append(b, formatLine(ln, partial)...)
	}
	return append(b, '\n')
}

// formatLine renders a line for display: valid UTF-8, cut to
// readMaxLineRunes characters with a marker. partial says the line goes
// on past what was read of it.
func formatLine(ln line, partial bool) string {
	text, cut := truncateRunes(ln.text, readMaxLineRunes)
	s := strings.ToValidUTF8(string(text), "\uFFFD")
	switch {
	case partial:
		s += fmt.Sprintf(" … [line truncated: more than %d bytes]", ln.size)
	case cut || ln.size > len(ln.text):
		s += fmt.Sprintf(" … [line truncated: %d bytes in full]", ln.size)
	}
	return s
}

func readFailure(ctx context.Context, shown string, err error) Result {
	if ctx.Err() != nil {
		return Errorf("aborted")
	}
	return Errorf(fmt.Sprintf("cannot read %s: %v", shown, unwrapPathError(err)))
}

// unwrapPathError drops the path from an *os.PathError, which the caller
// already names in its message.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// byteSize renders n bytes for people: "512 B", "3.2 KiB", "7.0 MiB".
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
