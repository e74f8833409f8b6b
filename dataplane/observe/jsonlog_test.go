package observe

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gantry-proxy/gantry/config/static"
)

// referenceSplit is net.SplitHostPort with hp as host when it fails.
func referenceSplit(hp string) (host, port string) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return hp, ""
	}
	return h, p
}

// referenceFields is the access log's fields of ev built the obvious way,
// as a map (accessLog.fields applied): the JSON line's and the OTLP
// record's, without the JSON line's level, msg and time.
func (a *AccessLog) referenceFields(ev *RequestEvent, count int64) map[string]any {
	clientHost, clientPort := referenceSplit(ev.ClientAddr)
	reqHost, reqPort := referenceSplit(ev.Host)
	if reqHost == "" {
		reqHost = ev.Host
	}
	scheme := "http"
	if ev.TLS {
		scheme = "https"
	}
	svcAddr := ""
	if u, err := url.Parse(ev.Upstream); err == nil {
		svcAddr = u.Host
	}
	m := map[string]any{
		"ClientAddr":            ev.ClientAddr,
		"ClientHost":            clientHost,
		"ClientPort":            clientPort,
		"ClientUsername":        orDash(basicUser(ev.Header)),
		"DownstreamContentSize": ev.BytesOut,
		"DownstreamStatus":      ev.Status,
		"Duration":              ev.Duration.Nanoseconds(),
		"RequestAddr":           ev.Host,
		"RequestContentSize":    contentLength(ev.Header),
		"RequestCount":          count,
		"RequestHost":           reqHost,
		"RequestMethod":         ev.Method,
		"RequestPath":           ev.Path,
		"RequestPort":           orDash(reqPort),
		"RequestProtocol":       ev.Proto,
		"RequestScheme":         scheme,
		"RetryAttempts":         ev.Retries,
		"StartLocal":            ev.Start.Local().Format(time.RFC3339Nano),
		"StartUTC":              ev.Start.UTC().Format(time.RFC3339Nano),
		"entryPointName":        ev.EntryPoint,
	}
	if ev.Router != "" {
		m["RouterName"] = ev.Router
	}
	if ev.Service != "" {
		m["ServiceName"] = ev.Service
	}
	if ev.TraceID != ([16]byte{}) {
		m["TraceId"] = hex.EncodeToString(ev.TraceID[:])
		m["SpanId"] = hex.EncodeToString(ev.SpanID[:])
	}
	if ev.TLSVersion != 0 {
		m["TLSVersion"] = TLSVersionLabel(ev.TLSVersion)
		m["TLSCipher"] = TLSCipherLabel(ev.TLSCipher)
	}
	if ev.Upstream != "" {
		m["OriginContentSize"] = ev.BytesOut
		m["ServiceURL"] = redactURL(ev.Upstream)
		m["ServiceAddr"] = svcAddr
		m["OriginStatus"] = ev.ServiceStatus()
	}
	for k := range m {
		switch a.fields.field(k) {
		case ModeDrop:
			delete(m, k)
		case ModeRedact:
			m[k] = Redacted
		}
	}
	addHeaders := func(prefix string, h http.Header) {
		for name, vals := range h {
			switch a.fields.header(canonical(name)) {
			case ModeKeep:
				m[prefix+name] = strings.Join(vals, ",")
			case ModeRedact:
				m[prefix+name] = Redacted
			}
		}
	}
	addHeaders("request_", ev.Header)
	addHeaders("downstream_", ev.ResponseHeader)
	return m
}

// referenceJSON is the access log's JSON line built the obvious way (a map
// and encoding/json, which sorts keys as logrus does): appendJSON must
// write exactly the same bytes.
func (a *AccessLog) referenceJSON(ev *RequestEvent, count int64) []byte {
	m := a.referenceFields(ev, count)
	m["level"] = "info"
	m["msg"] = ""
	m["time"] = ev.Start.Add(ev.Duration).Format(time.RFC3339)
	out, err := json.Marshal(m)
	if err != nil { // only unencodable values could cause this; there are none
		out = []byte(`{"msg":"access log: encode failed"}`)
	}
	return append(out, '\n')
}

