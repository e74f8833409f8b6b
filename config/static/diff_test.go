package static

import (
	"reflect"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/node"
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
		{Path: "certificatesResolvers.le", Kind: Added, Options: []Change{{Path: "certificatesResolvers.le.acme.email", Kind: Added}}},
		{Path: "entryPoints.new", Kind: Added, Options: []Change{{Path: "entryPoints.new.address", Kind: Added}}},
		{Path: "entryPoints.old", Kind: Removed, Options: []Change{{Path: "entryPoints.old.address", Kind: Removed}}},
		{Path: "entryPoints.traefik", Kind: Changed, Options: []Change{{Path: "entryPoints.traefik.address", Kind: Changed}}},
		{Path: "log.level", Kind: Changed},
		{Path: "providers.consulCatalog", Kind: Added},
		{Path: "providers.file", Kind: Changed, Options: []Change{{Path: "providers.file.directory", Kind: Changed}}},
		{Path: "store", Kind: Changed, Options: []Change{{Path: "store.path", Kind: Changed}}},
	}
	if got := Diff(prev, next); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got %+v\nwant %+v", got, want)
	}
	if got := Diff(next, next); len(got) != 0 {
		t.Errorf("Diff of a configuration with itself: %v", got)
	}
	// An empty section is not an absent one: "api: {}" enables the API.
	if got := Diff(&Configuration{}, &Configuration{API: &API{}}); !reflect.DeepEqual(got, []Change{{Path: "api", Kind: Added}}) {
		t.Errorf("api {} against none: %v", got)
	}
	// log.format alone changes "log", not "log.level", and the change
	// names the option.
	if got := Diff(&Configuration{Log: &Log{Level: "INFO"}}, &Configuration{Log: &Log{Level: "INFO", Format: "json", NoColor: true}}); !reflect.DeepEqual(got, []Change{{Path: "log", Kind: Added,
		Options: []Change{{Path: "log.format", Kind: Added}, {Path: "log.noColor", Kind: Added}}}}) {
		t.Errorf("log.format: %+v", got)
	}
	// A deep option is named in full; a list is one option.
	a := &Configuration{EntryPoints: map[string]*EntryPoint{"web": {Address: ":80", HTTP: &EntryHTTP{Middlewares: []string{"a"}}}}}
	b := &Configuration{EntryPoints: map[string]*EntryPoint{"web": {Address: ":80", HTTP: &EntryHTTP{Middlewares: []string{"a", "b"}}}}}
	if got := Diff(a, b); !reflect.DeepEqual(got, []Change{{Path: "entryPoints.web", Kind: Changed,
		Options: []Change{{Path: "entryPoints.web.http.middlewares", Kind: Changed}}}}) {
		t.Errorf("entrypoint middlewares: %+v", got)
	}
	// A value section names no option.
	d1, d2 := config.Duration(time.Second), config.Duration(2*time.Second)
	if got := Diff(&Configuration{Providers: &Providers{ProvidersThrottleDuration: &d1}}, &Configuration{Providers: &Providers{ProvidersThrottleDuration: &d2}}); !reflect.DeepEqual(got, []Change{{Path: "providers.providersThrottleDuration", Kind: Changed}}) {
		t.Errorf("throttle: %+v", got)
	}
	if got := Diff(nil, &Configuration{}); len(got) != 0 {
		t.Errorf("nil against empty: %v", got)
	}
}

// TestDiffEverySection: every top-level section of Configuration is
// compared (it once listed them by hand and left out experimental): a
// section set only in next is reported Added under its JSON name.
func TestDiffEverySection(t *testing.T) {
	for f := range reflect.TypeFor[Configuration]().Fields() {
		next := &Configuration{}
		v := reflect.ValueOf(next).Elem().FieldByIndex(f.Index)
		want := node.JSONName(f)
		switch f.Type.Kind() {
		case reflect.Map:
			v.Set(reflect.MakeMap(f.Type))
			v.SetMapIndex(reflect.ValueOf("x"), reflect.New(f.Type.Elem().Elem()))
			want += ".x"
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		}
		switch f.Name {
		case "Providers":
			next.Providers.Docker = &Docker{}
			want = "providers.docker"
		case "Log":
			next.Log.Format = "json"
		}
		got := Diff(&Configuration{}, next)
		if len(got) != 1 || got[0].Path != want || got[0].Kind != Added {
			t.Errorf("%s set: Diff %+v, want one %q added", f.Name, got, want)
		}
	}
}
