package dashboard

import (
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