// awkwardEvents are events with awkward values for the access log's
// encoders: quotes, control characters, HTML characters, invalid UTF-8,
// U+2028, multi-valued and lower-case headers, TLS, trace IDs, a rewritten
// status, Host without a port, IPv6 addresses and awkward times.
func awkwardEvents() []*RequestEvent {
	evs := []*RequestEvent{event("web@file", 200, 3*time.Millisecond), event("", 404, 0)}
	odd := event("weird\"<r>&@file", 502, time.Second)
	odd.Path = "/a\x00b\n\t\"q\"?x=<script>&y=\xff\xfe\u2028\u2029é"
	odd.Header.Add("X-Multi", "a")
	odd.Header.Add("X-Multi", "b\"c")
	odd.Header["lower-case"] = []string{"v\x01"}
	odd.ResponseHeader.Set("Set-Cookie", "k=v; HttpOnly")
	odd.TLS, odd.TLSVersion, odd.TLSCipher = true, 0x0304, 0x1301
	odd.TraceID, odd.SpanID = [16]byte{1, 2, 3, 0xff}, [8]byte{9, 0xab}
	odd.Upstream = "http://user:pw@10.0.0.9:8080/base"
	odd.Retries = 2
	odd.OriginStatus = 503
	noPort := event("web@file", 200, time.Millisecond)
	noPort.Host, noPort.ClientAddr = "example.com", "[2001:db8::7]:5555"
	v6 := event("web@file", 200, time.Millisecond)
	v6.Host, v6.ClientAddr = "[2001:db8::1]", "2001:db8::7" // no port: a colon, but not a host:port
	noHost := event("", 400, 0)
	noHost.Host, noHost.ClientAddr, noHost.Header, noHost.ResponseHeader = "", "", nil, nil
	noHost.Upstream = "http://10.0.0.8:81#frag"
	// Times: fractions of a second (trailing zeros dropped), the end in
	// the next second, years of other than four digits.
	frac := event("web@file", 200, 877*time.Millisecond)
	frac.Start = t0.Add(123456780 * time.Nanosecond)
	tiny := event("web@file", 200, time.Nanosecond)
	tiny.Start = t0.Add(120 * time.Nanosecond)
	far := event("web@file", 200, time.Millisecond)
	far.Start = time.Date(12026, 1, 2, 3, 4, 5, 6, time.UTC)
	bc := event("web@file", 200, time.Millisecond)
	bc.Start = time.Date(-1, 1, 2, 3, 4, 5, 600, time.UTC)
	return append(evs, odd, noPort, v6, noHost, frac, tiny, far, bc)
}

// fieldConfigs are JSON access-log configurations covering every field
// and header mode, including one keeping no field at all.
func fieldConfigs() []*static.AccessLog {
	return []*static.AccessLog{
		{Format: "json"},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "keep", Names: map[string]string{"ClientHost": "drop", "Duration": "redact"},
			Headers: &static.FieldHeaders{DefaultMode: "keep", Names: map[string]string{"Authorization": "redact", "X-Token": "drop"}}}},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "drop", Names: map[string]string{"RequestPath": "keep"},
			Headers: &static.FieldHeaders{DefaultMode: "redact"}}},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "drop"}},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "drop", Headers: &static.FieldHeaders{DefaultMode: "keep"}}},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "redact", Names: map[string]string{"entryPointName": "keep", "StartUTC": "keep"},
			Headers: &static.FieldHeaders{Names: map[string]string{"user-agent": "keep", "Content-Type": "redact"}}}},
	}
}

// forEachCase calls f for every configuration of fieldConfigs and every
// event of awkwardEvents, with time.Local UTC, then 5 h 30 min east of it
// (so that StartLocal and StartUTC differ; the tests that call it are not
// parallel). where names the case in messages.
func forEachCase(t *testing.T, f func(where string, a *AccessLog, ev *RequestEvent)) {
	t.Helper()
	saved := time.Local
	defer func() { time.Local = saved }()
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("IST", 5*3600+1800)} {
		time.Local = loc
		for ci, c := range fieldConfigs() {
			a, err := NewAccessLog(nil, c)
			if err != nil {
				t.Fatal(err)
			}
			for ei, ev := range awkwardEvents() {
				f(fmt.Sprintf("%s config %d event %d", loc, ci, ei), a, ev)
			}
		}
	}
}

// TestAppendJSONMatchesEncodingJSON: the hand-written encoder writes the
// same bytes as encoding/json over the same fields as a map, for events
// with awkward values and every field mode.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	forEachCase(t, func(where string, a *AccessLog, ev *RequestEvent) {
		got, want := a.appendJSON(nil, ev, 7), a.referenceJSON(ev, 7)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", where, got, want)
		}
	})
}

