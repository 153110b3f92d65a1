package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestExcludeMembers: --exclude takes the kinds as kubectl names them.
func TestExcludeMembers(t *testing.T) {
	got, err := members([]string{"frontproxy/edge", "FrontProxies.operator.kcp.io/b", "shard/s", "shards.operator.kcp.io/t", "virtualworkspace/vw"})
	require.NoError(t, err)
	assert.Equal(t, []operatorv1alpha1.CARotationMember{{Kind: "FrontProxy", Name: "edge"}, {Kind: "FrontProxy", Name: "b"},
		{Kind: "Shard", Name: "s"}, {Kind: "Shard", Name: "t"}, {Kind: "VirtualWorkspace", Name: "vw"}}, got)
	for _, bad := range []string{"edge", "frontproxy/", "pod/p", "/x"} {
		_, err := members([]string{bad})
		assert.Error(t, err, bad)
	}
}
