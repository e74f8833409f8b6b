package observe

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// jsonLine is the fieldSink that writes one JSON access-log line: the
// fixed fields as they come (walkFields gives them in key order), the
// headers kept aside until finish sorts them into place.
type jsonLine struct {
	b         []byte
	epn       string // entryPointName, written after the response headers
	hasEPN    bool
	req, resp []jsonHeader
	clock     secondText // kept from line to line
}

// jsonHeader is a kept header: its name as received and its value.
type jsonHeader struct{ name, v string }

// appendJSON appends one JSON object with Traefik's access-log field names
// (pkg/middlewares/accesslog/logdata.go), keys sorted as logrus writes
// them, plus request_<Header> and downstream_<Header> for kept headers,
// and a newline. Duration is in nanoseconds, sizes in bytes. It writes the
// same bytes as encoding/json would for the same fields as a map, without
// building one and without sorting the fixed fields: walkFields gives them
// in key order, and bytewise every key with an upper-case initial <
// downstream_* < entryPointName < level < msg < request_* < time, so only
// each group of headers is sorted.
func (a *AccessLog) appendJSON(b []byte, ev *RequestEvent, count int64) []byte {
	sc := linePool.Get().(*lineScratch)
	b = a.writeJSON(&sc.json, b, ev, count)
	linePool.Put(sc)
	return b
}

// writeJSON is appendJSON with j as its encoder (left empty for reuse).
func (a *AccessLog) writeJSON(j *jsonLine, b []byte, ev *RequestEvent, count int64) []byte {
	j.b = append(b, '{')
	a.walkFields(j, ev, count)
	b = j.finish(ev)
	j.reset()
	return b
}

// reset empties j for the next line, dropping its references to this
// request's strings and to the caller's buffer.
func (j *jsonLine) reset() {
	clear(j.req)
	clear(j.resp)
	*j = jsonLine{req: j.req[:0], resp: j.resp[:0], clock: j.clock}
}

// finish appends what follows the fixed fields: the response headers,
// entryPointName, level, msg, the request headers and time, then '}' and
// a newline; it returns the line.
func (j *jsonLine) finish(ev *RequestEvent) []byte {
	j.headers(responseHeaderPrefix, j.resp)
	if j.hasEPN {
		j.fixedKey(fEntryPointName, true)
		j.b = append(appendJSONText(j.b, j.epn), '"')
	}
	j.key("", "level")
	j.text("info")
	j.key("", "msg")
	j.text("")
	j.headers(requestHeaderPrefix, j.req)
	j.b = append(j.b, `,"time":"`...)
	j.b = j.clock.append(j.b, ev.Start.Add(ev.Duration), false)
	return append(j.b, '"', '}', '\n')
}

// headers appends hs, sorted by name bytewise, as prefix<name> keys.
func (j *jsonLine) headers(prefix string, hs []jsonHeader) {
	slices.SortFunc(hs, func(a, b jsonHeader) int { return strings.Compare(a.name, b.name) })
	for _, h := range hs {
		j.key(prefix, h.name)
		j.text(h.v)
	}
}

// jsonKeys holds `,"<name>":"` for each fixed field (a fixed name has
// nothing to escape), ending with a string value's opening quote.
var jsonKeys = func() (k [numAccessFields]string) {
	for f, name := range accessFieldNames {
		k[f] = `,"` + name + `":"`
	}
	return k
}()

// fixedKey appends the key of f, after a comma unless it is the object's
// first member, and a string value's opening quote when quoted.
func (j *jsonLine) fixedKey(f accessField, quoted bool) {
	k := jsonKeys[f]
	if !quoted {
		k = k[:len(k)-1]
	}
	if j.b[len(j.b)-1] == '{' {
		k = k[1:]
	}
	j.b = append(j.b, k...)
}

// key appends `"<prefix><name>":`, escaped, after a comma unless it is
// the object's first member.
func (j *jsonLine) key(prefix, name string) {
	b := j.b
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = appendJSONText(b, prefix)
	b = appendJSONText(b, name)
	j.b = append(b, '"', ':')
}

// text appends v as a JSON string.
func (j *jsonLine) text(v string) {
	b := append(j.b, '"')
	b = appendJSONText(b, v)
	j.b = append(b, '"')
}

func (j *jsonLine) str(f accessField, v string) {
	if f == fEntryPointName {
		j.epn, j.hasEPN = v, true
		return
	}
	j.fixedKey(f, true)
	j.b = append(appendJSONText(j.b, v), '"')
}

func (j *jsonLine) num(f accessField, n int64) {
	j.fixedKey(f, false)
	j.b = strconv.AppendInt(j.b, n, 10)
}

func (j *jsonLine) stamp(f accessField, t time.Time) {
	j.fixedKey(f, true)
	j.b = append(j.clock.append(j.b, t, true), '"') // nothing to escape
}

func (j *jsonLine) id(f accessField, id []byte) {
	j.fixedKey(f, true)
	b := hex.AppendEncode(j.b, id)
	j.b = append(b, '"')
}

func (j *jsonLine) header(prefix, name, v string) {
	if prefix == requestHeaderPrefix {
		j.req = append(j.req, jsonHeader{name, v})
	} else {
		j.resp = append(j.resp, jsonHeader{name, v})
	}
}

const hexDigits = "0123456789abcdef"

// jsonPlain marks the ASCII bytes appendJSONText copies as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Bytes of a word: each 0x01, each 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainWord reports whether every byte of x is printable ASCII other than
// '"', '\\', '<', '>' and '&'. A byte below n exists iff
// (x - n*ones) & ^x & highs is non-zero (n <= 0x80); x has the byte c iff
// x^(c*ones) has one below 1.
func plainWord(x uint64) bool {
	q, bs, lt, gt, amp := x^'"'*ones, x^'\\'*ones, x^'<'*ones, x^'>'*ones, x^'&'*ones
	return (x|(x-' '*ones)&^x|(q-ones)&^q|(bs-ones)&^bs|(lt-ones)&^lt|(gt-ones)&^gt|(amp-ones)&^amp)&highs == 0
}

// appendJSONText appends s escaped as encoding/json does inside a string:
// quotes, backslashes and control characters escaped, <, > and & as
// \u003c…, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
//
// It reads eight bytes at a time while none needs escaping (plainWord):
// most values have nothing to escape.
func appendJSONText(b []byte, s string) []byte {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if !plainWord(x) {
			break
		}
	}
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	if i == len(s) { // nothing to escape: most values
		return append(b, s...)
	}
	return appendEscaped(b, s, i)
}

// appendEscaped is appendJSONText for an s whose first i bytes need no
// escaping.
func appendEscaped(b []byte, s string, i int) []byte {
	start := 0
	for i < len(s) {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
