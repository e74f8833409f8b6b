package dataplane

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// clientHello returns the first TLS record a Go client sends for sni.
func clientHello(t *testing.T, sni string) []byte {
	t.Helper()
	cli, srv := net.Pipe()
	defer srv.Close()
	go func() {
		_ = tls.Client(cli, &tls.Config{ServerName: sni, NextProtos: []string{"x-proto"}}).Handshake()
		cli.Close()
	}()
	_ = srv.SetDeadline(time.Now().Add(5 * time.Second))
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(srv, hdr); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(srv, body); err != nil {
		t.Fatal(err)
	}
	return append(hdr, body...)
}

// split re-frames one handshake record into records of at most size
// payload bytes (what some clients and middleboxes send; RFC 8446 §5.1
// allows a handshake message over several records).
func split(rec []byte, size int) []byte {
	var out []byte
	for p := range slices.Chunk(rec[5:], size) {
		out = append(out, rec[0], rec[1], rec[2], byte(len(p)>>8), byte(len(p)))
		out = append(out, p...)
	}
	return out
}

// A ClientHello split over several TLS records is routed by its SNI and
// ALPN (reassembled as Go's TLS server and Traefik v3 do), every peeked
// byte stays for the backend, and one larger than the peek buffer gives no
// SNI instead of an error or a hang.
func TestHelloSplitOverRecords(t *testing.T) {
	rec := clientHello(t, "Split.Test")
	for _, size := range []int{len(rec), 100, 7, 1} {
		in := split(rec, size)
		br := bufio.NewReaderSize(bytes.NewReader(in), maxHelloRecord)
		var cd tcpmux.ConnData
		isTLS, err := peekHello(br, &cd)
		if err != nil || !isTLS || cd.ServerName != "split.test" || !slices.Equal(cd.ALPN, []string{"x-proto"}) {
			t.Errorf("records of %d bytes: tls %v err %v sni %q alpn %q, want split.test and x-proto", size, isTLS, err, cd.ServerName, cd.ALPN)
		}
		if rest, _ := io.ReadAll(br); !bytes.Equal(rest, in) {
			t.Errorf("records of %d bytes: peeking consumed bytes", size)
		}
	}
	// A hello announcing 60000 bytes, sent in 1-byte records: it outgrows
	// the peek buffer; routing goes on without SNI.
	msg := append([]byte{1, 0, 0xea, 0x60}, make([]byte, 4000)...)
	long := split(append([]byte{0x16, 3, 1, 0, 0}, msg...), 1)
	var cd tcpmux.ConnData
	isTLS, err := peekHello(bufio.NewReaderSize(bytes.NewReader(long), maxHelloRecord), &cd)
	if len(long) <= maxHelloRecord || err != nil || !isTLS || cd.ServerName != "" {
		t.Errorf("over-long hello (%d bytes): tls %v err %v sni %q, want TLS without SNI", len(long), isTLS, err, cd.ServerName)
	}
}
