package engineapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
)

// Event is one message of the event stream: the fields Gantry reads.
type Event struct {
	Type   string `json:"Type"`   // container, network, image, ...
	Action string `json:"Action"` // start, die, health_status: healthy, ...
}

// Events calls GET /events?filters={"type":{...}} for the given types and
// streams its messages until ctx is done or the client is closed. The
// error channel receives at most one error when the stream ends otherwise:
// the engine closed it (wrapping io.EOF), a truncated event
// (io.ErrUnexpectedEOF), an event over maxObjectBytes, or the request's.
// Both channels stay open; stop reading after an error.
func (c *Client) Events(ctx context.Context, types ...string) (<-chan Event, <-chan error) {
	evs, errs := make(chan Event), make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.closing, cancel)
	c.streams.Add(1)
	go func() {
		defer c.streams.Done()
		defer stop()
		defer cancel()
		if err := c.events(ctx, types, evs); err != nil && ctx.Err() == nil {
			errs <- err
		}
	}()
	return evs, errs
}

// events sends the stream's events to evs until ctx is done or an error.
func (c *Client) events(ctx context.Context, types []string, evs chan<- Event) error {
	const call = "events"
	path, err := c.apiPath(ctx, "/events")
	if err != nil {
		return err
	}
	filter := map[string]map[string]bool{"type": {}}
	for _, t := range types {
		filter["type"][t] = true
	}
	f, err := json.Marshal(filter)
	if err != nil {
		return c.fail(call, path, err)
	}
	resp, err := c.do(ctx, call, path, url.Values{"filters": {string(f)}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	d := newDecoder(resp.Body, 0)
	for {
		var ev Event
		if err := d.next(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("stream ended: %w", err)
			}
			return c.fail(call, path, err)
		}
		select {
		case evs <- ev:
		case <-ctx.Done():
			return nil
		}
	}
}
