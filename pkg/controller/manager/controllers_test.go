package manager

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// TestEveryKindHasAController: the manager sets up one controller for every kind described
// (kinds.All), and no other.
func TestEveryKindHasAController(t *testing.T) {
	var registered, set []string
	for _, k := range kinds.All {
		registered = append(registered, k.KindName())
	}
	for _, c := range controllers {
		set = append(set, c.Kind)
		assert.NotEmpty(t, c.Title, "%s is named in messages", c.Kind)
	}
	assert.ElementsMatch(t, registered, set)
	assert.NotEmpty(t, registered)
}
