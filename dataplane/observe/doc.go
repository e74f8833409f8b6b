// Package observe turns the dataplane's request events into what operators
// read: the access log (Traefik's common and JSON formats, File reopened on
// SIGUSR1), Prometheus metrics under Traefik's metric names, live
// statistics for the dashboard (the proxy total, each router and each
// service), OpenTelemetry traces with Traefik's span names (Tracing), the
// same metrics pushed over OTLP (OTLPMetrics, metrics.otlp), and OTLP log
// records for the access log and the application logs (OTLPLogs,
// accessLog.otlp and log.otlp).
//
// It sits below the dataplane: RequestEvent and Observer are defined here
// and the dataplane aliases them, so observe imports only config. Each
// observer type implements Observer; Tee combines them. Everything
// reachable from the request path (Request, Conn) is lock-free or uses the
// Prometheus client's own concurrent vectors, and Live and Metrics do not
// allocate once an object has been seen; nothing there blocks on I/O. The
// access log formats on the request goroutine and appends finished lines to
// a bounded buffer that a writer goroutine owned by the caller of
// AccessLog.Run writes in large writes (64 KiB, every second, on reopen and
// at shutdown, as nginx's `access_log … buffer= flush=`); when that writer
// falls behind, lines are dropped and counted, never waited for. Spans, OTLP
// metrics and OTLP log records are exported by the OpenTelemetry SDK's own
// goroutines (batch processors, periodic reader); Shutdown flushes each.
package observe
