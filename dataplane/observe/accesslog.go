package observe

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// Field modes of accessLog.fields (Traefik:
// https://doc.traefik.io/traefik/observability/access-logs/#limiting-the-fieldsincluding-headers).
const (
	ModeKeep   = "keep"
	ModeDrop   = "drop"
	ModeRedact = "redact"
)

// DefaultAccessLogBuffer is how many formatted lines may wait for the
// writer when accessLog.bufferingSize is 0.
const DefaultAccessLogBuffer = 1024

// AccessLog writes one line per request in Traefik's common log format or
// as JSON (https://doc.traefik.io/traefik/observability/access-logs/).
//
// Request filters and formats the line on the calling goroutine and appends
// it to a bounded buffer without blocking (see FlushBytes); Run, on a
// goroutine the caller owns, writes the buffer to the writer in large
// writes. When the buffer is full the line is dropped and counted
// (Dropped): the dataplane never waits for a slow disk or pipe.
type AccessLog struct {
	w         io.Writer
	json      bool
	internals bool // log requests to Gantry's own services (accessLog.addInternals)
	filter    filter
	fields    fieldModes
	clf       [len(clfFields)]string  // mode of each common-format field
	modes     [numAccessFields]string // mode of each JSON and OTLP field
	buf       *logBuffer
	count     atomic.Int64 // requests seen (Traefik's RequestCount)
	dropped   atomic.Int64
	otlp      *OTLPLogs // accessLog.otlp; nil: none
	dual      bool      // accessLog.dualOutput: write lines too when otlp is set
}

// SetOTLP sends each kept entry to l as an OTLP log record too; unless
// accessLog.dualOutput, lines are then no longer written (Traefik's
// default). Call it before the first request.
func (a *AccessLog) SetOTLP(l *OTLPLogs) { a.otlp = l }

// NewAccessLog validates c (nil means defaults: common format, no filter)
// and returns an AccessLog writing to w. Errors name the offending option,
// e.g. `accessLog.filters.statusCodes[1]: "2x0" is not a status code or range`.
func NewAccessLog(w io.Writer, c *static.AccessLog) (*AccessLog, error) {
	if c == nil {
		c = &static.AccessLog{}
	}
	a := &AccessLog{w: w, internals: c.AddInternals, dual: c.DualOutput}
	switch strings.ToLower(c.Format) {
	case "", "common":
	case "json":
		a.json = true
	default:
		return nil, fmt.Errorf("accessLog.format: %q is not common or json", c.Format)
	}
	var err error
	if a.filter, err = newFilter(c.Filters); err != nil {
		return nil, err
	}
	if a.fields, err = newFieldModes(c.Fields); err != nil {
		return nil, err
	}
	size := c.BufferingSize
	if size <= 0 {
		size = DefaultAccessLogBuffer
	}
	for i, f := range clfFields {
		a.clf[i] = a.fields.field(f)
	}
	for i, f := range accessFieldNames {
		a.modes[i] = a.fields.field(f)
	}
	// Referer and User-Agent are headers in Traefik's common format
	// (request_Referer, request_User-Agent): dropped unless kept by
	// fields.headers, so by default they print "-".
	a.clf[clfReferer] = a.fields.header("Referer")
	a.clf[clfUserAgent] = a.fields.header("User-Agent")
	a.buf = newLogBuffer(int(min(size, 1<<20)))
	return a, nil
}

// Run writes the buffered lines when FlushBytes or half the line bound
// are waiting and every FlushInterval, until ctx is done; then it writes
// what is still buffered and returns nil. A write error is returned
// (wrapped) at once; the caller decides whether to restart. Run must be
// called at most once at a time.
func (a *AccessLog) Run(ctx context.Context) error {
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-a.buf.wake:
		case <-t.C:
		case <-ctx.Done():
			return a.Flush()
		}
		if err := a.Flush(); err != nil {
			return err
		}
	}
}

// Flush writes the lines buffered so far.
func (a *AccessLog) Flush() error { return a.buf.flush(a.w, nil) }

// Reopen writes the lines buffered so far to the current file, then reopens
// the writer when it can be (File: SIGUSR1 after logrotate renamed it), with
// no write in between: every line of a request logged before Reopen lands
// in the renamed file. A writer that cannot be reopened (stdout) is only
// flushed.
func (a *AccessLog) Reopen() error {
	r, ok := a.w.(interface{ Reopen() error })
	if !ok {
		return a.Flush()
	}
	return a.buf.flush(a.w, r.Reopen)
}

// maxPooledLine bounds the buffers kept for reuse (bytes); a longer line's
// buffer is left to the garbage collector.
const maxPooledLine = 16 << 10

