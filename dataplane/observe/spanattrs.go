package observe

import (
	"math"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

// A span's attributes are set through add, addString and addInt. A direct
// span (span.direct) encodes each at once as a Span.attributes field of
// its OTLP encoding, applying the limits the SDK applies to a recording
// span (limitAttrs) as it goes: an attribute with an empty key, or past
// the count limit, is dropped and counted; a string is cut to the length
// limit. Keys are distinct there (Tracing.direct needs !mayRepeat), so
// keeping the first ones up to the limit is what limitAttrs keeps. Any
// other span appends to attrs, and limitAttrs applies the limits when it
// ends.

// add sets kv.
func (s *span) add(kv attribute.KeyValue) {
	if !s.direct {
		s.attrs = append(s.attrs, kv)
		return
	}
	if !s.admit(kv.Valid()) {
		return
	}
	if l := s.t.limits.length; l >= 0 {
		kv = truncateAttr(l, kv)
	}
	s.kv = appendKeyValue(s.kv, fSpanAttributes, &kv)
}

// addString sets key to the string v.
func (s *span) addString(key attribute.Key, v string) {
	if !s.direct {
		s.attrs = append(s.attrs, key.String(v))
		return
	}
	if !s.admit(key != "") {
		return
	}
	if l := s.t.limits.length; l >= 0 {
		v = truncateString(l, v)
	}
	s.kv = appendStringKeyValue(s.kv, fSpanAttributes, string(key), v)
}

// addInt sets key to the integer v.
func (s *span) addInt(key attribute.Key, v int) {
	if !s.direct {
		s.attrs = append(s.attrs, key.Int(v))
		return
	}
	if s.admit(key != "") {
		s.kv = appendIntKeyValue(s.kv, fSpanAttributes, string(key), int64(v))
	}
}

// admit counts one more attribute of a direct span, valid or not, and
// says whether it is kept: valid and within the count limit (negative:
// none).
func (s *span) admit(valid bool) bool {
	if !valid || s.t.limits.count >= 0 && s.nkv >= s.t.limits.count {
		s.dropped++
		return false
	}
	s.nkv++
	return true
}

// grow makes room for n more attributes in a span that keeps them in
// attrs.
func (s *span) grow(n int) {
	if !s.direct {
		s.attrs = slices.Grow(s.attrs, n)
	}
}

// decodeKeyValues decodes attributes encoded as appendKeyValue encodes
// them (KeyValue fields of any number, one after the other): the values
// Gantry sets (string, integer, boolean, double, string array) come back
// as they were set; anything else is skipped.
func decodeKeyValues(b []byte) []attribute.KeyValue {
	var kvs []attribute.KeyValue
	eachBytes(b, func(_ protowire.Number, kvb []byte) {
		var key string
		var val attribute.Value
		eachBytes(kvb, func(n protowire.Number, v []byte) {
			switch n {
			case fKeyValueKey:
				key = string(v)
			case fKeyValueValue:
				val = decodeAnyValue(v)
			}
		})
		if val.Type() != attribute.INVALID {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(key), Value: val})
		}
	})
	return kvs
}

// decodeAnyValue decodes the body of an AnyValue (appendAnyValue).
func decodeAnyValue(b []byte) attribute.Value {
	var v attribute.Value
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return attribute.Value{}
		}
		b = b[n:]
		switch {
		case num == fAnyString && typ == protowire.BytesType:
			s, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return attribute.Value{}
			}
			v, b = attribute.StringValue(string(s)), b[n:]
		case (num == fAnyInt || num == fAnyBool) && typ == protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return attribute.Value{}
			}
			v, b = attribute.Int64Value(int64(x)), b[n:]
			if num == fAnyBool {
				v = attribute.BoolValue(protowire.DecodeBool(x))
			}
		case num == fAnyDouble && typ == protowire.Fixed64Type:
			x, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return attribute.Value{}
			}
			v, b = attribute.Float64Value(math.Float64frombits(x)), b[n:]
		case num == fAnyArray && typ == protowire.BytesType:
			arr, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return attribute.Value{}
			}
			var strs []string
			eachBytes(arr, func(_ protowire.Number, e []byte) { strs = append(strs, decodeAnyValue(e).AsString()) })
			v, b = attribute.StringSliceValue(strs), b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return attribute.Value{}
			}
			b = b[n:]
		}
	}
	return v
}

// eachBytes calls fn with the number and bytes of each length-delimited
// field of message b, skipping other fields, until b ends or is malformed.
func eachBytes(b []byte, fn func(protowire.Number, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return
		}
		fn(num, v)
		b = b[n:]
	}
}
