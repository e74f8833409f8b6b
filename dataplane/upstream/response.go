package upstream

import (
	"net/http"
	"time"
)

// relayResponse sends the final response hd to w: its fields (copyFields), then,
// within the body phase's deadline, the status and the body in its
// framing, then the trailers. res.Sent is set once the head is written;
// an error before it is the deadline's, after it the body's.
func (h *Host) relayResponse(pc *pconn, w http.ResponseWriter, hd *head, limit int, start time.Time, res *Result) error {
	hdr := w.Header()
	copyFields(hdr, pc, hd.framing == bodyChunked)
	// The body phase's reads each wait at most BodyReadTimeout; a body
	// already in the buffer needs no more reads (nor the deadline changes).
	if hd.framing != bodyNone && !(hd.framing == bodyLength && hd.length <= int64(pc.w-pc.r)) {
		if err := pc.idlePhase(h.c.o.BodyReadTimeout, start.Add(res.TTFB)); err != nil {
			return err
		}
	}
	w.WriteHeader(hd.status)
	res.Sent = true
	br := &pc.br
	// dirty: the head is written but not flushed. The first body read that
	// would wait flushes it, so a head whose body comes later (an event
	// stream, long polling, a stalled backend) reaches the client at once,
	// while a body already here leaves with its head in one write.
	*br = bodyReader{pc: pc, w: w, framing: hd.framing, limit: limit, big: br.big, small: br.small, dirty: true}
	if hd.framing == bodyLength {
		br.left = hd.length
	}
	err := br.relay()
	br.w = nil
	if err != nil {
		return err
	}
	if hd.framing == bodyChunked {
		copyTrailers(hdr, pc)
	}
	return nil
}

// readFinalHead reads response heads into hd until a final one (or 101),
// relaying the informational ones to w (at most 16). A 100 Continue
// answers the client's own Expect (stops expectTimer and lets bw send the
// body); for a request without one it is dropped. *ttfb is set at the
// first head. A failed read is returned as is; too many 1xx is a
// *ProtocolError.
func readFinalHead(pc *pconn, w http.ResponseWriter, r *http.Request, hd *head, limit int, bw *bodyWriter, expectTimer *time.Timer, start time.Time, ttfb *time.Duration) error {
	for informational := 0; ; {
		if err := pc.readHead(hd, r.Method, limit); err != nil {
			return err
		}
		if *ttfb == 0 {
			*ttfb = time.Since(start)
		}
		if hd.status >= 200 || hd.status == http.StatusSwitchingProtocols {
			return nil
		}
		if informational++; informational > 16 {
			return errTooMany1xx
		}
		if hd.status == http.StatusContinue {
			if expectTimer != nil {
				expectTimer.Stop()
				// The client's own Expect is answered before its body is read.
				relay1xx(w, pc, hd.status)
				pc.stampFirst()
				bw.release(true)
			}
			continue
		}
		relay1xx(w, pc, hd.status)
	}
}

// copyFields copies the response's fields to hdr, but hop-by-hop ones and
// those its Connection names (a chunked response's Trailer announcement
// is kept, for the client's chunked response).
func copyFields(hdr http.Header, pc *pconn, chunked bool) {
	for _, f := range pc.fields {
		if hopByHop(f.name, pc.conn) {
			if f.name == "Trailer" && chunked {
				hdr["Trailer"] = append(hdr["Trailer"], f.value)
			}
			continue
		}
		if old := hdr[f.name]; old != nil {
			hdr[f.name] = append(old, f.value)
		} else {
			hdr[f.name] = f.vals
		}
	}
}

// copyTrailers copies the trailer fields of a chunked response to hdr as
// http.TrailerPrefix fields, but hop-by-hop ones and Content-Length.
func copyTrailers(hdr http.Header, pc *pconn) {
	for _, f := range pc.trailers {
		if !hopByHop(f.name, nil) && f.name != "Content-Length" {
			k := http.TrailerPrefix + f.name
			hdr[k] = append(hdr[k], f.value)
		}
	}
}

// relay1xx sends an informational response with its fields to the client
// and takes them back out of the header map (RFC 9110 §15.2; RFC 8297).
func relay1xx(w http.ResponseWriter, pc *pconn, code int) {
	hdr := w.Header()
	var added []string
	for _, f := range pc.fields {
		if hopByHop(f.name, pc.conn) {
			continue
		}
		if _, ok := hdr[f.name]; !ok {
			added = append(added, f.name)
		}
		hdr[f.name] = append(hdr[f.name], f.value)
	}
	w.WriteHeader(code)
	for _, k := range added {
		delete(hdr, k)
	}
	for _, f := range pc.fields {
		if vs := hdr[f.name]; len(vs) > 0 && vs[len(vs)-1] == f.value {
			hdr[f.name] = vs[:len(vs)-1]
			if len(hdr[f.name]) == 0 {
				delete(hdr, f.name)
			}
		}
	}
}