// lineScratch is what formatting one line uses: the line and the JSON
// encoder's state, reused through linePool.
type lineScratch struct {
	line []byte
	json jsonLine
}

var linePool = sync.Pool{New: func() any { return &lineScratch{line: make([]byte, 0, 1024)} }}

func putScratch(sc *lineScratch) {
	if cap(sc.line) <= maxPooledLine {
		linePool.Put(sc)
	}
}

// Dropped returns how many lines were dropped because the writer was behind.
func (a *AccessLog) Dropped() int64 { return a.dropped.Load() }

// Request implements Observer.
func (a *AccessLog) Request(ev *RequestEvent) {
	if ev.NoAccessLog || (!a.internals && ev.Internal()) {
		return
	}
	n := a.count.Add(1)
	if !a.filter.keep(ev) {
		return
	}
	if a.otlp != nil {
		a.emitAccess(ev, n)
		if !a.dual {
			return
		}
	}
	sc := linePool.Get().(*lineScratch)
	if a.json {
		sc.line = a.writeJSON(&sc.json, sc.line[:0], ev, n)
	} else {
		sc.line = a.appendCommon(sc.line[:0], ev, n)
	}
	if !a.buf.add(sc.line) {
		a.dropped.Add(1)
	}
	putScratch(sc)
}

// Conn implements Observer; the access log ignores connections.
func (a *AccessLog) Conn(string, string, int) {}

// filter is accessLog.filters: an entry is kept when any configured filter
// matches it (Traefik's semantics); with no filter configured, all are kept.
type filter struct {
	set         bool
	codes       [][2]int
	retries     bool
	minDuration time.Duration
}

func newFilter(f *static.AccessLogFilters) (filter, error) {
	if f == nil {
		return filter{}, nil
	}
	out := filter{retries: f.RetryAttempts, minDuration: time.Duration(f.MinDuration)}
	for i, s := range f.StatusCodes {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || a < 100 || b > 999 || a > b {
			return filter{}, fmt.Errorf("accessLog.filters.statusCodes[%d]: %q is not a status code or range (e.g. 404 or 500-599)", i, s)
		}
		out.codes = append(out.codes, [2]int{a, b})
	}
	if f.MinDuration < 0 {
		return filter{}, fmt.Errorf("accessLog.filters.minDuration: %s is negative", time.Duration(f.MinDuration))
	}
	out.set = len(out.codes) > 0 || out.retries || out.minDuration > 0
	return out, nil
}

func (f filter) keep(ev *RequestEvent) bool {
	if !f.set {
		return true
	}
	for _, r := range f.codes {
		if ev.Status >= r[0] && ev.Status <= r[1] {
			return true
		}
	}
	if f.retries && ev.Retries > 0 {
		return true
	}
	return f.minDuration > 0 && ev.Duration > f.minDuration
}

// fieldModes is accessLog.fields: per field and per header keep, drop or
// redact. Fields default to keep, headers to drop (Traefik's defaults).
type fieldModes struct {
	def, hdrDef string
	names       map[string]string
	headers     map[string]string // canonical header name -> mode
}

func checkMode(where, m string) (string, error) {
	switch strings.ToLower(m) {
	case ModeKeep, ModeDrop, ModeRedact:
		return strings.ToLower(m), nil
	}
	return "", fmt.Errorf("%s: %q is not keep, drop or redact", where, m)
}

func newFieldModes(f *static.AccessLogFields) (fieldModes, error) {
	out := fieldModes{def: ModeKeep, hdrDef: ModeDrop, names: map[string]string{}, headers: map[string]string{}}
	var err error
	if f == nil {
		return out, nil
	}
	if f.DefaultMode != "" {
		if out.def, err = checkMode("accessLog.fields.defaultMode", f.DefaultMode); err != nil {
			return out, err
		}
	}
	for k, v := range f.Names {
		if out.names[k], err = checkMode("accessLog.fields.names."+k, v); err != nil {
			return out, err
		}
	}
	if h := f.Headers; h != nil {
		if h.DefaultMode != "" {
			if out.hdrDef, err = checkMode("accessLog.fields.headers.defaultMode", h.DefaultMode); err != nil {
				return out, err
			}
		}
		for k, v := range h.Names {
			if out.headers[canonical(k)], err = checkMode("accessLog.fields.headers.names."+k, v); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func (m fieldModes) field(name string) string {
	if v, ok := m.names[name]; ok {
		return v
	}
	return m.def
}

func (m fieldModes) header(name string) string {
	if v, ok := m.headers[name]; ok {
		return v
	}
	return m.hdrDef
}
