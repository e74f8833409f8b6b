package h1

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// endless is an upload body that never ends by itself (the client stops
// sending once the request is over); it counts what was read.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A client streaming a large upload that the handler refuses without
// reading (an early 413) reads the 413: the server half-closes and keeps
// discarding what the client still sends until the client, having read
// the answer, closes — no reset destroys the response in flight. Both a
// Content-Length upload (more than the drain allowance) and a chunked
// one are tried, several times.
func TestEarlyAnswerToStreamingUploadIsRead(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, "too large\n")
	}))
	for _, chunked := range []bool{false, true} {
		for i := range 5 {
			tr := &http.Transport{}
			body := &endless{}
			req, err := http.NewRequest("POST", "http://"+addr+"/upload", io.LimitReader(body, 1<<30))
			if err != nil {
				t.Fatal(err)
			}
			if !chunked {
				req.ContentLength = 1 << 30
			}
			resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatalf("chunked=%v try %d: %v (after %d bytes sent)", chunked, i, err, body.n)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			tr.CloseIdleConnections()
			if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "too large") {
				t.Fatalf("chunked=%v try %d: %d %q %v", chunked, i, resp.StatusCode, b, err)
			}
		}
	}
}
