package observe

import (
	"net/http"
	"strings"
	"time"
)

// accessField is one of the fixed fields of an access-log entry, with
// Traefik's name (accessFieldNames; pkg/middlewares/accesslog/logdata.go).
// They are declared in key order, bytewise: every name with an upper-case
// initial, then entryPointName, the JSON line's order (jsonLine).
type accessField uint8

const (
	fClientAddr accessField = iota
	fClientHost
	fClientPort
	fClientUsername
	fDownstreamContentSize
	fDownstreamStatus
	fDuration
	fOriginContentSize
	fOriginStatus
	fRequestAddr
	fRequestContentSize
	fRequestCount
	fRequestHost
	fRequestMethod
	fRequestPath
	fRequestPort
	fRequestProtocol
	fRequestScheme
	fRetryAttempts
	fRouterName
	fServiceAddr
	fServiceName
	fServiceURL
	fSpanID
	fStartLocal
	fStartUTC
	fTLSCipher
	fTLSVersion
	fTraceID
	fEntryPointName
	numAccessFields
)

var accessFieldNames = [numAccessFields]string{
	"ClientAddr", "ClientHost", "ClientPort", "ClientUsername",
	"DownstreamContentSize", "DownstreamStatus", "Duration",
	"OriginContentSize", "OriginStatus",
	"RequestAddr", "RequestContentSize", "RequestCount", "RequestHost", "RequestMethod", "RequestPath",
	"RequestPort", "RequestProtocol", "RequestScheme", "RetryAttempts",
	"RouterName", "ServiceAddr", "ServiceName", "ServiceURL",
	"SpanId", "StartLocal", "StartUTC", "TLSCipher", "TLSVersion", "TraceId",
	"entryPointName",
}

// Header field prefixes: a kept request header X-Foo is the field
// request_X-Foo, a response header downstream_X-Foo.
const (
	requestHeaderPrefix  = "request_"
	responseHeaderPrefix = "downstream_"
)

// fieldSink receives the fields of one access-log entry from walkFields,
// already filtered by accessLog.fields: a redacted field comes as the
// string REDACTED, whatever its kind.
type fieldSink interface {
	// str is a text field.
	str(f accessField, v string)
	// num is a number: sizes in bytes, Duration in nanoseconds, counts.
	num(f accessField, n int64)
	// stamp is a time, written RFC 3339 with nanoseconds in t's location.
	stamp(f accessField, t time.Time)
	// id is a trace or span ID, written as lowercase hex.
	id(f accessField, id []byte)
	// header is a kept (or redacted) header: prefix is requestHeaderPrefix
	// or responseHeaderPrefix, name the header's name as received, v its
	// values joined with ",".
	header(prefix, name, v string)
}

// walkFields gives s the access-log fields of ev that accessLog.fields
// keeps: the fixed fields in accessField order (those without a value
// for this request left out: OriginStatus without a server, TraceId
// untraced…), then the request headers, then the response headers, each
// group in the header map's order. The JSON line and the OTLP record are
// both written from it. count is the request's RequestCount.
func (a *AccessLog) walkFields(s fieldSink, ev *RequestEvent, count int64) {
	// hidden reports whether accessLog.fields drops or redacts f, and
	// gives s REDACTED for a redacted one.
	hidden := func(f accessField) bool {
		switch a.modes[f] {
		case ModeKeep:
			return false
		case ModeRedact:
			s.str(f, Redacted)
		}
		return true
	}
	str := func(f accessField, v string) {
		if !hidden(f) {
			s.str(f, v)
		}
	}
	num := func(f accessField, n int64) {
		if !hidden(f) {
			s.num(f, n)
		}
	}

	clientHost, clientPort, _ := splitHostPort(ev.ClientAddr)
	reqHost, reqPort, _ := splitHostPort(ev.Host)
	if reqHost == "" {
		reqHost = ev.Host
	}
	scheme := "http"
	if ev.TLS {
		scheme = "https"
	}
	str(fClientAddr, ev.ClientAddr)
	str(fClientHost, clientHost)
	str(fClientPort, clientPort)
	str(fClientUsername, orDash(basicUser(ev.Header)))
	num(fDownstreamContentSize, ev.BytesOut)
	num(fDownstreamStatus, int64(ev.Status))
	num(fDuration, ev.Duration.Nanoseconds())
	if ev.Upstream != "" {
		num(fOriginContentSize, ev.BytesOut)
		num(fOriginStatus, int64(ev.ServiceStatus()))
	}
	str(fRequestAddr, ev.Host)
	num(fRequestContentSize, contentLength(ev.Header))
	num(fRequestCount, count)
	str(fRequestHost, reqHost)
	str(fRequestMethod, ev.Method)
	str(fRequestPath, ev.Path)
	str(fRequestPort, orDash(reqPort))
	str(fRequestProtocol, ev.Proto)
	str(fRequestScheme, scheme)
	num(fRetryAttempts, int64(ev.Retries))
	if ev.Router != "" {
		str(fRouterName, ev.Router)
	}
	if ev.Upstream != "" {
		str(fServiceAddr, urlHost(ev.Upstream))
	}
	if ev.Service != "" {
		str(fServiceName, ev.Service)
	}
	if ev.Upstream != "" {
		str(fServiceURL, redactURL(ev.Upstream))
	}
	traced := ev.TraceID != ([16]byte{})
	if traced && !hidden(fSpanID) {
		s.id(fSpanID, ev.SpanID[:])
	}
	if !hidden(fStartLocal) {
		s.stamp(fStartLocal, ev.Start.Local())
	}
	if !hidden(fStartUTC) {
		s.stamp(fStartUTC, ev.Start.UTC())
	}
	if ev.TLSVersion != 0 {
		str(fTLSCipher, TLSCipherLabel(ev.TLSCipher))
		str(fTLSVersion, TLSVersionLabel(ev.TLSVersion))
	}
	if traced && !hidden(fTraceID) {
		s.id(fTraceID, ev.TraceID[:])
	}
	str(fEntryPointName, ev.EntryPoint)
	if a.fields.hdrDef == ModeDrop && len(a.fields.headers) == 0 {
		return // no header is logged (the default): none to look at
	}
	a.walkHeaders(s, requestHeaderPrefix, ev.Header)
	a.walkHeaders(s, responseHeaderPrefix, ev.ResponseHeader)
}

// walkHeaders gives s the headers of h that accessLog.fields.headers keeps
// or redacts, under prefix.
func (a *AccessLog) walkHeaders(s fieldSink, prefix string, h http.Header) {
	for name, vals := range h {
		switch a.fields.header(canonical(name)) {
		case ModeKeep:
			v := ""
			if len(vals) == 1 {
				v = vals[0]
			} else {
				v = strings.Join(vals, ",")
			}
			s.header(prefix, name, v)
		case ModeRedact:
			s.header(prefix, name, Redacted)
		}
	}
}

// urlHost is the host[:port] of an absolute URL ("http://u:p@h:80/x" →
// "h:80"), "" when there is none.
func urlHost(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	for i := 0; i < len(rest); i++ { // strings.IndexAny(rest, "/?#"), without building its set
		if c := rest[i]; c == '/' || c == '?' || c == '#' {
			rest = rest[:i]
			break
		}
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}
