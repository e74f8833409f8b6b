package balance

import "net/http"

// statusHandler answers every request with one status and an empty body;
// it is always available, so a weighted parent sends it its share.
type statusHandler int

// StatusHandler returns the child of a weighted service that answers
// status itself (config.WRRService.Status: the Gateway API's 500 for the
// share of an invalid backendRef).
func StatusHandler(status int) http.Handler { return statusHandler(status) }

func (s statusHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(int(s))
}

// Available implements Availabler: a status child always answers.
func (statusHandler) Available() bool { return true }
