package engineapi

import (
	"context"
	"fmt"
	"net/url"
)

// Summary is one entry of GET /containers/json: the fields Gantry reads.
type Summary struct {
	ID    string   `json:"Id"`
	Names []string `json:"Names"`
	// State is created, running, paused, restarting, removing, exited or
	// dead; Status the human text, such as "Up 3 minutes (healthy)".
	State           string `json:"State"`
	Status          string `json:"Status"`
	Ports           []Port `json:"Ports"`
	NetworkSettings struct {
		Networks map[string]*Endpoint `json:"Networks"`
	} `json:"NetworkSettings"`
}

// Port is a port of a list entry.
type Port struct {
	IP          string `json:"IP,omitempty"`
	PrivatePort uint16 `json:"PrivatePort"`
	PublicPort  uint16 `json:"PublicPort,omitempty"`
	Type        string `json:"Type"` // tcp, udp, sctp
}

// Endpoint is a container's attachment to one network.
type Endpoint struct {
	IPAddress         string `json:"IPAddress"`
	GlobalIPv6Address string `json:"GlobalIPv6Address"`
}

// Container is GET /containers/{id}/json: the fields Gantry reads.
type Container struct {
	ID         string `json:"Id"`
	Name       string `json:"Name"` // with a leading "/"
	State      State  `json:"State"`
	HostConfig struct {
		// NetworkMode is bridge, host, none, container:<id> or a network.
		NetworkMode string `json:"NetworkMode"`
	} `json:"HostConfig"`
	Config struct {
		Labels map[string]string `json:"Labels"`
		// ExposedPorts are keyed "<port>/<proto>", such as "80/tcp".
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	} `json:"Config"`
	NetworkSettings NetworkSettings `json:"NetworkSettings"`
}

// State is a container's state.
type State struct {
	Status string  `json:"Status"`
	Health *Health `json:"Health"` // nil without a health check
}

// Health is a container's health check state.
type Health struct {
	Status string          `json:"Status"` // starting, healthy, unhealthy
	Log    []*HealthResult `json:"Log"`    // the last checks, oldest first
}

// HealthResult is one health check.
type HealthResult struct {
	ExitCode int    `json:"ExitCode"`
	Output   string `json:"Output"`
}

// NetworkSettings are a container's ports and networks.
type NetworkSettings struct {
	// Ports are keyed "<port>/<proto>"; a nil value is an unpublished port.
	Ports    map[string][]PortBinding `json:"Ports"`
	Networks map[string]*Endpoint     `json:"Networks"`
}

// PortBinding is a published host address of a port.
type PortBinding struct {
	HostIP   string `json:"HostIp"`
	HostPort string `json:"HostPort"`
}

// ContainerList calls GET /containers/json?all=1: every container, running
// or not. It fails on an entry over maxObjectBytes, a list over
// maxListBytes or maxContainers entries, and on JSON that is not a list of
// containers.
func (c *Client) ContainerList(ctx context.Context) ([]Summary, error) {
	const call = "list containers"
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	path, err := c.apiPath(ctx, "/containers/json")
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call, path, url.Values{"all": {"1"}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	d := newDecoder(resp.Body, maxListBytes)
	var out []Summary
	err = d.list(func() error {
		if len(out) == maxContainers {
			return fmt.Errorf("over %d containers", maxContainers)
		}
		var s Summary
		if err := d.next(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, c.fail(call, path, bodyErr(ctx, err))
	}
	return out, nil
}

// ContainerInspect calls GET /containers/{id}/json. A container that does
// not exist is an error matching ErrNotFound; a response over
// maxObjectBytes is an error.
func (c *Client) ContainerInspect(ctx context.Context, id string) (Container, error) {
	call := "inspect container " + id
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	path, err := c.apiPath(ctx, "/containers/"+url.PathEscape(id)+"/json")
	if err != nil {
		return Container{}, err
	}
	resp, err := c.do(ctx, call, path, nil)
	if err != nil {
		return Container{}, err
	}
	defer resp.Body.Close()
	var out Container
	if err := newDecoder(resp.Body, maxObjectBytes).next(&out); err != nil {
		return Container{}, c.fail(call, path, bodyErr(ctx, err))
	}
	return out, nil
}

// bodyErr is err from reading a response body, or the context's error
// when ctx ended the read (the transport closes the connection then, and
// the read says only "use of closed network connection").
func bodyErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("reading the answer: %w", context.Cause(ctx))
	}
	return err
}
