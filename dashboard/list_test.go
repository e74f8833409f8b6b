package dashboard

import (
	"net/http/httptest"
	"testing"
)

// TestPaginateHugeValues: page and per_page are client input; values whose
// product overflows an int are a 400 (past the end) or the whole list,
// never a panic.
func TestPaginateHugeValues(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	tests := []struct {
		query    string
		want     int // items returned; -1: an error
		nextPage string
	}{
		{"page=1&per_page=2", 2, "2"},
		{"page=3&per_page=2", 1, "1"},
		{"page=4&per_page=2", -1, ""},
		{"page=1&per_page=9223372036854775807", 5, "1"},
		{"page=2&per_page=9223372036854775807", -1, ""},
		{"page=3&per_page=4611686018427387904", -1, ""},
		{"page=4611686018427387905&per_page=2", -1, ""},
		{"page=9223372036854775807&per_page=9223372036854775807", -1, ""},
		{"page=9223372036854775807&per_page=1", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := httptest.NewRecorder()
			got, err := paginate(rec, httptest.NewRequest("GET", "/api/http/routers?"+tt.query, nil), items)
			if tt.want < 0 {
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v, want %d items", err, tt.want)
			}
			if len(got) != tt.want {
				t.Errorf("got %d items, want %d", len(got), tt.want)
			}
			if h := rec.Header().Get(nextPageHeader); h != tt.nextPage {
				t.Errorf("X-Next-Page %q, want %q", h, tt.nextPage)
			}
		})
	}
	rec := httptest.NewRecorder()
	if got, err := paginate(rec, httptest.NewRequest("GET", "/?page=1", nil), []int(nil)); err != nil || len(got) != 0 {
		t.Errorf("empty list, page 1: %v, %v; want no item and no error", got, err)
	}
	if _, err := paginate(rec, httptest.NewRequest("GET", "/?page=2", nil), []int(nil)); err == nil {
		t.Error("empty list, page 2: no error")
	}
}
