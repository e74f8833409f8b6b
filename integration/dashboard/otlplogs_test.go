package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// logRecord is one received OTLP log record, flattened.
type logRecord struct {
	body     string
	severity logspb.SeverityNumber
	attrs    map[string]string
	intAttrs map[string]int64
	resource map[string]string
	traceID  []byte
	time     time.Time
}

// logsReceiver collects the records of OTLP log exports over HTTP
// (/v1/logs, protobuf, gzip) or gRPC (LogsService/Export).
type logsReceiver struct {
	collogspb.UnimplementedLogsServiceServer
	mu      sync.Mutex
	records []logRecord
}

func (rc *logsReceiver) add(req *collogspb.ExportLogsServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rl := range req.ResourceLogs {
		res := kvs(rl.GetResource().GetAttributes())
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				ints := map[string]int64{}
				for _, kv := range r.Attributes {
					if iv, ok := kv.Value.GetValue().(*commonpb.AnyValue_IntValue); ok {
						ints[kv.Key] = iv.IntValue
					}
				}
				rc.records = append(rc.records, logRecord{body: r.GetBody().GetStringValue(), severity: r.SeverityNumber,
					attrs: kvs(r.Attributes), intAttrs: ints, resource: res, traceID: r.TraceId, time: time.Unix(0, int64(r.TimeUnixNano))}) //nolint:gosec // test
			}
		}
	}
}

func (rc *logsReceiver) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	rc.add(req)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

func (rc *logsReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req collogspb.ExportLogsServiceRequest
	if _, ok := readOTLPExport(w, r, "/v1/logs", &req); !ok {
		return
	}
	rc.add(&req)
	writeOTLPResponse(w, &collogspb.ExportLogsServiceResponse{})
}

func (rc *logsReceiver) find(match func(logRecord) bool) []logRecord {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []logRecord
	for _, r := range rc.records {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// TestOTLPLogs: with accessLog.otlp over HTTP and log.otlp over gRPC, each
// request's access-log entry arrives as an OTLP record whose attributes are
// Traefik's access-log field names and values (kept headers as
// request_<Name>), body the common-format line, severity INFO; the access
// log file stays empty (no dualOutput); the application logs arrive as
// records with their message as body and their attributes ("config
// applied" with its version).
func TestOTLPLogs(t *testing.T) {
	access := &logsReceiver{}
	collector := httptest.NewServer(access)
	t.Cleanup(collector.Close)
	app := &logsReceiver{}
	appAddr := serveOTLPGRPC(t, func(s *grpc.Server) { collogspb.RegisterLogsServiceServer(s, app) })

	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello")
	}))
	defer backend.Close()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    ok:
      entryPoints: [web]
      rule: Host(`+"`ok.example`"+`)
      service: ok
  services:
    ok:
      loadBalancer:
        servers:
          - url: "%s"
`, backend.URL))
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
experimental:
  otlpLogs: true
log:
  level: INFO
  otlp:
    serviceName: edge-logs
    grpc:
      endpoint: "%s"
      insecure: true
accessLog:
  filePath: "%s"
  fields:
    headers:
      names:
        X-Req: keep
  otlp:
    serviceName: edge-access
    resourceAttributes:
      deployment.environment: test
    http:
      endpoint: "%s/v1/logs"
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
`, harness.FreeAddr(t), harness.FreeAddr(t), appAddr, logPath, collector.URL, dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"ok@file"`))
	web := g.URL(t, "web", "")
	req, _ := http.NewRequest("GET", web+"/hello?x=1", nil)
	req.Host = "ok.example"
	req.Header.Set("X-Req", "r-7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := send(t, "GET", web+"/nothing", "nobody.example", ""); c != 404 {
		t.Fatalf("unrouted: %d", c)
	}

	var hello logRecord
	harness.Try(t, 60*time.Second, func() error {
		rs := access.find(func(r logRecord) bool { return r.attrs["RequestPath"] == "/hello?x=1" })
		if len(rs) != 1 {
			return fmt.Errorf("%d access records for /hello", len(rs))
		}
		hello = rs[0]
		if len(access.find(func(r logRecord) bool { return r.attrs["RequestPath"] == "/nothing" })) != 1 {
			return fmt.Errorf("no access record for the unrouted request")
		}
		return nil
	})
	for k, v := range map[string]string{
		"RequestMethod": "GET", "RequestHost": "ok.example", "RequestProtocol": "HTTP/1.1", "RequestScheme": "http",
		"RouterName": "ok@file", "ServiceName": "ok@file", "entryPointName": "web", "ClientHost": "127.0.0.1",
		"ServiceURL": backend.URL, "request_X-Req": "r-7", "ClientUsername": "-",
	} {
		if hello.attrs[k] != v {
			t.Errorf("access record %s = %q, want %q", k, hello.attrs[k], v)
		}
	}
	for k, v := range map[string]int64{"DownstreamStatus": 200, "OriginStatus": 200, "DownstreamContentSize": 5, "RetryAttempts": 0} {
		if got, ok := hello.intAttrs[k]; !ok || got != v {
			t.Errorf("access record %s = %v (int %v), want the integer %d", k, hello.attrs[k], ok, v)
		}
	}
	if hello.intAttrs["Duration"] <= 0 {
		t.Errorf("Duration %v, want nanoseconds > 0", hello.attrs["Duration"])
	}
	if _, err := time.Parse(time.RFC3339Nano, hello.attrs["StartUTC"]); err != nil {
		t.Errorf("StartUTC %q: %v", hello.attrs["StartUTC"], err)
	}
	if _, ok := hello.attrs["request_User-Agent"]; ok {
		t.Error("a header not kept by fields.headers is an attribute")
	}
	if !strings.Contains(hello.body, `"GET /hello?x=1 HTTP/1.1" 200 5`) || hello.severity != logspb.SeverityNumber_SEVERITY_NUMBER_INFO {
		t.Errorf("access record body %q severity %v, want the common line and INFO", hello.body, hello.severity)
	}
	if hello.resource["service.name"] != "edge-access" || hello.resource["deployment.environment"] != "test" {
		t.Errorf("access resource %v", hello.resource)
	}
	if time.Since(hello.time) > time.Minute || hello.time.After(time.Now()) {
		t.Errorf("access record time %v", hello.time)
	}
	unrouted := access.find(func(r logRecord) bool { return r.attrs["RequestPath"] == "/nothing" })[0]
	if unrouted.intAttrs["DownstreamStatus"] != 404 || unrouted.attrs["RouterName"] != "" {
		t.Errorf("unrouted record: %v", unrouted.attrs)
	}
	if b, err := os.ReadFile(logPath); err == nil && len(b) > 0 {
		t.Errorf("access log file written without dualOutput: %q", b)
	}

	harness.Try(t, 60*time.Second, func() error {
		if len(app.find(func(r logRecord) bool { return r.body == "config applied" })) == 0 {
			return fmt.Errorf("no 'config applied' application record")
		}
		return nil
	})
	applied := app.find(func(r logRecord) bool { return r.body == "config applied" })[0]
	if applied.attrs["version"] == "" || applied.intAttrs["routers"] < 1 || applied.severity != logspb.SeverityNumber_SEVERITY_NUMBER_INFO {
		t.Errorf("config applied record: %+v", applied)
	}
	if applied.resource["service.name"] != "edge-logs" {
		t.Errorf("application log resource %v", applied.resource)
	}
	if out := g.Output(); strings.Contains(out, "config applied") {
		t.Errorf("application logs still written locally with log.otlp:\n%s", out)
	}
}
