package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-proxy/gantry/config/static"
)

// objectSources maps "router name", "service name" and "middleware name"
// (unqualified, as written in the files) to where the file provider's files
// define them: "path:line" for YAML, "path" for TOML and JSON. validate uses
// it to name the file of a problem found when compiling. Files that do not
// parse are skipped (the file provider reports them itself).
func objectSources(c *static.Configuration) map[string]string {
	out := map[string]string{}
	if c.Providers == nil || c.Providers.File == nil {
		return out
	}
	f := c.Providers.File
	var files []string
	if f.Filename != "" {
		files = []string{f.Filename}
	} else if f.Directory != "" {
		_ = filepath.WalkDir(f.Directory, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
				files = append(files, p)
			}
			return nil
		})
	}
	for _, p := range files {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yml", ".yaml":
			locateYAML(out, p, b)
		case ".toml", ".json":
			locateGeneric(out, p, b)
		}
	}
	return out
}

// sections are the dynamic configuration's HTTP object maps and the kind
// names validate prints.
var sections = map[string]string{"routers": "router", "services": "service", "middlewares": "middleware"}

func locateYAML(out map[string]string, path string, b []byte) {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	http := mapChild(doc.Content[0], "http")
	for sec, kind := range sections {
		m := mapChild(http, sec)
		if m == nil {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			key := kind + " " + k.Value
			if _, dup := out[key]; !dup {
				out[key] = fmt.Sprintf("%s:%d", path, k.Line)
				if r := mapChild(m.Content[i+1], "rule"); r != nil && kind == "router" {
					out["rule "+key] = fmt.Sprintf("%s:%d", path, r.Line) // rule errors: the line to edit
				}
			}
		}
	}
}

// mapChild returns the value node of key (case-insensitive) in mapping n.
func mapChild(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, key) {
			return n.Content[i+1]
		}
	}
	return nil
}

func locateGeneric(out map[string]string, path string, b []byte) {
	var tree map[string]any
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		if _, err := toml.Decode(string(b), &tree); err != nil {
			return
		}
	} else if yaml.Unmarshal(b, &tree) != nil { // JSON is YAML
		return
	}
	http, _ := lookupFold(tree, "http").(map[string]any)
	for sec, kind := range sections {
		m, _ := lookupFold(http, sec).(map[string]any)
		for name := range m {
			if _, dup := out[kind+" "+name]; !dup {
				out[kind+" "+name] = path
			}
		}
	}
}

func lookupFold(m map[string]any, key string) any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}
