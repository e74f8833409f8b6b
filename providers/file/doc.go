// Package file is the file provider: dynamic configuration from one file
// (filename) or a directory tree (directory) of YAML, TOML or JSON files,
// each rendered as a Go text/template first, compatible with Traefik's
// file provider (https://doc.traefik.io/traefik/providers/file/).
//
// Unlike Traefik, which rejects the whole update, an object (router,
// service, middleware, serversTransport) that does not decode (an unknown
// field, a wrong type) is left out alone with a Problem naming it and the
// field's line, and the rest of its file is used (isolate). A file that
// fails to render or parse affects only that file: its last good content
// stays in effect, and a Problem names the file, line and (where the parser
// gives it) column (case 022). A file already broken at start contributes
// nothing while the valid files load; references to its objects then fail
// per router, and fixing the file applies it (issue 6020). A file truncated
// to empty (an editor about to write) also keeps its last good content,
// with a warning; deleting the file removes its objects. Objects failing
// config.Validate are left out one by one. Objects defined twice are taken
// from the first file in name order; later definitions are skipped with a
// warning (case 020).
//
// Watching uses fsnotify on every directory of the tree and on the parent
// of the configured path, so in-place writes, editors' rename-over saves,
// Kubernetes ConfigMap "..data" symlink swaps and a directory deleted and
// recreated are all seen. Hidden entries (".app.yml.swp", Kubernetes'
// "..data" and "..<timestamp>" directories) are skipped, and so are files
// without a .yml, .yaml, .toml or .json extension. A configured path that
// is missing keeps the last configuration read from it (at boot: nothing
// is published, so the configuration restored from the store stays).
// Reload (SIGHUP) forces a re-read. At startup a missing or unreadable path
// publishes only its Problem with Snapshot.KeepConfig, so the configuration
// restored from the store stays and /api/problems says why. Events are read
// once a burst has been quiet for 25ms (150ms when it removed something), so "rm -rf" is seen as the directory
// gone (routes kept), not as its files deleted one by one. Dangling symbolic
// links and link loops are problems naming the file (case 021).
//
// Limits (issue 15): maxFileSize, maxValueSize and templateTimeout (see
// static.File), and a template's steps and printf widths (template.go). A
// file over one is a problem naming it; its last good content stays.
//
// Run owns its caller's goroutine plus fsnotify's. Decoding happens in
// builder.build, which touches no file system, so most tests target it.
package file
