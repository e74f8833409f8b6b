package middleware

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
)

// grpcFrame is a gRPC length-prefixed message.
func grpcFrame(flag byte, payload string) []byte {
	b := make([]byte, 5, 5+len(payload))
	b[0] = flag
	binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
	return append(b, payload...)
}

func TestGrpcWeb(t *testing.T) {
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/grpc+proto" || r.Header.Get("Te") != "trailers" {
			http.Error(w, "not grpc: "+r.Header.Get("Content-Type"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		w.Header().Set("Content-Type", "application/grpc+proto")
		w.WriteHeader(200)
		_, _ = w.Write(grpcFrame(0, "echo:"+string(body[5:])))
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set("Grpc-Message", "fine")
	}))
	res := resolverFrom(t, "http:\n  middlewares:\n    gw: {grpcWeb: {allowOrigins: [\"https://app.example\"]}}\n")
	srv := front(t, res, backend.URL, "gw")
	trailer := grpcFrame(0x80, "grpc-message: fine\r\ngrpc-status: 0\r\n")

	// Binary gRPC-Web.
	resp, body := do(t, http.MethodPost, srv.URL+"/pkg.Svc/Echo", bytes.NewReader(grpcFrame(0, "hi")), withHeader("Content-Type", "application/grpc-web+proto", "Origin", "https://app.example"))
	want := string(grpcFrame(0, "echo:hi")) + string(trailer)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/grpc-web+proto" || body != want {
		t.Errorf("binary: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "grpc-status") {
		t.Errorf("CORS headers %v", resp.Header)
	}
	if len(resp.Trailer) != 0 {
		t.Errorf("HTTP trailers still sent: %v", resp.Trailer)
	}

	// Text (base64) gRPC-Web.
	resp, body = do(t, http.MethodPost, srv.URL+"/pkg.Svc/Echo", strings.NewReader(base64.StdEncoding.EncodeToString(grpcFrame(0, "yo"))), withHeader("Content-Type", "application/grpc-web-text+proto"))
	var dec []byte
	for s := body; s != ""; {
		// Each write is its own padded base64 chunk.
		n := strings.IndexByte(s, '=')
		chunk := s
		if n >= 0 {
			end := n
			for end < len(s) && s[end] == '=' {
				end++
			}
			chunk, s = s[:end], s[end:]
		} else {
			s = ""
		}
		d, err := base64.StdEncoding.DecodeString(chunk)
		if err != nil {
			t.Fatalf("text body %q: %v", body, err)
		}
		dec = append(dec, d...)
	}
	if resp.Header.Get("Content-Type") != "application/grpc-web-text+proto" || string(dec) != string(grpcFrame(0, "echo:yo"))+string(trailer) {
		t.Errorf("text: %q %q", resp.Header.Get("Content-Type"), dec)
	}

	// Preflight.
	for origin, code := range map[string]int{"https://app.example": 204, "https://evil.example": 403} {
		resp, _ := do(t, http.MethodOptions, srv.URL+"/pkg.Svc/Echo", nil, withHeader("Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type,x-grpc-web"))
		if resp.StatusCode != code {
			t.Errorf("preflight from %s: %d, want %d", origin, resp.StatusCode, code)
		}
		if code == 204 && resp.Header.Get("Access-Control-Allow-Headers") != "content-type,x-grpc-web" {
			t.Errorf("preflight headers %v", resp.Header)
		}
	}

	// Other requests pass through unchanged.
	resp, body = do(t, http.MethodGet, srv.URL+"/plain", nil, nil)
	if resp.StatusCode != 400 || !strings.Contains(body, "not grpc") {
		t.Errorf("plain request: %d %q", resp.StatusCode, body)
	}
}
