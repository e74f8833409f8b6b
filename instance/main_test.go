package instance

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the instance starts is joined by Shutdown.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
