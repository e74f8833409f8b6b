package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http2"
)

// errHeaderTimeout cancels an HTTP/2 request whose response head did not
// come within ResponseHeaderTimeout.
var errHeaderTimeout = errors.New("upstream: response header timeout")

// forwardH2 sends ob over HTTP/2 with x/net/http2: through the h2c
// transport (cc nil) or on cc, an https connection that negotiated h2 and
// has a request reserved. The response is relayed like Forward's; 1xx
// responses come through httptrace's Got1xxResponse.
func (h *Host) forwardH2(w http.ResponseWriter, ob *Outbound, start time.Time, cc *http2.ClientConn) (res Result) {
	r := ob.Req
	var err error
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	var timer *time.Timer
	if t := h.c.o.ResponseHeaderTimeout; t > 0 {
		timer = time.AfterFunc(t, func() { cancel(errHeaderTimeout) })
	}
	clientExpects := expects100(r)
	trace := &httptrace.ClientTrace{
		Got1xxResponse: func(code int, hdr textproto.MIMEHeader) error {
			if res.TTFB == 0 {
				res.TTFB = time.Since(start)
			}
			if code == http.StatusContinue && !clientExpects {
				return nil
			}
			relayH21xx(w, code, hdr)
			return nil
		},
	}
	out := h2Request(httptrace.WithClientTrace(ctx, trace), r, ob, h)
	var body *trackedBody
	if out.Body != nil {
		body = &trackedBody{ReadCloser: out.Body}
		out.Body = body
	}
	clientErr := func(err error) error {
		if body != nil && body.err != nil {
			return &ClientError{body.err}
		}
		return err
	}
	var resp *http.Response
	if cc != nil {
		resp, err = cc.RoundTrip(out)
	} else {
		resp, err = h.c.h2c.RoundTrip(out)
	}
	if timer != nil && !timer.Stop() && context.Cause(ctx) == errHeaderTimeout {
		if err == nil {
			resp.Body.Close()
		}
		return Result{Err: &timeoutError{"response headers"}}
	}
	if err != nil {
		if ce := clientErr(nil); ce != nil {
			return Result{Err: ce}
		}
		if cerr := r.Context().Err(); cerr != nil {
			return Result{Err: cerr}
		}
		if cc != nil && !cc.CanTakeNewRequest() {
			h.h2cc.CompareAndSwap(cc, nil)
		}
		return Result{Err: err}
	}
	defer resp.Body.Close()
	if res.TTFB == 0 {
		res.TTFB = time.Since(start)
	}
	res.Status = resp.StatusCode
	dst := w.Header()
	copyH2Fields(dst, resp)
	w.WriteHeader(resp.StatusCode)
	res.Sent = true
	rc := http.NewResponseController(w)
	if resp.ContentLength != 0 {
		// Whether the body is already here cannot be seen: the head goes
		// to the client now, so a body that comes later (an event stream,
		// long polling) never holds it back.
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			res.Err = &ClientWriteError{err}
			return res
		}
	}
	if err := relayH2Body(w, rc, resp.Body, r); err != nil {
		res.Err = err
		return res
	}
	for k, vs := range resp.Trailer {
		if hopByHop(k, nil) {
			continue
		}
		dst[trailerKey(k)] = vs
	}
	return res
}

// trailerKey returns http.TrailerPrefix+k, without building the string
// for the trailers every gRPC response ends with.
func trailerKey(k string) string {
	switch k {
	case "Grpc-Status":
		return http.TrailerPrefix + "Grpc-Status"
	case "Grpc-Message":
		return http.TrailerPrefix + "Grpc-Message"
	case "Grpc-Status-Details-Bin":
		return http.TrailerPrefix + "Grpc-Status-Details-Bin"
	}
	return http.TrailerPrefix + k
}

// relayH21xx relays an informational response to w: its fields are
// added to w's header for the 1xx only (those it did not have are removed
// after it).
func relayH21xx(w http.ResponseWriter, code int, hdr textproto.MIMEHeader) {
	dst := w.Header()
	var added []string
	for k, vs := range hdr {
		if hopByHop(k, nil) {
			continue
		}
		if _, ok := dst[k]; !ok {
			added = append(added, k)
		}
		dst[k] = vs
	}
	w.WriteHeader(code)
	for _, k := range added {
		delete(dst, k)
	}
}

// copyH2Fields copies the response's fields to dst, but hop-by-hop ones and
// those its Connection names, and announces its trailers (Trailer).
func copyH2Fields(dst http.Header, resp *http.Response) {
	conn := resp.Header["Connection"]
	for k, vs := range resp.Header {
		if hopByHop(k, conn) {
			continue
		}
		if old := dst[k]; old != nil {
			vs = append(old, vs...)
		}
		dst[k] = vs // resp.Header is not used after the relay: its lists are taken, not copied
	}
	if len(resp.Trailer) > 0 {
		names := make([]string, 0, len(resp.Trailer))
		for k := range resp.Trailer {
			names = append(names, k)
		}
		dst["Trailer"] = []string{strings.Join(names, ", ")}
	}
}

