package observe

import "time"

// secondText is the RFC 3339 text of one second in one zone offset, kept
// so that the times of a line, and of the next lines, that fall in it are
// not formatted again: a line has three (StartLocal, StartUTC, and time,
// the request's end), nearly always in the same second.
type secondText struct {
	ok    bool     // a second is kept
	sec   int64    // its Unix seconds
	off   int      // its zone offset, seconds east of UTC
	date  [19]byte // its date and time, "2006-01-02T15:04:05"
	zone  [6]byte  // its zone, "Z" or "+05:30"
	zonen int
}

// append appends t as time.RFC3339Nano (nanos) or time.RFC3339 text
// does, in t's location. A time of the kept second and offset is the kept
// date and time, its fraction (RFC3339Nano's: up to nine digits, trailing
// zeros dropped, none for a whole second) and the kept zone; any other is
// formatted, and kept when its year has four digits (so its date and time
// are the first 19 bytes).
func (c *secondText) append(b []byte, t time.Time, nanos bool) []byte {
	_, off := t.Zone()
	sec := t.Unix()
	if c.ok && sec == c.sec && off == c.off {
		b = append(b, c.date[:]...)
		if nanos {
			b = appendFraction(b, t.Nanosecond())
		}
		return append(b, c.zone[:c.zonen]...)
	}
	start := len(b)
	if nanos {
		b = t.AppendFormat(b, time.RFC3339Nano)
	} else {
		b = t.AppendFormat(b, time.RFC3339)
	}
	text := b[start:]
	c.ok = false
	if len(text) <= len(c.date) || text[4] != '-' {
		return b // a year of other than four digits: not kept
	}
	zone := len(c.date)
	if text[zone] == '.' {
		for zone++; text[zone] >= '0' && text[zone] <= '9'; zone++ {
		}
	}
	if len(text)-zone > len(c.zone) {
		return b
	}
	c.ok, c.sec, c.off = true, sec, off
	copy(c.date[:], text)
	c.zonen = copy(c.zone[:], text[zone:])
	return b
}

// appendFraction appends ns (0-999 999 999) as RFC3339Nano's fraction:
// a dot and nine digits without their trailing zeros; nothing for 0.
func appendFraction(b []byte, ns int) []byte {
	if ns == 0 {
		return b
	}
	var d [10]byte
	d[0] = '.'
	for i := 9; i > 0; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 10
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}
