// Package exepages gives back the page-table entries of the running
// executable's read-only mappings (its code, read-only data and pclntab)
// once start-up is over.
//
// A Go binary's start touches code and data spread over the whole file:
// the package initialisers of every linked library (configured or not),
// the runtime's itab table (one type descriptor per entry) and the stack
// maps of every frame it grows. The kernel maps them in blocks (read-around
// and fault-around), so a 51 MB gantry kept about 30 MiB of its file mapped
// after start while idling needs about a third of it. Release drops those
// entries (madvise MADV_DONTNEED on the private, non-writable mappings of
// the executable): the pages stay in the page cache, and a page used again
// is mapped again at the next access (a minor fault, no read from disk
// while it is cached). Nothing is written to these mappings, so dropping
// them loses nothing; a process being traced is left alone (a debugger's
// breakpoints are private copies of code pages).
package exepages
