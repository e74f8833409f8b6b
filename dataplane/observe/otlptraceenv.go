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

	"github.com/gantry-proxy/gantry/config"
)

// traceEnv is what the OpenTelemetry environment variables set for the
// OTLP/HTTP trace exporter (https://opentelemetry.io/docs/specs/otel/protocol/exporter/),
// as the OpenTelemetry exporter reads them: OTEL_EXPORTER_OTLP_TRACES_X
// wins over OTEL_EXPORTER_OTLP_X. Gantry's configuration wins over both
// for the endpoint, the headers and the TLS files.
type traceEnv struct {
	endpoint string            // a full URL; "": none
	headers  map[string]string // nil: none
	timeout  time.Duration     // 0: none
	gzip     bool
	// tls holds CERTIFICATE (CA file), CLIENT_CERTIFICATE and
	// CLIENT_KEY (PEM files) for an https endpoint; nil: none set.
	tls *config.ClientTLS
	// tlsVars names the variables tls came from, for errors.
	tlsVars string
}

// readTraceEnv reads ENDPOINT (a base URL, to which /v1/traces is
// appended; TRACES_ENDPOINT is used as is), HEADERS (k=v pairs separated
// by commas, values URL-escaped), TIMEOUT (milliseconds), COMPRESSION
// (gzip or none), CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY (file
// paths, read when the exporter is built) through getenv. A malformed variable is left out; the
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
	var vars []string
	var tc config.ClientTLS
	for _, f := range []struct {
		name string
		to   *string
	}{{"CERTIFICATE", &tc.CA}, {"CLIENT_CERTIFICATE", &tc.Cert}, {"CLIENT_KEY", &tc.Key}} {
		if name, v := get(f.name); v != "" {
			*f.to = v
			vars = append(vars, name)
		}
	}
	if len(vars) > 0 {
		e.tls, e.tlsVars = &tc, strings.Join(vars, ", ")
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
