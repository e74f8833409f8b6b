package observe

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/gantry-proxy/gantry/config/static"
)

// OTLPLogs exports log records over OTLP (HTTP or gRPC), batched by the
// OpenTelemetry SDK: Traefik 3.3's log.otlp and accessLog.otlp
// (pkg/observability/types/logs.go, OTelLog). Emitting never blocks on the
// network: records wait in the SDK's bounded queue (2048; when it is full
// the oldest are dropped) and a goroutine of the SDK exports them every
// second. Shutdown flushes.
type OTLPLogs struct {
	provider *sdklog.LoggerProvider
	logger   otellog.Logger
	once     sync.Once
	err      error
}

// NewOTLPLogs builds the exporter for section ("log.otlp",
// "accessLog.otlp") from c; errors name the option.
func NewOTLPLogs(ctx context.Context, section string, c *static.OTelLog, version string) (*OTLPLogs, error) {
	exp, err := newLogExporter(ctx, section, c)
	if err != nil {
		return nil, err
	}
	return newOTLPLogs(ctx, section, c, version, exp)
}

func newOTLPLogs(ctx context.Context, section string, c *static.OTelLog, version string, exp sdklog.Exporter) (*OTLPLogs, error) {
	res, err := otelResource(ctx, c.ServiceName, version, c.ResourceAttributes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", section, err)
	}
	p := sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Second))),
	)
	return &OTLPLogs{provider: p, logger: p.Logger("github.com/gantry-proxy/gantry")}, nil
}

func newLogExporter(ctx context.Context, section string, c *static.OTelLog) (sdklog.Exporter, error) {
	t, err := resolveOTLP(section, c.HTTP, c.GRPC, "/v1/logs")
	if err != nil {
		return nil, err
	}
	if t.grpc {
		exp, err := otlploggrpc.New(ctx, logGRPCOptions.of(t)...)
		if err != nil {
			return nil, fmt.Errorf("%s.grpc: %w", section, err)
		}
		return exp, nil
	}
	exp, err := otlploghttp.New(ctx, logHTTPOptions.of(t)...)
	if err != nil {
		return nil, fmt.Errorf("%s.http: %w", section, err)
	}
	return exp, nil
}

var (
	logGRPCOptions = otlpGRPCOptions[otlploggrpc.Option]{otlploggrpc.WithEndpoint, otlploggrpc.WithCompressor,
		otlploggrpc.WithHeaders, otlploggrpc.WithInsecure, otlploggrpc.WithTLSCredentials}
	logHTTPOptions = otlpHTTPOptions[otlploghttp.Option]{otlploghttp.WithEndpoint, otlploghttp.WithURLPath,
		otlploghttp.WithCompression(otlploghttp.GzipCompression), otlploghttp.WithHeaders, otlploghttp.WithInsecure,
		otlploghttp.WithTLSClientConfig}
)

// Shutdown exports the records still queued and stops the exporter; later
// calls return the first call's result.
func (l *OTLPLogs) Shutdown(ctx context.Context) error {
	l.once.Do(func() {
		if err := l.provider.Shutdown(ctx); err != nil {
			l.err = fmt.Errorf("otlp logs: shutdown: %w", err)
		}
	})
	return l.err
}

// severity maps slog's levels to OpenTelemetry's, as Traefik maps
// zerolog's (DEBUG 5, INFO 9, WARN 13, ERROR 17).
func severity(l slog.Level) otellog.Severity {
	switch {
	case l < slog.LevelInfo:
		return otellog.SeverityDebug
	case l < slog.LevelWarn:
		return otellog.SeverityInfo
	case l < slog.LevelError:
		return otellog.SeverityWarn
	}
	return otellog.SeverityError
}

// Handler returns an slog.Handler that emits each record at or above
// level as an OTLP log record: the message as body, the level as
// severity, the attributes (groups joined with ".") as attributes, as
// Traefik's log.otlp forwards its logger's fields.
func (l *OTLPLogs) Handler(level slog.Leveler) slog.Handler {
	return &otlpHandler{l: l, level: level}
}

type otlpHandler struct {
	l      *OTLPLogs
	level  slog.Leveler
	attrs  []attribute.KeyValue
	prefix string // open groups, "a.b."
}

