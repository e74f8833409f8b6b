package observe

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// traceEnv is what the OpenTelemetry environment variables set for the
// OTLP/HTTP trace exporter (https://opentelemetry.io/docs/specs/otel/protocol/exporter/),
// as the OpenTelemetry exporter reads them: OTEL_EXPORTER_OTLP_TRACES_X
// wins over OTEL_EXPORTER_OTLP_X. Gantry's configuration wins over both
// for the endpoint and the headers.
type traceEnv struct {
	endpoint string            // a full URL; "": none
	headers  map[string]string // nil: none
	timeout  time.Duration     // 0: none
	gzip     bool
}

// readTraceEnv reads ENDPOINT (a base URL, to which /v1/traces is
// appended; TRACES_ENDPOINT is used as is), HEADERS (k=v pairs separated
// by commas, values URL-escaped), TIMEOUT (milliseconds) and COMPRESSION
// (gzip or none) through getenv. A malformed variable is left out; the
// error names each (errors.Join).
func readTraceEnv(getenv func(string) string) (traceEnv, error) {
	var e traceEnv
	var errs []error
	get := func(name string) (string, string) {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + name, v
		}
		return "OTEL_EXPORTER_OTLP_" + name, strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		e.endpoint = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		scheme, rest, ok := strings.Cut(v, "://")
		host, p, _ := strings.Cut(rest, "/")
		if ok && host != "" {
			e.endpoint = scheme + "://" + host + path.Join("/", p, "v1/traces")
		} else {
			errs = append(errs, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %q is not a URL", v))
		}
	}
	if name, v := get("HEADERS"); v != "" {
		e.headers = map[string]string{}
		for pair := range strings.SplitSeq(v, ",") {
			k, val, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				errs = append(errs, fmt.Errorf("%s: %q is not key=value", name, pair))
				continue
			}
			if u, err := url.PathUnescape(val); err == nil {
				val = u
			}
			e.headers[k] = strings.TrimSpace(val)
		}
	}
	if name, v := get("TIMEOUT"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms >= 0 {
			e.timeout = time.Duration(ms) * time.Millisecond
		} else {
			errs = append(errs, fmt.Errorf("%s: %q is not a number of milliseconds", name, v))
		}
	}
	switch name, v := get("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not gzip or none", name, v))
	}
	return e, errors.Join(errs...)
}

// osTraceEnv reads the process environment.
func osTraceEnv() (traceEnv, error) { return readTraceEnv(os.Getenv) }
