package observe

import (
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// jfield is one key of a JSON access-log line: a string, a number, a
// time or an ID (formatted when written). Header fields have a prefix
// ("request_", "downstream_") kept apart from the name so that no key is
// concatenated. It is kept small (72 bytes): a line appends some thirty.
type jfield struct {
	prefix, key string
	s           string
	n, m        int64 // jNumber: n; jTime*: Unix seconds in n, nanoseconds in m; jHex: the ID's bytes, big-endian, in n (and m)
	kind        uint8
}

const (
	jString = iota
	jNumber
	jTimeLocal // n, m in the local time zone, RFC 3339 with nanoseconds
	jTimeUTC   // n, m in UTC, RFC 3339 with nanoseconds
	jHex8      // the 8 bytes of n as lowercase hex (a span ID)
	jHex16     // n then m, 16 bytes, as lowercase hex (a trace ID)
)

// idField is the jHex8 (8 bytes) or jHex16 (16) field of id.
func idField(key string, id []byte) jfield {
	x := jfield{key: key, kind: jHex8, n: int64(binary.BigEndian.Uint64(id))}
	if len(id) == 16 {
		x.kind, x.m = jHex16, int64(binary.BigEndian.Uint64(id[8:]))
	}
	return x
}

// appendValue appends x's value as JSON text would hold it, unquoted and
// unescaped (numbers as digits).
func (x *jfield) appendValue(b []byte) []byte {
	switch x.kind {
	case jNumber:
		return strconv.AppendInt(b, x.n, 10)
	case jTimeLocal:
		return time.Unix(x.n, x.m).AppendFormat(b, time.RFC3339Nano)
	case jTimeUTC:
		return time.Unix(x.n, x.m).UTC().AppendFormat(b, time.RFC3339Nano)
	case jHex8, jHex16:
		var id [16]byte
		binary.BigEndian.PutUint64(id[:8], uint64(x.n))
		binary.BigEndian.PutUint64(id[8:], uint64(x.m))
		if x.kind == jHex8 {
			return hex.AppendEncode(b, id[:8])
		}
		return hex.AppendEncode(b, id[:])
	}
	return append(b, x.s...)
}

type jsonScratch struct{ fields []jfield }

var jsonPool = sync.Pool{New: func() any { return &jsonScratch{fields: make([]jfield, 0, 48)} }}

// appendJSON appends one JSON object with Traefik's access-log field names
// (pkg/middlewares/accesslog/logdata.go), keys sorted as logrus writes
// them, plus request_<Header> and downstream_<Header> for kept headers,
// and a newline. Duration is in nanoseconds, sizes in bytes. It writes the
// same bytes as encoding/json would for the same fields as a map, without
// building one and without sorting the fixed fields: appendFields appends
// them in key order, and bytewise every key with an upper-case initial <
// downstream_* < entryPointName < level < msg < request_* < time, so only
// each group of headers is sorted.
func (a *AccessLog) appendJSON(b []byte, ev *RequestEvent, count int64) []byte {
	sc := jsonPool.Get().(*jsonScratch)
	f := a.appendFields(sc.fields[:0], ev, count)
	fixed, hdrs := cutPrefixRun(f, "")
	req, down := cutPrefixRun(hdrs, "request_")
	slices.SortFunc(req, cmpKey)
	slices.SortFunc(down, cmpKey)
	var epn []jfield // entryPointName when kept: the one fixed key with a lower-case initial, last
	if n := len(fixed); n > 0 && fixed[n-1].key == "entryPointName" {
		fixed, epn = fixed[:n-1], fixed[n-1:]
	}

	b = append(b, '{')
	b = appendJSONFields(b, fixed)
	b = appendJSONFields(b, down)
	b = appendJSONFields(b, epn)
	b = appendJSONField(b, jfield{key: "level", s: "info"})
	b = appendJSONField(b, jfield{key: "msg"})
	b = appendJSONFields(b, req)
	b = append(b, `,"time":"`...)
	b = ev.Start.Add(ev.Duration).AppendFormat(b, time.RFC3339)
	b = append(b, '"', '}', '\n')
	clear(f) // drop references to this request's strings
	sc.fields = f[:0]
	jsonPool.Put(sc)
	return b
}

// cmpKey orders fields of one prefix by key, bytewise.
func cmpKey(a, b jfield) int { return strings.Compare(a.key, b.key) }

func appendJSONFields(b []byte, f []jfield) []byte {
	for _, x := range f {
		b = appendJSONField(b, x)
	}
	return b
}

// appendJSONField appends `"<prefix><key>":<value>`, after a comma unless
// it is the object's first member.
func appendJSONField(b []byte, x jfield) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	if x.prefix == "" {
		b = append(b, x.key...) // a fixed name: nothing to escape
	} else {
		b = appendJSONText(b, x.prefix)
		b = appendJSONText(b, x.key)
	}
	b = append(b, '"', ':')
	switch x.kind {
	case jNumber:
		return x.appendValue(b)
	case jString:
		b = append(b, '"')
		b = appendJSONText(b, x.s)
		return append(b, '"')
	}
	b = append(b, '"')
	b = x.appendValue(b) // times and IDs: nothing to escape
	return append(b, '"')
}

