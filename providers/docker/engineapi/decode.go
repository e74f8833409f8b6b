package engineapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// errTooLarge is returned by a limitReader at its limit.
var errTooLarge = errors.New("too large")

// limitReader reads r until total bytes, and at most window bytes past
// the decoder's position (the start of the value being decoded).
type limitReader struct {
	r          io.Reader
	read       int64
	limit      int64 // the current read limit
	total      int64 // total limit, 0: none
	overWindow bool  // the last refusal was the window's, not the total's
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.read >= l.limit {
		return 0, errTooLarge
	}
	if rest := l.limit - l.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}

// decoder decodes a stream of JSON values, each of at most maxObjectBytes
// (leading white space and separators included), the whole stream at most
// total bytes (0: unbounded).
type decoder struct {
	lr    *limitReader
	dec   *json.Decoder
	total int64
}

func newDecoder(r io.Reader, total int64) *decoder {
	lr := &limitReader{r: r}
	return &decoder{lr: lr, dec: json.NewDecoder(lr), total: total}
}

// window allows reading one more value (or token) of maxObjectBytes.
func (d *decoder) window() {
	d.lr.limit, d.lr.overWindow = d.dec.InputOffset()+maxObjectBytes, true
	if d.total > 0 && d.total < d.lr.limit {
		d.lr.limit, d.lr.overWindow = d.total, false
	}
}

// next decodes the next value into v. Errors: io.EOF at the end of the
// stream, io.ErrUnexpectedEOF inside a value, an error naming the limit
// for a value or stream over it, or the JSON error.
func (d *decoder) next(v any) error {
	d.window()
	return d.explain(d.dec.Decode(v))
}

// list calls each for every element of a JSON array (null is an empty
// one); each decodes the element with next.
func (d *decoder) list(each func() error) error {
	d.window()
	t, err := d.dec.Token()
	if err != nil {
		return d.explain(err)
	}
	if t == nil {
		return nil
	}
	if t != json.Delim('[') {
		return fmt.Errorf("want a JSON list, got %v", t)
	}
	for d.dec.More() {
		if err := each(); err != nil {
			return err
		}
		d.window()
	}
	d.window()
	if _, err := d.dec.Token(); err != nil {
		return d.explain(err)
	}
	return nil
}

func (d *decoder) explain(err error) error {
	switch {
	case !errors.Is(err, errTooLarge):
		return err
	case d.lr.overWindow:
		return fmt.Errorf("a value over %d bytes", maxObjectBytes)
	}
	return fmt.Errorf("a response over %d bytes", d.total)
}