// relayH2Body copies body to w, flushing after every read. A failed write
// or flush is a *ClientWriteError; a failed read is the request context's
// error when the client went away, else the read's.
func relayH2Body(w http.ResponseWriter, rc *http.ResponseController, body io.Reader, r *http.Request) error {
	b := copyBufs.Get().(*[32 << 10]byte)
	defer copyBufs.Put(b)
	for {
		n, rerr := body.Read(b[:])
		if n > 0 {
			if _, werr := w.Write(b[:n]); werr != nil {
				return &ClientWriteError{werr}
			}
			if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return &ClientWriteError{err}
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			if cerr := r.Context().Err(); cerr != nil {
				rerr = cerr
			}
			return rerr
		}
	}
}

// trackedBody keeps the client's body read error, so a failing upload is
// told from a failing backend.
type trackedBody struct {
	io.ReadCloser
	err error
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// h2Request builds the outbound HTTP/2 request with context ctx (x/net/http2
// needs an *http.Request): the header is copied without the
// connection-specific fields, X-Forwarded-For completed. The names x/net
// would lower-case with an allocation of its own on every request (those
// outside its table of common names: see outboundH2Name) are stored
// lower-case already.
func h2Request(ctx context.Context, r *http.Request, ob *Outbound, h *Host) *http.Request {
	scheme := "https"
	if h.scheme == "h2c" {
		scheme = "http"
	}
	u := &url.URL{Scheme: scheme, Host: h.addr, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: strings.ReplaceAll(r.URL.RawQuery, ";", "&")}
	if ob.PathPrefix != "" {
		p := strings.TrimSuffix(ob.PathPrefix, "/")
		u.Path = p + "/" + strings.TrimPrefix(r.URL.Path, "/")
		if r.URL.RawPath != "" {
			u.RawPath = p + "/" + strings.TrimPrefix(r.URL.RawPath, "/")
		}
	}
	hdr := make(http.Header, len(r.Header)+1)
	for k, vs := range r.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
			"Proxy-Connection", "Upgrade", "Http2-Settings", "X-Forwarded-For", "Trailer":
			continue
		case "Te":
			if len(vs) == 1 && strings.EqualFold(vs[0], "trailers") {
				addH2Field(hdr, "te", vs)
			}
			continue
		}
		if low := outboundH2Name(k); low != "" {
			k = low
		}
		addH2Field(hdr, k, vs)
	}
	xff := strings.Join(r.Header["X-Forwarded-For"], ", ")
	if ob.ClientIP != "" {
		if xff != "" {
			xff += ", "
		}
		xff += ob.ClientIP
	}
	if xff != "" {
		hdr["X-Forwarded-For"] = []string{xff}
	}
	host := ob.Host
	if host == "" {
		host = h.addr
	}
	out := http.Request{
		Method:        r.Method,
		URL:           u,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        hdr,
		Host:          host,
		ContentLength: r.ContentLength,
		Trailer:       r.Trailer,
	}
	if hasBody(r) {
		out.Body = r.Body
	} else {
		out.ContentLength = 0
	}
	return out.WithContext(ctx) // the one copy on the heap
}

// addH2Field adds the values vs under name to hdr; a name met twice (a
// canonical key lower-cased and a lower-case one set directly in the map)
// keeps both lists' values.
func addH2Field(hdr http.Header, name string, vs []string) {
	if old := hdr[name]; old != nil {
		vs = append(old[:len(old):len(old)], vs...)
	}
	hdr[name] = vs
}

// outboundH2Name returns the lower-case form of the canonical field name
// k when it is one Gantry sends on most requests (its X-Forwarded-*
// fields, gRPC's) that x/net's encoder does not know: it lower-cases every
// other name with a new string per request (httpcommon.LowerHeader). ""
// for any other name, which is left to x/net. None of these names is one
// the transport itself looks up in the header (Accept-Encoding, Range,
// Expect, Cookie, Host, Connection, Upgrade, Transfer-Encoding, Trailer
// keep their canonical keys).
func outboundH2Name(k string) string {
	switch k {
	case "X-Forwarded-Host":
		return "x-forwarded-host"
	case "X-Forwarded-Port":
		return "x-forwarded-port"
	case "X-Forwarded-Server":
		return "x-forwarded-server"
	case "X-Real-Ip":
		return "x-real-ip"
	case "Grpc-Timeout":
		return "grpc-timeout"
	case "Grpc-Encoding":
		return "grpc-encoding"
	case "Grpc-Accept-Encoding":
		return "grpc-accept-encoding"
	case "Traceparent":
		return "traceparent"
	case "Tracestate":
		return "tracestate"
	}
	return ""
}
