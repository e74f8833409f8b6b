package httpwire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Differential tests. Two oracles check the parsers: the RFC grammar
// written as a regular expression (an independent reading of RFC 9112
// §7.1.1 and RFC 9110 §5), which must accept exactly what we accept; and
// net/http's readers, which must read what we accept the same way, with
// the one documented exception (net/http refuses the BWS before ";" that
// the grammar allows). We may refuse what net/http accepts (it is laxer:
// trailing whitespace and any bytes in chunk extensions, obs-fold).

// chunkGrammar is RFC 9112 §7.1.1's chunk-size [ chunk-ext ], over a
// line decoded as Latin-1 (one rune per byte, so obs-text is
// \x{80}-\x{FF}).
var chunkGrammar = func() *regexp.Regexp {
	const (
		bws    = `[ \t]*`
		token  = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+"
		quoted = `"(?:[\t \x21\x23-\x5B\x5D-\x7E\x{80}-\x{FF}]|\\[\t \x21-\x7E\x{80}-\x{FF}])*"`
	)
	return regexp.MustCompile(`^([0-9A-Fa-f]{1,15})(?:` + bws + `;` + bws + token + `(?:` + bws + `=` + bws + `(?:` + token + `|` + quoted + `))?)*$`)
}()

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// bwsBeforeSemi matches a size followed by whitespace then ";": valid
// (BWS), refused by net/http.
var bwsBeforeSemi = regexp.MustCompile(`^[0-9A-Fa-f]+[ \t]+;`)

// stdChunk runs net/http's chunked reader on line CRLF and 64 data bytes:
// ok is false when it refuses the line; n is the chunk size when below 64
// (64 means 64 or more).
func stdChunk(line []byte) (n int64, ok bool) {
	in := append(append(bytes.Clone(line), "\r\n"...), bytes.Repeat([]byte{'x'}, 64)...)
	got, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in)))
	if len(got) == 0 && err != nil {
		return 0, false // refused (a size-0 line ends the body: err is nil)
	}
	return int64(len(got)), true
}

func checkChunkLine(t *testing.T, line []byte) {
	n, err := ParseChunkLine(line)
	m := chunkGrammar.FindStringSubmatch(latin1(line))
	if (err == nil) != (m != nil) {
		t.Fatalf("ParseChunkLine(%q) = %d, %v; the grammar matches: %v", line, n, err, m != nil)
	}
	if err != nil {
		return
	}
	if want, _ := strconv.ParseInt(m[1], 16, 64); n != want {
		t.Fatalf("ParseChunkLine(%q) = %d, want %d", line, n, want)
	}
	sn, ok := stdChunk(line)
	if !ok {
		if bwsBeforeSemi.Match(line) {
			return // the documented difference
		}
		t.Fatalf("ParseChunkLine(%q) = %d; net/http refuses it", line, n)
	}
	if min(n, 64) != sn {
		t.Fatalf("ParseChunkLine(%q) = %d; net/http reads %d", line, n, sn)
	}
}

func TestChunkLineDifferential(t *testing.T) {
	for _, s := range chunkSeeds {
		checkChunkLine(t, []byte(s))
	}
	// Every line of two bytes after a size: every byte in every place.
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b += 3 {
			checkChunkLine(t, []byte{'a', byte(a), byte(b)})
			checkChunkLine(t, []byte{'1', ';', byte(a), '=', byte(b)})
		}
	}
}

var chunkSeeds = []string{
	"0", "5", "A", "fffffffffffffff", "ffffffffffffffff", "5;a=b", "5 ;a", "5\t; a = \"q\\\"\"",
	"5 ", "5;", "0x5", "+5", "5;a=\"\r\"", "5;a b", "5;a=b;c", "5;a=\xff", "5;a=\"\xff\"",
}

// FuzzChunkLine checks ParseChunkLine against the grammar and net/http.
func FuzzChunkLine(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkChunkLine(t, line)
	})
}

