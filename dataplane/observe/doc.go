// Package observe turns the dataplane's request events into the three views
// operators read: the access log (Traefik's common and JSON formats),
// Prometheus metrics under Traefik's metric names, and live per-router
// statistics for the dashboard.
//
// Each type implements Observer; Tee combines them. Everything
// reachable from the request path (Request, Conn) is lock-free or uses the
// Prometheus client's own concurrent vectors; nothing there blocks on I/O.
// The access log formats on the request goroutine and hands finished lines
// to a writer goroutine owned by the caller of AccessLog.Run; when that
// writer falls behind, lines are dropped and counted, never waited for.
package observe
