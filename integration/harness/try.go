package harness

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// PollInterval is the pause between two attempts of Try.
const PollInterval = 50 * time.Millisecond

// permanentError stops Try at once.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that Try stops polling and fails at once (the
// condition can never hold, e.g. the process exited).
func Permanent(err error) error { return permanentError{err} }

// Try calls f until it returns nil, polling every PollInterval, and fails t
// with f's last error when timeout passes or f returns a Permanent error.
func Try(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	if err := Poll(timeout, f); err != nil {
		t.Fatalf("harness: %v", err)
	}
}

// Poll is Try without a testing.TB: it returns nil once f succeeds, or an
// error wrapping f's last error after timeout (or at once for Permanent).
func Poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if _, ok := errors.AsType[permanentError](err); ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met within %v: %w", timeout, err)
		}
		time.Sleep(PollInterval)
	}
}

// Response is a fully read HTTP response.
type Response struct {
	*http.Response
	Body string
}

// ReqOption changes a request before it is sent.
type ReqOption func(*http.Request)

// Host sets the request's Host header.
func Host(h string) ReqOption { return func(r *http.Request) { r.Host = h } }

// Header adds a request header.
func Header(k, v string) ReqOption { return func(r *http.Request) { r.Header.Add(k, v) } }

// Method sets the request method.
func Method(m string) ReqOption { return func(r *http.Request) { r.Method = m } }

// Cond checks a response; a non-nil error says what does not hold yet.
type Cond func(*Response) error

// StatusIs holds when the status code is code.
func StatusIs(code int) Cond {
	return func(r *Response) error {
		if r.StatusCode != code {
			return fmt.Errorf("got status %d, want %d (body %.200q)", r.StatusCode, code, r.Body)
		}
		return nil
	}
}

// BodyContains holds when the body contains s.
func BodyContains(s string) Cond {
	return func(r *Response) error {
		if !strings.Contains(r.Body, s) {
			return fmt.Errorf("body %.300q lacks %q", r.Body, s)
		}
		return nil
	}
}

// BodyLacks holds when the body does not contain s.
func BodyLacks(s string) Cond {
	return func(r *Response) error {
		if strings.Contains(r.Body, s) {
			return fmt.Errorf("body %.300q contains %q", r.Body, s)
		}
		return nil
	}
}

// Client is the HTTP client used by Get and TryGet: no keep-alive (every
// request opens a connection, so each sees the current listeners), a 10 s
// timeout, and certificate checks off (tests use generated certificates).
var Client = &http.Client{
	Timeout: 10 * time.Second,
	Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Get sends one GET to url and reads the whole body (at most 16 MiB).
func Get(url string, opts ...ReqOption) (*Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("read body of %s: %w", url, err)
	}
	return &Response{Response: resp, Body: string(b)}, nil
}

// TryGet polls GET url until every condition holds and returns that
// response; it fails t after timeout with the last difference seen.
// Request options (Host, Header, Method) and conditions may be mixed in
// args, in any order.
func TryGet(t testing.TB, timeout time.Duration, url string, args ...any) *Response {
	t.Helper()
	var opts []ReqOption
	var conds []Cond
	for _, a := range args {
		switch a := a.(type) {
		case ReqOption:
			opts = append(opts, a)
		case Cond:
			conds = append(conds, a)
		default:
			t.Fatalf("harness: TryGet: argument of type %T is neither a ReqOption nor a Cond", a)
		}
	}
	var got *Response
	Try(t, timeout, func() error {
		r, err := Get(url, opts...)
		if err != nil {
			return err
		}
		for _, c := range conds {
			if err := c(r); err != nil {
				return fmt.Errorf("GET %s: %w", url, err)
			}
		}
		got = r
		return nil
	})
	return got
}

// DeadAddr returns a loopback address where nothing listens, so dialing it
// is refused (a server that is down: 502).
func DeadAddr(t testing.TB) string { return FreeAddr(t) }

// WaitListening polls until a TCP connection to each addr succeeds.
func WaitListening(t testing.TB, timeout time.Duration, addrs ...string) {
	t.Helper()
	for _, a := range addrs {
		Try(t, timeout, func() error {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err != nil {
				return err
			}
			return c.Close()
		})
	}
}
