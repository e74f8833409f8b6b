package observe

import (
	"bytes"
	"encoding/base64"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// Redacted replaces values in redact mode.
const Redacted = "REDACTED"

func canonical(h string) string { return textproto.CanonicalMIMEHeaderKey(h) }

// clfTime is the common log format's timestamp layout.
const clfTime = "02/Jan/2006:15:04:05 -0700"

// clfFields are the common-format fields, in line order; their modes are
// resolved once (AccessLog.clf) so formatting does no map lookups.
var clfFields = [...]string{
	"ClientHost", "ClientUsername", "RequestMethod", "RequestPath", "RequestProtocol",
	"DownstreamStatus", "DownstreamContentSize", "RequestRefererHeader", "RequestUserAgentHeader",
	"RequestCount", "RouterName", "ServiceURL",
}

const (
	clfClientHost = iota
	clfUser
	clfMethod
	clfPath
	clfProto
	clfStatus
	clfSize
	clfReferer
	clfUserAgent
	clfCount
	clfRouter
	clfServiceURL
)

// appendCommon appends Traefik's common log format line to b:
//
//	<client> - <user> [<time>] "<method> <path> <proto>" <status> <size> "<referer>" "<user agent>" <count> "<router>" "<server URL>" <ms>ms
//
// Absent or dropped values print as "-"; redacted ones as REDACTED.
func (a *AccessLog) appendCommon(b []byte, ev *RequestEvent, count int64) []byte {
	// hidden appends what stands for field f when its mode drops or
	// redacts it, and reports whether it did.
	hidden := func(b []byte, f int) ([]byte, bool) {
		switch a.clf[f] {
		case ModeDrop:
			return append(b, '-'), true
		case ModeRedact:
			return append(b, Redacted...), true
		}
		return b, false
	}
	str := func(b []byte, f int, val string) []byte {
		if b, ok := hidden(b, f); ok {
			return b
		}
		return append(b, orDash(val)...)
	}
	num := func(b []byte, f int, n int64) []byte {
		if b, ok := hidden(b, f); ok {
			return b
		}
		return strconv.AppendInt(b, n, 10)
	}
	host, _, _ := splitHostPort(ev.ClientAddr)
	b = str(b, clfClientHost, host)
	b = append(b, " - "...)
	b = str(b, clfUser, basicUser(ev.Header))
	b = append(b, " ["...)
	b = ev.Start.UTC().AppendFormat(b, clfTime)
	b = append(b, `] "`...)
	b = str(b, clfMethod, ev.Method)
	b = append(b, ' ')
	b = str(b, clfPath, ev.Path)
	b = append(b, ' ')
	b = str(b, clfProto, ev.Proto)
	b = append(b, `" `...)
	b = num(b, clfStatus, int64(ev.Status))
	b = append(b, ' ')
	b = num(b, clfSize, ev.BytesOut)
	b = append(b, ` "`...)
	b = str(b, clfReferer, canonicalValue(ev.Header, "Referer"))
	b = append(b, `" "`...)
	b = str(b, clfUserAgent, canonicalValue(ev.Header, "User-Agent"))
	b = append(b, `" `...)
	b = num(b, clfCount, count)
	b = append(b, ` "`...)
	b = str(b, clfRouter, ev.Router)
	b = append(b, `" "`...)
	b = str(b, clfServiceURL, redactURL(ev.Upstream))
	b = append(b, `" `...)
	b = strconv.AppendInt(b, ev.Duration.Milliseconds(), 10)
	return append(b, "ms\n"...)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// splitHostPort is net.SplitHostPort, with hp itself as host when it
// fails. An address without a colon fails without a call: the error
// net.SplitHostPort would make for it (a Host header without a port, the
// usual case) is an allocation.
func splitHostPort(hp string) (host, port string, ok bool) {
	if !strings.Contains(hp, ":") {
		return hp, "", false
	}
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return hp, "", false
	}
	return h, p, true
}

func headerValue(h http.Header, k string) string {
	if h == nil {
		return ""
	}
	return h.Get(k)
}

func contentLength(h http.Header) int64 {
	v := canonicalValue(h, "Content-Length")
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// basicUser returns the user name of an Authorization: Basic header, never
// the password.
func basicUser(h http.Header) string {
	auth := canonicalValue(h, "Authorization")
	if auth == "" {
		return ""
	}
	scheme, cred, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return ""
	}
	cred = strings.TrimSpace(cred)
	var buf [192]byte // decoded here, not on the heap, when it fits
	var raw []byte
	if base64.StdEncoding.DecodedLen(len(cred)) <= len(buf) {
		n, err := base64.StdEncoding.Decode(buf[:], []byte(cred))
		if err != nil {
			return ""
		}
		raw = buf[:n]
	} else {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(cred); err != nil {
			return ""
		}
	}
	user, _, _ := bytes.Cut(raw, []byte{':'})
	return string(user)
}

// redactURL hides a password in a server URL ("http://u:REDACTED@h").
func redactURL(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), Redacted)
	}
	return u.String()
}
