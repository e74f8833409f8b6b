package dataplane

import "sync"

// copyBufferSize is the size of the proxies' copy buffers (bytes).
const copyBufferSize = 32 << 10

// bufferPool is the httputil.BufferPool shared by every proxy of a Pool:
// 32 KiB copy buffers recycled through a sync.Pool of array pointers, so
// neither Get nor Put allocates once warm.
type bufferPool struct{ p sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{p: sync.Pool{New: func() any { return new([copyBufferSize]byte) }}}
}

// Get returns a buffer of copyBufferSize bytes.
func (bp *bufferPool) Get() []byte { return bp.p.Get().(*[copyBufferSize]byte)[:] }

// Put recycles b; buffers not from Get are dropped.
func (bp *bufferPool) Put(b []byte) {
	if cap(b) != copyBufferSize {
		return
	}
	bp.p.Put((*[copyBufferSize]byte)(b[:copyBufferSize]))
}