// TestAccessAttrsMatchFields: an OTLP access record carries the same
// fields as the reference (numbers as integers, everything else as text),
// each once, the fixed fields first in key order, then the request
// headers, then the response headers.
func TestAccessAttrsMatchFields(t *testing.T) {
	group := func(k string) int {
		switch {
		case strings.HasPrefix(k, "request_"):
			return 1
		case strings.HasPrefix(k, "downstream_"):
			return 2
		}
		return 0
	}
	forEachCase(t, func(where string, a *AccessLog, ev *RequestEvent) {
		want := a.referenceFields(ev, 7)
		for k, v := range want {
			switch n := v.(type) {
			case int:
				want[k] = int64(n)
			case string, int64:
			default:
				t.Fatalf("reference field %s is a %T", k, v)
			}
		}
		got := map[string]any{}
		prev := ""
		for _, kv := range a.accessAttrs(ev, 7) {
			k := string(kv.Key)
			if _, dup := got[k]; dup {
				t.Errorf("%s: %s twice", where, k)
			}
			if prev != "" && (group(k) < group(prev) || group(k) == 0 && k < prev) {
				t.Errorf("%s: %s after %s", where, k, prev)
			}
			prev = k
			switch kv.Value.Type() {
			case attribute.INT64:
				got[k] = kv.Value.AsInt64()
			case attribute.STRING:
				got[k] = kv.Value.AsString()
			default:
				t.Errorf("%s: %s is a %s", where, k, kv.Value.Type())
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", where, got, want)
		}
	})
}

// reopenRecorder is a writer that records writes and reopens in order.
type reopenRecorder struct{ ops []string }

func (r *reopenRecorder) Write(p []byte) (int, error) {
	r.ops = append(r.ops, "write "+strconv.Itoa(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

func (r *reopenRecorder) Reopen() error {
	r.ops = append(r.ops, "reopen")
	return nil
}

// TestAccessLogBufferedReopenAndShutdown: lines wait in the buffer (no
// write per line); Reopen writes them to the old file before reopening;
// Run writes what is left when its context ends.
func TestAccessLogBufferedReopenAndShutdown(t *testing.T) {
	w := &reopenRecorder{}
	a, err := NewAccessLog(w, &static.AccessLog{Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	ev := event("web@file", 200, time.Millisecond)
	for range 3 {
		a.Request(ev)
	}
	if len(w.ops) != 0 {
		t.Fatalf("written before a flush: %v", w.ops)
	}
	if err := a.Reopen(); err != nil {
		t.Fatal(err)
	}
	a.Request(ev)
	a.Request(ev)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(w.ops, ", "), "write 3, reopen, write 2"; got != want {
		t.Errorf("operations %q, want %q", got, want)
	}
}

// TestAccessLogBufferBound: when the writer does not keep up, lines beyond
// accessLog.bufferingSize are dropped and counted, never waited for.
func TestAccessLogBufferBound(t *testing.T) {
	a, err := NewAccessLog(io.Discard, &static.AccessLog{Format: "json", BufferingSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	ev := event("web@file", 200, time.Millisecond)
	for range 25 {
		a.Request(ev)
	}
	if a.Dropped() != 15 {
		t.Errorf("dropped %d, want 15 (bound 10, no writer running)", a.Dropped())
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.Request(ev)
	if a.Dropped() != 15 {
		t.Errorf("dropped %d after a flush, want still 15", a.Dropped())
	}
}

// BenchmarkAppendJSON is the formatting of one JSON access-log line (a
// request with Basic credentials; the default fields).
func BenchmarkAppendJSON(b *testing.B) {
	a, err := NewAccessLog(io.Discard, &static.AccessLog{Format: "json"})
	if err != nil {
		b.Fatal(err)
	}
	ev := event("app@file", 200, time.Millisecond)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = a.appendJSON(buf[:0], ev, 1)
	}
}

// TestJSONTextWordAtATime: appendJSONText, which skips eight bytes at a
// time while none needs escaping, escapes every byte value at every place
// of a word (first word, second word, the tail after it) as encoding/json
// does.
func TestJSONTextWordAtATime(t *testing.T) {
	for c := range 256 {
		for at := range 19 {
			s := []byte(strings.Repeat("a", 19))
			s[at] = byte(c)
			want, err := json.Marshal(string(s))
			if err != nil {
				t.Fatal(err)
			}
			got := append(appendJSONText([]byte{'"'}, string(s)), '"')
			if !bytes.Equal(got, want) {
				t.Fatalf("byte %#x at %d: got %s, want %s", c, at, got, want)
			}
		}
	}
}
