package providers

import (
	"errors"

	"github.com/gantry-proxy/gantry/config/label"
)

// SkipErrors returns the label or tag errors that make Traefik skip a
// whole container or Consul service (label.ErrUnknownRoot, case 010), and
// labels over label.MaxTotalBytes in all; nil when there is none.
func SkipErrors(kerrs []label.KeyError) []label.KeyError {
	var out []label.KeyError
	for _, e := range kerrs {
		if errors.Is(e.Err, label.ErrUnknownRoot) || errors.Is(e.Err, label.ErrTotalTooLarge) {
			out = append(out, e)
		}
	}
	return out
}

// KeyErrorKind returns how a problem reports a label or tag error: a
// warning for a key that is ignored (label.ErrIgnored), else an error;
// and the object it names, if any ("service api").
func KeyErrorKind(ke label.KeyError) (Severity, []string) {
	sev := SeverityError
	if errors.Is(ke.Err, label.ErrIgnored) {
		sev = SeverityWarning
	}
	if ke.Object == "" {
		return sev, nil
	}
	return sev, []string{ke.Object}
}