// fieldGrammar is RFC 9112 §5.1's field-line (without obs-fold), over a
// Latin-1 decoded line.
var fieldGrammar = regexp.MustCompile("^([!#$%&'*+\\-.^_`|~0-9A-Za-z]+):[ \\t]*((?:[\\x21-\\x7E\\x{80}-\\x{FF}](?:[ \\t\\x21-\\x7E\\x{80}-\\x{FF}]*[\\x21-\\x7E\\x{80}-\\x{FF}])?)?)[ \\t]*$")

// consumed are the fields net/http's request reader moves out of the
// header map or rewrites.
var consumed = map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Trailer": true, "Pragma": true, "Expect": true}

func checkField(t *testing.T, line []byte) {
	name, value, err := ParseField(line)
	m := fieldGrammar.FindStringSubmatch(latin1(line))
	if (err == nil) != (m != nil) {
		t.Fatalf("ParseField(%q) = %q, %q, %v; the grammar matches: %v", line, name, value, err, m != nil)
	}
	if err != nil {
		return
	}
	if latin1(name) != m[1] || latin1(value) != m[2] {
		t.Fatalf("ParseField(%q) = %q, %q; the grammar reads %q, %q", line, name, value, m[1], m[2])
	}
	key := http.CanonicalHeaderKey(string(name))
	raw := "GET / HTTP/1.1\r\nHost: a\r\n" + string(line) + "\r\n\r\n"
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	n, lengthOK := ParseLength(value)
	switch {
	case key == "Host" || key == "Transfer-Encoding" || key == "Expect" || key == "Content-Length" && !lengthOK:
		return // what a request makes of them is the request parser's (dataplane/h1)
	case err != nil:
		t.Fatalf("ParseField(%q) accepted; net/http refuses it: %v", line, err)
	case key == "Content-Length":
		if r.ContentLength != n {
			t.Fatalf("Content-Length %q: ours %d, net/http %d", value, n, r.ContentLength)
		}
	case !consumed[key] && r.Header.Get(key) != string(value):
		t.Fatalf("ParseField(%q) = %q, %q; net/http %q", line, name, value, r.Header.Get(key))
	}
}

var fieldSeeds = []string{
	"X: a", "X:a", "X:  a b  ", "X:", " X: a", "X : a", "X: a\x00", "X: a\rb", "X: \xff", ": a",
	"Content-Length: 5", "Content-Length: +5", "content-length: 0005", "A-B_c: d",
}

func TestFieldDifferential(t *testing.T) {
	for _, s := range fieldSeeds {
		checkField(t, []byte(s))
	}
	for c := 0; c < 256; c++ {
		checkField(t, []byte{'X', byte(c), ':', ' ', 'v'})
		checkField(t, []byte{'X', ':', ' ', 'v', byte(c), 'w', ' '})
		checkField(t, []byte{'X', ':', byte(c), 'v'})
	}
}

// FuzzFieldLine checks ParseField (and ParseLength for Content-Length)
// against the grammar and net/http.
func FuzzFieldLine(f *testing.F) {
	for _, s := range fieldSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\r\n") {
			line, _, _ = bytes.Cut(line, []byte("\n")) // one line: CutLine's job
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		checkField(t, line)
	})
}

func TestCutLineLikeNetHTTPChunkedReader(t *testing.T) {
	// net/http refuses a chunk line ending in a bare LF too (errata 7633).
	for _, in := range []string{"5\n", "5\r\r\n"} {
		_, _, err := CutLine([]byte(in))
		n, perr := ParseChunkLine(bytes.TrimSuffix([]byte(in), []byte("\r\n")))
		ours := err == nil && perr == nil
		_, std := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(in + "hello\r\n0\r\n\r\n")))
		if ours || std == nil || errors.Is(std, io.EOF) {
			t.Errorf("%q: ours accepts=%v (size %d), net/http err=%v", in, ours, n, std)
		}
	}
}
