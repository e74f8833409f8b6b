package observe

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// referenceJSON is the access log's JSON line built the obvious way (a map
// and encoding/json, which sorts keys as logrus does): appendJSON must
// write exactly the same bytes.
func (a *AccessLog) referenceJSON(ev *RequestEvent, count int64) []byte {
	clientHost, clientPort, _ := splitHostPort(ev.ClientAddr)
	reqHost, reqPort, _ := splitHostPort(ev.Host)
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
		m["OriginStatus"] = ev.Status
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
	m["level"] = "info"
	m["msg"] = ""
	m["time"] = ev.Start.Add(ev.Duration).Format(time.RFC3339)
	out, err := json.Marshal(m)
	if err != nil { // only unencodable values could cause this; there are none
		out = []byte(`{"msg":"access log: encode failed"}`)
	}
	return append(out, '\n')
}

// TestAppendJSONMatchesEncodingJSON: the hand-written encoder writes the
// same bytes as encoding/json over the same fields as a map, for events
// with awkward values (quotes, control characters, HTML characters,
// invalid UTF-8, U+2028, multi-valued headers, TLS, trace IDs) and every
// field mode.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
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
	evs = append(evs, odd)
	confs := []*static.AccessLog{
		{Format: "json"},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "keep", Names: map[string]string{"ClientHost": "drop", "Duration": "redact"},
			Headers: &static.FieldHeaders{DefaultMode: "keep", Names: map[string]string{"Authorization": "redact", "X-Token": "drop"}}}},
		{Format: "json", Fields: &static.AccessLogFields{DefaultMode: "drop", Names: map[string]string{"RequestPath": "keep"},
			Headers: &static.FieldHeaders{DefaultMode: "redact"}}},
	}
	for ci, c := range confs {
		a, err := NewAccessLog(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		for ei, ev := range evs {
			got, want := a.appendJSON(nil, ev, 7), a.referenceJSON(ev, 7)
			if !bytes.Equal(got, want) {
				t.Errorf("config %d event %d:\n got %s\nwant %s", ci, ei, got, want)
			}
		}
	}
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
