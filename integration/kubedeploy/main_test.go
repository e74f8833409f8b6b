package kubedeploy

import (
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.MainNetns(m) }
