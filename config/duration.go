package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that decodes the way Traefik's does: a Go
// duration string ("10s", "1m30s", "250ms") or a bare number, which counts
// seconds ("10" and 10 are ten seconds). It encodes as a Go duration string.
// Source: Traefik's ptypes.Duration (github.com/traefik/paerser/types).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String returns d in Go duration syntax.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON encodes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// MarshalText encodes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses a Go duration string or a number of seconds.
// It returns an error naming the bad value.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// UnmarshalJSON accepts a JSON string (see ParseDuration) or a JSON number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		return d.UnmarshalText([]byte(str))
	}
	return d.UnmarshalText([]byte(s))
}

// ParseDuration parses a Go duration string or a decimal number of seconds
// (integer or fraction). An empty string is zero. Negative values are allowed
// here; Validate rejects them where they make no sense.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return Duration(f * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a Go duration such as \"10s\" or a number of seconds", s)
	}
	return Duration(v), nil
}

// Forwarding timeout defaults (ForwardingTimeouts).
const (
	DefaultDialTimeout           = 30 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
	DefaultIdleConnTimeout       = 90 * time.Second
	DefaultPingTimeout           = 15 * time.Second
	DefaultBodyReadTimeout       = 5 * time.Minute
)

// Or returns d's value, or def when d is nil (the field was left out).
func (d *Duration) Or(def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return time.Duration(*d)
}

// DurationOf returns a pointer to d as a Duration (a forwarding timeout
// set explicitly).
func DurationOf(d time.Duration) *Duration {
	x := Duration(d)
	return &x
}
