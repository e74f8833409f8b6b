package static

import (
	"reflect"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/node"
)

//go:generate go test -run TestOptionDocsUpToDate -update

// Option is one static option, as a flag writes it.
type Option struct {
	// Path is the option's path: "entryPoints.<name>.address",
	// "entryPoints.<name>.http.tls.domains[n].main"; "<name>" stands for
	// any name (a map key), "[n]" for a list index.
	Path string
	// Value says what the option takes: "<string>", "<int>", "<number>",
	// "true|false", "<duration>", "<list>" (comma-separated) or
	// "true|false" for a section that "true" enables with its defaults.
	Value string
	// Doc is the first sentence of the field's doc comment (or of its
	// type's), "" when it has none.
	Doc string
}

var durationType = reflect.TypeFor[config.Duration]()

// Options lists every option of the static configuration, in the order of
// the Configuration type's fields, sections before their options. It is
// built from the types by reflection, with the doc comments gathered by
// go generate (docs_gen.go), so it cannot drift from what is decoded.
func Options() []Option {
	var out []Option
	listOptions(reflect.TypeFor[Configuration](), "", &out, 0)
	return out
}

// maxOptionDepth bounds the walk (no static type nests deeper).
const maxOptionDepth = 12

func listOptions(t reflect.Type, prefix string, out *[]Option, depth int) {
	if depth > maxOptionDepth {
		return
	}
	for f := range t.Fields() {
		name := node.JSONName(f)
		if !f.IsExported() || name == "-" {
			continue
		}
		if f.Anonymous && name == f.Name && f.Type.Kind() == reflect.Struct {
			listOptions(f.Type, prefix, out, depth+1)
			continue
		}
		doc := fieldDocs[typeKey(t)+"."+f.Name]
		addOption(f.Type, prefix+name, doc, out, depth, true)
	}
}

// addOption adds the options of a field of type ft at path; field is
// false for a map's or list's element (which "true" does not enable).
func addOption(ft reflect.Type, path, doc string, out *[]Option, depth int, field bool) {
	pointer := false
	for ft.Kind() == reflect.Pointer {
		ft, pointer = ft.Elem(), true
	}
	if doc == "" {
		doc = fieldDocs[typeKey(ft)]
	}
	switch {
	case ft == durationType:
		*out = append(*out, Option{Path: path, Value: "<duration>", Doc: doc})
	case ft.Kind() == reflect.Struct:
		if pointer && field {
			*out = append(*out, Option{Path: path, Value: "true|false", Doc: doc})
		}
		listOptions(ft, path+".", out, depth+1)
	case ft.Kind() == reflect.Map:
		addOption(ft.Elem(), path+".<name>", doc, out, depth+1, false)
	case ft.Kind() == reflect.Slice && isSection(ft.Elem()):
		addOption(ft.Elem(), path+"[n]", doc, out, depth+1, false)
	case ft.Kind() == reflect.Slice:
		*out = append(*out, Option{Path: path, Value: "<list>", Doc: doc})
	default:
		*out = append(*out, Option{Path: path, Value: valueKind(ft), Doc: doc})
	}
}

func isSection(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != durationType
}

// valueKind is the placeholder of a scalar option's value in the
// documentation: true|false, <int>, <number>, else <string>.
func valueKind(t reflect.Type) string {
	switch config.ValueKind(t) {
	case "bool":
		return "true|false"
	case "int":
		return "<int>"
	case "number":
		return "<number>"
	}
	return "<string>"
}

// typeKey names a type as docs_gen.go does: "static.EntryPoint",
// "config.ClientTLS".
func typeKey(t reflect.Type) string {
	pkg := t.PkgPath()
	return pkg[strings.LastIndexByte(pkg, '/')+1:] + "." + t.Name()
}