// appendFields appends the access-log fields of ev that accessLog.fields
// keeps (redacted ones as REDACTED), with Traefik's names, unsorted: the
// JSON line's and the OTLP record's attributes.
func (a *AccessLog) appendFields(f []jfield, ev *RequestEvent, count int64) []jfield {
	str := func(k, v string) { f = append(f, jfield{key: k, s: v}) }
	num := func(k string, n int64) { f = append(f, jfield{key: k, kind: jNumber, n: n}) }

	clientHost, clientPort, _ := splitHostPort(ev.ClientAddr)
	reqHost, reqPort, _ := splitHostPort(ev.Host)
	if reqHost == "" {
		reqHost = ev.Host
	}
	scheme := "http"
	if ev.TLS {
		scheme = "https"
	}
	// In key order, bytewise (appendJSON relies on it); entryPointName last.
	str("ClientAddr", ev.ClientAddr)
	str("ClientHost", clientHost)
	str("ClientPort", clientPort)
	str("ClientUsername", orDash(basicUser(ev.Header)))
	num("DownstreamContentSize", ev.BytesOut)
	num("DownstreamStatus", int64(ev.Status))
	num("Duration", ev.Duration.Nanoseconds())
	if ev.Upstream != "" {
		num("OriginContentSize", ev.BytesOut)
		num("OriginStatus", int64(ev.ServiceStatus()))
	}
	str("RequestAddr", ev.Host)
	num("RequestContentSize", contentLength(ev.Header))
	num("RequestCount", count)
	str("RequestHost", reqHost)
	str("RequestMethod", ev.Method)
	str("RequestPath", ev.Path)
	str("RequestPort", orDash(reqPort))
	str("RequestProtocol", ev.Proto)
	str("RequestScheme", scheme)
	num("RetryAttempts", int64(ev.Retries))
	if ev.Router != "" {
		str("RouterName", ev.Router)
	}
	if ev.Upstream != "" {
		str("ServiceAddr", urlHost(ev.Upstream))
	}
	if ev.Service != "" {
		str("ServiceName", ev.Service)
	}
	if ev.Upstream != "" {
		str("ServiceURL", redactURL(ev.Upstream))
	}
	traced := ev.TraceID != ([16]byte{})
	if traced {
		f = append(f, idField("SpanId", ev.SpanID[:]))
	}
	sec, nsec := ev.Start.Unix(), int64(ev.Start.Nanosecond())
	f = append(f, jfield{key: "StartLocal", kind: jTimeLocal, n: sec, m: nsec})
	f = append(f, jfield{key: "StartUTC", kind: jTimeUTC, n: sec, m: nsec})
	if ev.TLSVersion != 0 {
		str("TLSCipher", TLSCipherLabel(ev.TLSCipher))
		str("TLSVersion", TLSVersionLabel(ev.TLSVersion))
	}
	if traced {
		f = append(f, idField("TraceId", ev.TraceID[:]))
	}
	str("entryPointName", ev.EntryPoint)
	if !a.fields.keepAll { // the default keeps every field: nothing to look up
		kept := f[:0]
		for _, x := range f {
			switch a.fields.field(x.key) {
			case ModeDrop:
				continue
			case ModeRedact:
				x = jfield{key: x.key, s: Redacted}
			}
			kept = append(kept, x)
		}
		f = kept
	}
	headers := func(prefix string, h http.Header) {
		if a.fields.hdrDef == ModeDrop && len(a.fields.headers) == 0 {
			return // no header is logged (the default): none to look at
		}
		for name, vals := range h {
			switch a.fields.header(canonical(name)) {
			case ModeKeep:
				v := ""
				if len(vals) == 1 {
					v = vals[0]
				} else {
					v = strings.Join(vals, ",")
				}
				f = append(f, jfield{prefix: prefix, key: name, s: v})
			case ModeRedact:
				f = append(f, jfield{prefix: prefix, key: name, s: Redacted})
			}
		}
	}
	headers("request_", ev.Header)
	headers("downstream_", ev.ResponseHeader)
	return f
}

// urlHost is the host[:port] of an absolute URL ("http://u:p@h:80/x" →
// "h:80"), "" when there is none.
func urlHost(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

const hexDigits = "0123456789abcdef"

// jsonPlain marks the ASCII bytes appendJSONText copies as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONText appends s escaped as encoding/json does inside a string:
// quotes, backslashes and control characters escaped, <, > and & as
// \u003c…, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
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

// cutPrefixRun splits f after its leading fields whose prefix is prefix.
func cutPrefixRun(f []jfield, prefix string) (run, rest []jfield) {
	n := len(f)
	for i, x := range f {
		if x.prefix != prefix {
			n = i
			break
		}
	}
	return f[:n], f[n:]
}
