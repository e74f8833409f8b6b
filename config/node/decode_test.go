package node

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

type inner struct {
	Address string   `json:"address,omitempty"`
	IPs     []string `json:"trustedIPs,omitempty"`
	On      bool     `json:"on,omitempty"`
}

type conf struct {
	Points  map[string]*inner `json:"entryPoints,omitempty"`
	API     *inner            `json:"api,omitempty"`
	Timeout config.Duration   `json:"timeout,omitempty"`
	Limit   int               `json:"limit,omitempty"`
	List    []inner           `json:"list,omitempty"`
}

// tree builds a tree from "a.b[0].c=value" lines; every node gets its key.
func tree(t *testing.T, kvs ...string) *Node {
	t.Helper()
	root := &Node{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		segs, err := SplitKey(k)
		if err != nil {
			t.Fatal(err)
		}
		n := root
		for i, s := range segs {
			n = n.Child(s)
			n.Key = strings.Join(segs[:i+1], ".")
		}
		n.Value, n.HasValue = v, true
	}
	return root
}

func TestDecodeValues(t *testing.T) {
	var c conf
	errs := Decode(reflect.ValueOf(&c), tree(t,
		"EntryPoints.web.address=:80", "entrypoints.web.trustedips=10.0.0.0/8, 127.0.0.1",
		"api=true", "api.on=true", "timeout=1.5", "limit=7", "list[3].address=b", "list[1].address=a",
	), Options{})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if w := c.Points["web"]; w == nil || w.Address != ":80" || !slices.Equal(w.IPs, []string{"10.0.0.0/8", "127.0.0.1"}) {
		t.Errorf("entryPoints: %+v", c.Points["web"])
	}
	if c.API == nil || !c.API.On || c.Timeout.D() != 1500*time.Millisecond || c.Limit != 7 {
		t.Errorf("api %+v timeout %v limit %d", c.API, c.Timeout, c.Limit)
	}
	if len(c.List) != 2 || c.List[0].Address != "a" || c.List[1].Address != "b" {
		t.Errorf("list (indexes ordered and compacted): %+v", c.List)
	}
}

// Layers (file, then environment, then flags): sections and map entries
// merge, a list and a scalar replace, false removes a section.
func TestDecodeLayers(t *testing.T) {
	var c conf
	o := Options{Layer: true}
	if errs := Decode(reflect.ValueOf(&c), tree(t, "entryPoints.web.address=:80", "entryPoints.web.trustedIPs[0]=a",
		"entryPoints.web.trustedIPs[1]=b", "api.on=true", "limit=1"), o); len(errs) != 0 {
		t.Fatal(errs)
	}
	if errs := Decode(reflect.ValueOf(&c), tree(t, "entrypoints.web.trustedips[0]=c", "entrypoints.admin.address=:81",
		"api=false", "limit=2"), o); len(errs) != 0 {
		t.Fatal(errs)
	}
	if w := c.Points["web"]; w == nil || w.Address != ":80" || !slices.Equal(w.IPs, []string{"c"}) {
		t.Errorf("web: %+v, want its address kept and its list replaced", c.Points["web"])
	}
	if c.Points["admin"] == nil || c.API != nil || c.Limit != 2 {
		t.Errorf("admin %+v api %+v limit %d", c.Points["admin"], c.API, c.Limit)
	}
}

func TestDecodeUnknownFields(t *testing.T) {
	var c conf
	errs := Decode(reflect.ValueOf(&c), tree(t, "entryPoints.web.adress=:80", "nosuch.a=1", "nosuch.b=2"), Options{})
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	if want := []string{"entryPoints.web.adress", "nosuch.a", "nosuch.b"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q (one per key)", keys, want)
	}
	uf, ok := errors.AsType[*UnknownFieldError](errs[0].Err)
	if !ok || uf.Name != "adress" || uf.Suggestion != "address" {
		t.Errorf("error %v, want unknown field adress suggesting address", errs[0].Err)
	}
	if uf, _ := errors.AsType[*UnknownFieldError](errs[1].Err); uf == nil || uf.Suggestion != "" {
		t.Errorf("nosuch: %v, want no suggestion", errs[1].Err)
	}
	// Whole: one error at the unknown node the user wrote.
	errs = Decode(reflect.ValueOf(&c), tree(t, "nosuch.a=1", "nosuch.b=2"), Options{Whole: true})
	if len(errs) != 1 || errs[0].Key != "nosuch" {
		t.Errorf("whole: %v, want one error at nosuch", errs)
	}
}

func TestDecodeBadValues(t *testing.T) {
	tests := []struct{ kv, key, msg string }{
		{"limit=lots", "limit", `invalid integer "lots"`},
		{"timeout=soon", "timeout", `invalid duration "soon"`},
		{"api=maybe", "api", `"api" is a block`},
		{"api.on=yes", "api.on", `invalid boolean "yes"`},
		{"list.x.address=a", "list.x.address", `"list" is an array`},
		{"list=a", "list", "array of blocks"},
		{"limit.x=1", "limit.x", "takes a value"},
		{"entryPoints=x", "entryPoints", "is a map"},
	}
	for _, tt := range tests {
		var c conf
		errs := Decode(reflect.ValueOf(&c), tree(t, tt.kv), Options{})
		if len(errs) != 1 || errs[0].Key != tt.key || !strings.Contains(errs[0].Err.Error(), tt.msg) {
			t.Errorf("%s: %v, want one error at %s with %q", tt.kv, errs, tt.key, tt.msg)
		}
	}
}
