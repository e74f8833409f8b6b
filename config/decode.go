package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"
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

// Decode parses data in format f into a Configuration. Field names match
// case-insensitively, as in Traefik (entryPoints, entrypoints and EntryPoints
// are one field); object names keep their case. Unknown fields are errors.
// Errors name the offending field path and, for syntax errors, the line.
func Decode(data []byte, f Format) (*Configuration, error) {
	var generic any
	switch f {
	case YAML:
		if err := yaml.Unmarshal(data, &generic); err != nil {
			return nil, fmt.Errorf("yaml: %w", err)
		}
	case TOML:
		m := map[string]any{}
		if _, err := toml.Decode(string(data), &m); err != nil {
			return nil, fmt.Errorf("toml: %w", err)
		}
		generic = m
	case JSON:
		return decodeJSON(data)
	default:
		return nil, fmt.Errorf("unknown format %q", f)
	}
	if generic == nil {
		return &Configuration{}, nil
	}
	generic = stringKeys(generic)
	if _, ok := generic.(map[string]any); !ok {
		return nil, fmt.Errorf("%s: top level must be a mapping, got %T", f, generic)
	}
	b, err := json.Marshal(generic)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	return decodeJSON(b)
}

// stringKeys returns v with every mapping keyed by strings: YAML decodes a
// mapping with a non-string key (statusRewrites: {418: 404}) as
// map[any]any, which JSON cannot encode; such keys are written with
// fmt.Sprint, as Traefik's decoder reads them.
func stringKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = stringKeys(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = stringKeys(e)
		}
		return x
	}
	return v
}

func decodeJSON(b []byte) (*Configuration, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	c := &Configuration{}
	if err := d.Decode(c); err != nil {
		return nil, describeJSONError(err)
	}
	return c, nil
}

// describeJSONError rewrites encoding/json's errors into field-path wording.
func describeJSONError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("field %s: cannot use %s as %s", te.Field, te.Value, te.Type)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s", rest)
	}
	return err
}

// Encode serialises c as indented JSON (the canonical form used for hashing
// is produced by the providers package, not here).
func Encode(c *Configuration) ([]byte, error) {
	return json.MarshalIndent(c, "", "  ")
}
