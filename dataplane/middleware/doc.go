// Package middleware implements Traefik v3's open-source HTTP middlewares
// (https://doc.traefik.io/traefik/middlewares/http/overview/) as plain
// func(http.Handler) http.Handler values, one file per middleware. Each is
// built once per configuration generation by New; per-request state lives on
// the stack or in the request; long-lived state (rate-limit buckets) belongs
// to the built value and dies with its generation.
package middleware
