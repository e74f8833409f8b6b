//go:build !linux

package upstream

import "io"

// relay copies src to dst until src's end of file (nil) or an error.
func relay(dst io.Writer, src io.Reader) error {
	_, err := io.Copy(dst, src)
	return err
}
