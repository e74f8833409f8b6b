package static

import (
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	on := true
	prev := &Configuration{
		EntryPoints: map[string]*EntryPoint{
			"web":     {Address: ":80"},
			"old":     {Address: ":81"},
			"traefik": {Address: ":8080"},
		},
		Providers: &Providers{File: &File{Directory: "/a", Watch: &on}, Docker: &Docker{Endpoint: "unix:///x"}},
		API:       &API{Insecure: true},
		Log:       &Log{Level: "INFO", Format: "json"},
		Store:     &Store{Path: "a.db"},
	}
	same := true
	next := &Configuration{
		EntryPoints: map[string]*EntryPoint{
			"web":     {Address: ":80"},
			"new":     {Address: ":82"},
			"traefik": {Address: ":9090"},
		},
		Providers: &Providers{File: &File{Directory: "/b", Watch: &same}, Docker: &Docker{Endpoint: "unix:///x"}, ConsulCatalog: &ConsulCatalog{}},
		API:       &API{Insecure: true},
		Log:       &Log{Level: "DEBUG", Format: "json"},
		Store:     &Store{Path: "b.db"},
		CertificatesResolvers: map[string]*CertificateResolver{
			"le": {ACME: &ACME{Email: "a@b.c"}},
		},
	}
	want := []Change{
		{"certificatesResolvers.le", Added},
		{"entryPoints.new", Added},
		{"entryPoints.old", Removed},
		{"entryPoints.traefik", Changed},
		{"log.level", Changed},
		{"providers.consulCatalog", Added},
		{"providers.file", Changed},
		{"store", Changed},
	}
	if got := Diff(prev, next); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got %v\nwant %v", got, want)
	}
	if got := Diff(next, next); len(got) != 0 {
		t.Errorf("Diff of a configuration with itself: %v", got)
	}
	// An empty section is not an absent one: "api: {}" enables the API.
	if got := Diff(&Configuration{}, &Configuration{API: &API{}}); !reflect.DeepEqual(got, []Change{{"api", Added}}) {
		t.Errorf("api {} against none: %v", got)
	}
	// log.format alone changes "log", not "log.level".
	if got := Diff(&Configuration{Log: &Log{Level: "INFO"}}, &Configuration{Log: &Log{Level: "INFO", Format: "json"}}); !reflect.DeepEqual(got, []Change{{"log", Added}}) {
		t.Errorf("log.format: %v", got)
	}
	if got := Diff(nil, &Configuration{}); len(got) != 0 {
		t.Errorf("nil against empty: %v", got)
	}
}
