package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Format is a serialisation of a Configuration.
type Format string

// The supported formats.
const (
	YAML Format = "yaml"
	TOML Format = "toml"
	JSON Format = "json"
)

// FormatOf returns the format for a file name by extension (.yml, .yaml,
// .toml, .json) and false for any other extension.
func FormatOf(name string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yml", ".yaml":
		return YAML, true
	case ".toml":
		return TOML, true
	case ".json":
		return JSON, true
	}
	return "", false
}

// Decode is DecodeContext without a deadline.
func Decode(data []byte, f Format) (*Configuration, error) {
	return DecodeContext(context.Background(), data, f)
}

// DecodeContext parses data in format f into a Configuration, in time
// linear in len(data) for every format (see decodeYAML). Field names match
// case-insensitively, as in Traefik (entryPoints, entrypoints and
// EntryPoints are one field); object names keep their case. Unknown fields
// are errors. Errors name the offending field path and, for syntax
// errors, the line. It returns ctx's error when ctx ends first (shutdown
// during the decode of a large file).
func DecodeContext(ctx context.Context, data []byte, f Format) (*Configuration, error) {
	if f == JSON {
		return decodeJSON(data)
	}
	generic, err := DecodeGeneric(ctx, data, f)
	if err != nil {
		return nil, err
	}
	if generic == nil {
		return &Configuration{}, nil
	}
	if _, ok := generic.(map[string]any); !ok {
		return nil, fmt.Errorf("%s: top level must be a mapping, got %s", f, kindOf(generic))
	}
	b, err := json.Marshal(generic)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// DecodeGeneric parses data in format f into generic values: mappings as
// map[string]any (keys that are not strings written with fmt.Sprint),
// sequences as []any, and scalars; JSON numbers as json.Number. Its time
// is linear in len(data).
func DecodeGeneric(ctx context.Context, data []byte, f Format) (any, error) {
	switch f {
	case YAML:
		v, err := decodeYAML(ctx, data)
		// The YAML library's errors and YAMLError already read "yaml: ...".
		if err != nil && ctx.Err() == nil && !strings.HasPrefix(err.Error(), "yaml: ") {
			return nil, fmt.Errorf("yaml: %w", err)
		}
		return v, err
	case TOML:
		m := map[string]any{}
		if _, err := toml.Decode(string(data), &m); err != nil {
			return nil, fmt.Errorf("toml: %w", err)
		}
		return m, ctx.Err()
	case JSON:
		var v any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown format %q", f)
}

// kindOf names a generic value's YAML/TOML kind for messages.
func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "a sequence"
	case string:
		return "a string"
	case nil:
		return "nothing"
	}
	return "a scalar"
}

func decodeJSON(b []byte) (*Configuration, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	c := &Configuration{}
	if err := d.Decode(c); err != nil {
		return nil, describeJSONError(err, b)
	}
	return c, nil
}

// describeJSONError rewrites encoding/json's errors (decoding b) into
// field-path wording: "field http.routers.web.priority: cannot use string
// as int", the router's name included.
func describeJSONError(err error, b []byte) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		field := te.Field
		if p := jsonPathAt(b, te.Offset); p != "" {
			field = p
		}
		return fmt.Errorf("field %s: cannot use %s as %s", field, te.Value, kindName(te.Type))
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s", rest)
	}
	return err
}

// ValueKind is what a configuration value of type t holds, pointers
// followed, in the words of the configuration formats: "section" (a
// struct), "mapping", "list" (slice or array), "string", "bool", "int"
// (any integer, Duration included), "number" (a float), else t's
// reflect.Kind. Decode's errors and the static options' documentation
// (config/static) name values from it.
func ValueKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return "section"
	case reflect.Map:
		return "mapping"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// kindWords are kindName's words for the ValueKinds not named as they are.
var kindWords = map[string]string{"section": "a section", "mapping": "a mapping", "list": "a list", "bool": "true or false", "number": "a number"}

// kindName names what a field wants in the user's terms, never a Go type
// name ("config.RouterTLSConfig" leaked into messages, issue 23): a
// section, a mapping, a list, a string, a number, true or false; int and
// string keep their old wording.
func kindName(t reflect.Type) string {
	if t == nil {
		return "this field"
	}
	k := ValueKind(t)
	if w, ok := kindWords[k]; ok {
		return w
	}
	return k
}

// Encode serialises c as indented JSON (the canonical form used for hashing
// is produced by the providers package, not here).
func Encode(c *Configuration) ([]byte, error) {
	return json.MarshalIndent(c, "", "  ")
}

// jsonPathAt returns the path ("http.routers.my.priority", "a.list[1].b")
// of the value of JSON document b that ends at byte offset off, where
// encoding/json reports a type error: its UnmarshalTypeError.Field leaves
// out map keys and list indexes ("http.routers.priority"), which name the
// object. It returns "" when b does not reach off.
func jsonPathAt(b []byte, off int64) string {
	type frame struct {
		obj      bool
		key      string
		idx      int
		needsKey bool
	}
	var stack []frame
	path := func() string {
		var s strings.Builder
		for _, f := range stack {
			if f.obj {
				if s.Len() > 0 {
					s.WriteByte('.')
				}
				s.WriteString(f.key)
			} else {
				fmt.Fprintf(&s, "[%d]", f.idx)
			}
		}
		return s.String()
	}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].needsKey = true
		}
	}
	d := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].needsKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].needsKey = k, false
				continue
			}
		}
		if n := len(stack); n > 0 && !stack[n-1].obj && tok != json.Delim(']') {
			stack[n-1].idx++
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if d.InputOffset() >= off {
				return path() // a list or mapping where a value is wanted
			}
			stack = append(stack, frame{obj: tok == json.Delim('{'), needsKey: true, idx: -1})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if d.InputOffset() >= off {
				return path()
			}
			valueDone()
			continue
		}
		if d.InputOffset() >= off {
			return path()
		}
		valueDone()
	}
}
