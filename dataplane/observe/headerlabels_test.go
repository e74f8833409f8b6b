package observe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// TestHeaderLabelValuesBounded: a client sending a new header value per
// request makes at most MaxHeaderLabelValues series of the label, the rest
// counted under "other".
func TestHeaderLabelValuesBounded(t *testing.T) {
	m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{HeaderLabels: map[string]string{"tenant": "x-tenant"}}})
	for i := range MaxHeaderLabelValues + 50 {
		ev := event("app@file", 200, time.Millisecond)
		ev.Header.Set("X-Tenant", fmt.Sprintf("t%d", i))
		m.Request(ev)
	}
	body := scrape(t, m.Handler())
	n := strings.Count(body, "traefik_entrypoint_requests_total{")
	if n != MaxHeaderLabelValues+1 {
		t.Errorf("%d entrypoint series, want %d values and other", n, MaxHeaderLabelValues)
	}
	if !strings.Contains(body, `tenant="other"} 50`) {
		t.Errorf("the 50 values past the bound are not counted as other:\n%s", body)
	}
}

func TestCheckPrometheusHeaderLabels(t *testing.T) {
	for label, header := range map[string]string{"code": "X-A", "bad-name": "X-A", "__x": "X-A", "empty": " "} {
		err := CheckPrometheus(&static.Prometheus{HeaderLabels: map[string]string{label: header}})
		if err == nil || !strings.Contains(err.Error(), "metrics.prometheus.headerLabels."+label) {
			t.Errorf("%s -> %q: error %v, want one naming the option", label, header, err)
		}
	}
	if err := CheckPrometheus(&static.Prometheus{HeaderLabels: map[string]string{"useragent": "User-Agent"}}); err != nil {
		t.Error(err)
	}
}
