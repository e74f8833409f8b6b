package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// external matches anything that would load from another origin: absolute
// URLs, protocol-relative URLs, CSS imports and font faces.
var external = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|@font-face`)

func TestUIIsSelfContained(t *testing.T) {
	ui := FS()
	for _, name := range []string{"index.html", "app.js", "chart.js", "flow.js", "diff.js", "dom.js", "migration.js",
		"common.js", "changes.js", "revisions.js", "certificates.js", "cluster.js", "static.js", "lists.js", "style.css"} {
		if _, err := fs.Stat(ui, name); err != nil {
			t.Fatalf("%s missing: %v", name, err)
		}
	}
	err := fs.WalkDir(ui, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(ui, p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			// Placeholders in form fields show example URLs; they load nothing.
			if strings.Contains(line, "placeholder=") {
				continue
			}
			// The SVG namespace is a name (createElementNS), not a load.
			line = strings.ReplaceAll(line, "'http://www.w3.org/2000/svg'", "")
			if m := external.FindString(line); m != "" {
				t.Errorf("%s references %q: the UI must work offline", p, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUIUsesNoInnerHTML(t *testing.T) {
	// Names come from Docker labels, files and Kubernetes objects; they
	// must never be parsed as HTML.
	names, err := fs.Glob(FS(), "*.js")
	if err != nil || len(names) == 0 {
		t.Fatalf("no JavaScript files: %v", err)
	}
	for _, name := range names {
		data, err := fs.ReadFile(FS(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}
