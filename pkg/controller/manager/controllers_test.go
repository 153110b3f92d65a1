package manager

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// TestEveryKindHasAController: the manager sets up one controller for every kind of the
// registry, in its order, and no other.
func TestEveryKindHasAController(t *testing.T) {
	var registered, set []string
	for _, k := range kinds.All {
		registered = append(registered, k.KindName())
	}
	for _, c := range controllers {
		set = append(set, c.kind)
		assert.NotEmpty(t, c.title, "%s is named in messages", c.kind)
	}
	assert.Equal(t, registered, set)
}
