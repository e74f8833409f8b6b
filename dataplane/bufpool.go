package dataplane

import "sync"

// bufferPool is the httputil.BufferPool shared by every proxy of a Pool:
// 32 KiB copy buffers recycled through a sync.Pool.
type bufferPool struct{ p sync.Pool }

const copyBufferSize = 32 << 10

func newBufferPool() *bufferPool {
	return &bufferPool{p: sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}}
}

// Get returns a buffer of copyBufferSize bytes.
func (bp *bufferPool) Get() []byte { return *bp.p.Get().(*[]byte) }

// Put recycles b.
func (bp *bufferPool) Put(b []byte) {
	if cap(b) != copyBufferSize {
		return
	}
	b = b[:copyBufferSize]
	bp.p.Put(&b)
}
