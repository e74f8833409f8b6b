// Package web holds Gantry's dashboard UI: plain HTML, CSS and modern
// JavaScript with no build step and no external resources (no CDN, no web
// fonts), embedded into the binary so it works offline. The dashboard
// package serves FS() under /dashboard/; the UI talks to ../api/ (REST) and
// ../api/ws (WebSocket) relative to its own URL, so it works under any
// api.basePath.
package web

import (
	"embed"
	"io/fs"
)

//go:embed ui
var files embed.FS

// FS returns the UI's files, rooted so that "index.html" is at the top.
func FS() fs.FS {
	sub, err := fs.Sub(files, "ui")
	if err != nil { // "ui" is embedded above; Sub cannot fail for it
		panic(err)
	}
	return sub
}
