package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestControllersAreLeaderElected checks that the controllers hold the Lease.
func TestControllersAreLeaderElected(t *testing.T) {
	parallel(t, alone)
	holder := kubectl(t, "get", "lease", "kcp-setups-controllers", "-n", "kube-system", "-o", "jsonpath={.spec.holderIdentity}")
	assert.NotEmpty(t, holder)
}
