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
