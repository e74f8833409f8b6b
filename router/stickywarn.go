package router

import (
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// stickyWarnings marks a service whose sticky cookie asks for SameSite=None
// without Secure as a warning: the cookie is sent as configured (as
// Traefik does), but browsers reject it, so stickiness silently fails
// (case 050; https://web.dev/articles/samesite-cookies-explained).
func (c *compiler) stickyWarnings(services map[string]*config.Service) {
	for name, s := range services {
		st := c.report.Services[name]
		if s == nil || st == nil || st.Status != StatusEnabled {
			continue
		}
		for field, sticky := range map[string]*config.Sticky{"loadBalancer.sticky.cookie": lbSticky(s), "weighted.sticky.cookie": wSticky(s)} {
			if sticky == nil || sticky.Cookie == nil {
				continue
			}
			if ck := sticky.Cookie; strings.EqualFold(ck.SameSite, "none") && !ck.Secure {
				st.Status = StatusWarning
				st.Errors = append(st.Errors, field+": sameSite none without secure: browsers reject such a cookie, so clients are not kept on one server; set secure: true")
			}
		}
	}
}

func lbSticky(s *config.Service) *config.Sticky {
	if s.LoadBalancer == nil {
		return nil
	}
	return s.LoadBalancer.Sticky
}

func wSticky(s *config.Service) *config.Sticky {
	if s.Weighted == nil {
		return nil
	}
	return s.Weighted.Sticky
}
