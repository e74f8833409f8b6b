package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

// buildProvider builds nothing for a section that is not set, the file
// provider with its Reload for SIGHUP, names the section in an error
// (the file provider's own errors already do), and refuses an unknown kind.
func TestBuildProvider(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := &static.Configuration{Providers: &static.Providers{}}
	for _, k := range providerKinds {
		if p, reload, err := buildProvider(k.kind, c, log); p != nil || reload != nil || err != nil {
			t.Errorf("%s not set: %v %v %v, want nothing", k.kind, p, reload != nil, err)
		}
	}

	c.Providers.File = &static.File{Directory: t.TempDir()}
	p, reload, err := buildProvider("file", c, log)
	if err != nil || p == nil || p.Name() != "file" || reload == nil {
		t.Errorf("file: %v %v %v, want the file provider and its Reload", p, reload != nil, err)
	}
	c.Providers.File = &static.File{}
	if _, _, err := buildProvider("file", c, log); err == nil || err.Error() != "providers.file: set filename or directory" {
		t.Errorf("file without a path: %v", err)
	}

	c.Providers.Docker = &static.Docker{}
	if p, reload, err := buildProvider("docker", c, log); err != nil || p == nil || p.Name() != "docker" || reload != nil {
		t.Errorf("docker: %v %v %v, want the docker provider without Reload", p, reload != nil, err)
	}
	c.Providers.Docker = &static.Docker{Prefixes: []string{"gantry."}}
	if _, _, err := buildProvider("docker", c, log); err == nil || !strings.HasPrefix(err.Error(), "providers.docker: docker: prefixes: ") {
		t.Errorf("docker with a bad prefix: %v, want the error under providers.docker", err)
	}

	if _, _, err := buildProvider("nope", c, log); err == nil || err.Error() != "providers.nope: unknown provider" {
		t.Errorf("unknown kind: %v", err)
	}
}
