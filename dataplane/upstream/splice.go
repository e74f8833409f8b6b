package upstream

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// upgrade completes a WebSocket upgrade the backend accepted (101): it
// checks the backend switched to the protocol asked for, hijacks the
// client's connection, writes the 101 head to it, and splices both
// directions until both have ended, passing a half-close on (EOF from one
// side becomes CloseWrite on the other). The error is nil when both
// directions ended with EOF.
func (h *Host) upgrade(pc *pconn, w http.ResponseWriter, hd *head, res Result) Result {
	proto := ""
	for _, f := range pc.fields {
		if f.name == "Upgrade" {
			proto = f.value
		}
	}
	if !strings.EqualFold(proto, "websocket") {
		res.Err = protoErr("backend switched to %q, not the websocket asked for", clip(proto))
		return res
	}
	// From here the connection belongs to the tunnel: no context watch,
	// no deadline.
	if !pc.end() {
		res.Err = errors.New("upstream: request cancelled during the upgrade")
		return res
	}
	_ = pc.c.SetReadDeadline(time.Time{})
	cc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		res.Err = err
		return res
	}
	defer cc.Close()
	_ = cc.SetDeadline(time.Time{})
	res.Sent = true
	// The head and the backend's first frames go out in one write (the
	// hijacked writer may be tiny).
	b := make([]byte, 0, 512+pc.w-pc.r)
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\n"...)
	for _, f := range pc.fields {
		if f.name != "Upgrade" && f.name != "Connection" && hopByHop(f.name, pc.conn) {
			continue
		}
		b = append(b, f.name...)
		b = append(b, ": "...)
		b = append(b, f.value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, pc.buf[pc.r:pc.w]...)
	pc.r = pc.w
	if err := brw.Writer.Flush(); err != nil {
		res.Err = &ClientWriteError{err}
		return res
	}
	if _, err := cc.Write(b); err != nil {
		res.Err = &ClientWriteError{err}
		return res
	}
	// What the client sent after its upgrade request and the server
	// already read goes first.
	pending, _ := brw.Reader.Peek(brw.Reader.Buffered())
	var wg sync.WaitGroup
	var upErr error
	wg.Go(func() {
		upErr = pipe(pc.c, cc, cc, pending)
	})
	downErr := pipe(cc, pc.c, pc.c, nil)
	wg.Wait()
	res.Err = errors.Join(upErr, downErr)
	return res
}

// pipe writes pending, then copies src to dst until EOF (relay), then
// half-closes dst. On an error both connections are closed so the other
// direction ends too (from is the source connection).
func pipe(dst net.Conn, src io.Reader, from net.Conn, pending []byte) error {
	var err error
	if len(pending) > 0 {
		_, err = dst.Write(pending)
	}
	if err == nil {
		err = relay(dst, src)
	}
	if err == nil {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			if cerr := cw.CloseWrite(); cerr == nil {
				return nil
			}
		}
	}
	dst.Close()
	from.Close()
	if err != nil && errors.Is(err, net.ErrClosed) {
		return nil // the other direction ended the tunnel
	}
	return err
}
