package replay

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// codesWriter records every status written to it.
type codesWriter struct {
	*httptest.ResponseRecorder
	codes []int
}

func (w *codesWriter) WriteHeader(code int) {
	w.codes = append(w.codes, code)
	w.ResponseRecorder.WriteHeader(code)
}

func newCodesWriter() *codesWriter { return &codesWriter{ResponseRecorder: httptest.NewRecorder()} }

func is5xx(code int) bool { return code >= 500 }

func TestWriterPassesThrough(t *testing.T) {
	cw := newCodesWriter()
	w := NewWriter(cw, is5xx, false)
	w.Header().Set("X-A", "1")
	if cw.Header().Get("X-A") != "" {
		t.Fatal("header reached the client before the status was known")
	}
	_, _ = w.Write([]byte("body"))
	w.Header().Set("X-Late", "1") // the client's map now: too late to send, as with net/http
	if w.Caught() || w.Code() != http.StatusOK {
		t.Fatalf("caught %v, code %d; want passed through with 200", w.Caught(), w.Code())
	}
	if !slices.Equal(cw.codes, []int{200}) || cw.Header().Get("X-A") != "1" || cw.Body.String() != "body" {
		t.Fatalf("client got %v %v %q", cw.codes, cw.Header(), cw.Body.String())
	}
}

func TestWriterDropsCaughtAnswer(t *testing.T) {
	cw := newCodesWriter()
	w := NewWriter(cw, is5xx, false)
	w.Header().Set("Set-Cookie", "a=1")
	w.WriteHeader(http.StatusBadGateway)
	if n, err := w.Write([]byte("upstream error")); n != 14 || err != nil {
		t.Fatalf("Write = %d, %v; want the bytes counted as written", n, err)
	}
	w.Flush()
	if !w.Caught() || w.Code() != http.StatusBadGateway {
		t.Fatalf("caught %v, code %d; want caught 502", w.Caught(), w.Code())
	}
	if len(cw.codes) != 0 || len(cw.Header()) != 0 || cw.Body.Len() != 0 || cw.Flushed {
		t.Fatalf("the client saw part of a caught answer: %v %v %q flushed=%v", cw.codes, cw.Header(), cw.Body.String(), cw.Flushed)
	}
	w.WriteHeader(http.StatusOK) // a second status changes nothing
	if w.Code() != http.StatusBadGateway || len(cw.codes) != 0 {
		t.Fatal("a second WriteHeader was not ignored")
	}
}

func TestWriterInformational(t *testing.T) {
	for _, pass := range []bool{false, true} {
		cw := newCodesWriter()
		var seen []int
		w := NewWriter(cw, func(code int) bool { seen = append(seen, code); return false }, pass)
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusSwitchingProtocols) // final: decided on
		want := []int{101}
		if pass {
			want = []int{103, 101}
		}
		if !slices.Equal(cw.codes, want) || !slices.Equal(seen, []int{101}) {
			t.Errorf("pass1xx=%v: client got %v, catch saw %v; want %v and [101]", pass, cw.codes, seen, want)
		}
	}
}

func TestHandoffCopiesHeldHeaders(t *testing.T) {
	cw := newCodesWriter()
	w := NewWriter(cw, is5xx, true)
	w.Header().Set("X-A", "1")
	if got := w.Handoff(); got != http.ResponseWriter(cw) || cw.Header().Get("X-A") != "1" {
		t.Fatalf("Handoff returned %T with header %v", got, cw.Header())
	}
	if w.Unwrap() != http.ResponseWriter(cw) {
		t.Fatal("Unwrap is not the client's writer")
	}
}

type failingBody struct{ io.Reader }

func (failingBody) Close() error { return nil }

func TestReadBody(t *testing.T) {
	for _, tc := range []struct {
		body  string
		limit int64
		whole bool
	}{
		{"", -1, true}, {"abcdef", -1, true}, {"abcd", 4, true}, {"abcde", 4, false}, {"abcdef", 0, false}, {"", 0, true},
	} {
		kept, rest, err := ReadBody(io.NopCloser(strings.NewReader(tc.body)), tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if tc.whole {
			if rest != nil || string(kept) != tc.body {
				t.Errorf("%q limit %d: kept %q, rest %v; want the whole body kept", tc.body, tc.limit, kept, rest)
			}
			continue
		}
		if kept != nil || rest == nil {
			t.Fatalf("%q limit %d: kept %q, rest %v; want it streamed", tc.body, tc.limit, kept, rest)
		}
		if b, _ := io.ReadAll(rest); string(b) != tc.body {
			t.Errorf("%q limit %d: rest read %q", tc.body, tc.limit, b)
		}
	}
	boom := errors.New("boom")
	if _, _, err := ReadBody(failingBody{io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom))}, 10); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the body's read error", err)
	}
}
