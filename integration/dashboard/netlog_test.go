package dashboard

import (
	"context"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// netLog records, from the browser's Network events (CDP), the requests of
// a tab that failed without a response: the module requests whose loss
// left the dashboard inert in CI (no resource-timing entry, so pageState's
// resources cannot show them), with the browser's reason (errorText, e.g.
// net::ERR_CONNECTION_RESET). Requests the browser cancelled itself (a
// navigation abandons the page's fetches in flight) are not failures.
type netLog struct {
	mu     sync.Mutex
	urls   map[network.RequestID]string // requests sent, until they end
	failed []string                     // "URL errorText", in order
}

type netLogKey struct{}

// recordNetwork makes ctx's tab record its failed requests (netLog), and
// returns ctx carrying the record for failedRequests and pageState.
func recordNetwork(ctx context.Context) (context.Context, error) {
	l := &netLog{urls: map[network.RequestID]string{}}
	if err := chromedp.Listen(ctx, l.event); err != nil {
		return nil, fmt.Errorf("listen to the browser's network events: %w", err)
	}
	return context.WithValue(ctx, netLogKey{}, l), nil
}

// event runs on chromedp's event loop: it only files the event.
func (l *netLog) event(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.urls[ev.RequestID] = ev.Request.URL
	case *network.EventLoadingFinished:
		delete(l.urls, ev.RequestID)
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			l.failed = append(l.failed, l.urls[ev.RequestID]+" "+ev.ErrorText)
		}
		delete(l.urls, ev.RequestID)
	}
}

// failedRequests returns the requests of ctx's tab that failed so far
// ("URL errorText"); nil when ctx records none (see recordNetwork).
func failedRequests(ctx context.Context) []string {
	l, _ := ctx.Value(netLogKey{}).(*netLog)
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.failed...)
}
