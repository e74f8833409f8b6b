// Package statusrange parses the status-code lists of the errors and
// retry middlewares and of the failover service: "404", "500-599", and
// comma lists of them ("500,502,505-599"), every code within 100-599
// (Traefik's errors middleware `status`, retry `status`, failover
// `errors.status`; https://doc.traefik.io/traefik/reference/routing-configuration/http/middlewares/errorpages/).
package statusrange

import (
	"fmt"
	"strconv"
	"strings"
)

// Range is an inclusive range of status codes, Lo <= Hi.
type Range struct{ Lo, Hi int }

// Contains reports whether code is in r.
func (r Range) Contains(code int) bool { return code >= r.Lo && code <= r.Hi }

// Parse parses one entry: a code ("404") or a range ("500-599"), with
// optional spaces around each number. The error quotes s.
func Parse(s string) (Range, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	a, err := strconv.Atoi(strings.TrimSpace(lo))
	if err != nil {
		return Range{}, fmt.Errorf("%q is not a status or status range", s)
	}
	b := a
	if isRange {
		if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
			return Range{}, fmt.Errorf("%q is not a status or status range", s)
		}
	}
	if a < 100 || b > 599 || a > b {
		return Range{}, fmt.Errorf("%q is not within 100-599 in increasing order", s)
	}
	return Range{a, b}, nil
}

// List is a list of ranges; a code is in it when any range holds it.
type List []Range

// Contains reports whether code is in one of l's ranges.
func (l List) Contains(code int) bool {
	for _, r := range l {
		if r.Contains(code) {
			return true
		}
	}
	return false
}

// EntryError is a bad entry of a list given to ParseList: Index is its
// position in the list (as written in the configuration).
type EntryError struct {
	Index int
	Err   error
}

func (e *EntryError) Error() string { return fmt.Sprintf("[%d]: %v", e.Index, e.Err) }
func (e *EntryError) Unwrap() error { return e.Err }

// ParseList parses entries, each a code, a range or a comma list of
// them, into one List. A bad entry is an *EntryError naming its index.
func ParseList(entries []string) (List, error) {
	var l List
	for i, s := range entries {
		for part := range strings.SplitSeq(s, ",") {
			r, err := Parse(part)
			if err != nil {
				return nil, &EntryError{Index: i, Err: err}
			}
			l = append(l, r)
		}
	}
	return l, nil
}