func (h *otlpHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *otlpHandler) Handle(ctx context.Context, r slog.Record) error {
	var rec otellog.Record
	rec.SetTimestamp(r.Time)
	rec.SetSeverity(severity(r.Level))
	rec.SetSeverityText(r.Level.String())
	rec.SetBody(attribute.StringValue(r.Message))
	attrs := make([]attribute.KeyValue, 0, len(h.attrs)+r.NumAttrs())
	attrs = append(attrs, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = appendSlogAttr(attrs, h.prefix, a)
		return true
	})
	rec.AddAttributes(attrs...)
	h.l.logger.Emit(ctx, rec)
	return nil
}

func (h *otlpHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append([]attribute.KeyValue(nil), h.attrs...)
	for _, a := range as {
		n.attrs = appendSlogAttr(n.attrs, h.prefix, a)
	}
	return &n
}

func (h *otlpHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.prefix = h.prefix + name + "."
	return &n
}

func appendSlogAttr(out []attribute.KeyValue, prefix string, a slog.Attr) []attribute.KeyValue {
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() != slog.KindGroup {
		return out
	}
	key := prefix + a.Key
	switch v.Kind() {
	case slog.KindGroup:
		p := prefix
		if a.Key != "" {
			p = key + "."
		}
		for _, g := range v.Group() {
			out = appendSlogAttr(out, p, g)
		}
		return out
	case slog.KindString:
		return append(out, attribute.String(key, v.String()))
	case slog.KindInt64:
		return append(out, attribute.Int64(key, v.Int64()))
	case slog.KindUint64:
		return append(out, attribute.Int64(key, int64(v.Uint64()))) //nolint:gosec // a log value
	case slog.KindFloat64:
		return append(out, attribute.Float64(key, v.Float64()))
	case slog.KindBool:
		return append(out, attribute.Bool(key, v.Bool()))
	}
	return append(out, attribute.String(key, v.String()))
}

// emitAccess emits ev's access-log entry as one record: the fields the
// JSON format writes (Traefik's names, accessLog.fields applied; times as
// RFC 3339, durations in nanoseconds) as attributes, the common-format
// line as body, severity INFO, the request's end as timestamp, and the
// trace and span IDs of a traced request.
func (a *AccessLog) emitAccess(ev *RequestEvent, count int64) {
	attrs := a.accessAttrs(ev, count)
	var rec otellog.Record
	rec.SetTimestamp(ev.Start.Add(ev.Duration))
	rec.SetSeverity(otellog.SeverityInfo)
	rec.SetSeverityText("INFO")
	line := a.appendCommon(nil, ev, count)
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	rec.SetBody(attribute.StringValue(string(line)))
	rec.AddAttributes(attrs...)
	ctx := context.Background()
	if ev.TraceID != ([16]byte{}) {
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: ev.TraceID, SpanID: ev.SpanID, TraceFlags: trace.FlagsSampled,
		}))
	}
	a.otlp.logger.Emit(ctx, rec)
}

// accessAttrs is the OTLP access record's attributes: walkFields' fields,
// in its order, numbers as integers and everything else as strings.
func (a *AccessLog) accessAttrs(ev *RequestEvent, count int64) []attribute.KeyValue {
	s := &attrSink{attrs: make([]attribute.KeyValue, 0, numAccessFields)}
	a.walkFields(s, ev, count)
	return s.attrs
}

// attrSink is the fieldSink that collects OTLP attributes.
type attrSink struct{ attrs []attribute.KeyValue }

func (s *attrSink) str(f accessField, v string) {
	s.attrs = append(s.attrs, attribute.String(accessFieldNames[f], v))
}

func (s *attrSink) num(f accessField, n int64) {
	s.attrs = append(s.attrs, attribute.Int64(accessFieldNames[f], n))
}

func (s *attrSink) stamp(f accessField, t time.Time) {
	s.str(f, t.Format(time.RFC3339Nano))
}

func (s *attrSink) id(f accessField, id []byte) { s.str(f, hex.EncodeToString(id)) }

func (s *attrSink) header(prefix, name, v string) {
	s.attrs = append(s.attrs, attribute.String(prefix+name, v))
}
