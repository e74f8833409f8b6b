package observe

// Tee returns an Observer that passes every call to each non-nil observer
// in obs, in order. It returns nil when obs holds none, so callers can pass
// the result straight to the dataplane (which accepts a nil Observer).
func Tee(obs ...Observer) Observer {
	var list multi
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

type multi []Observer

func (m multi) Request(ev *RequestEvent) {
	for _, o := range m {
		o.Request(ev)
	}
}

func (m multi) Conn(entryPoint, protocol string, delta int) {
	for _, o := range m {
		o.Conn(entryPoint, protocol, delta)
	}
}
