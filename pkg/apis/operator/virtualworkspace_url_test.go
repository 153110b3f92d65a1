package operator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func TestVirtualWorkspaceURL(t *testing.T) {
	tests := []struct {
		name                          string
		clusterDomain, hostname, want string
		port                          int32
	}{
		{name: "external hostname and port", hostname: "vw.example.com", port: 8443, want: "https://vw.example.com:8443"},
		{name: "external hostname, default port", hostname: "vw.example.com", want: "https://vw.example.com:6443"},
		{name: "no hostname: the Service", clusterDomain: "corp.local", port: 8443,
			want: "https://access-virtual-workspace.team-a.svc.corp.local:6443"},
		{name: "no hostname, default cluster domain", want: "https://access-virtual-workspace.team-a.svc.cluster.local:6443"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, operator.VirtualWorkspaceURL("access", "team-a", tc.clusterDomain, tc.hostname, tc.port))
		})
	}
}

// TestVirtualWorkspaceURLDefaultsAreTheStoredOnes: the helper's fallbacks for an object that
// was never defaulted are the defaults v1alpha1 stores.
func TestVirtualWorkspaceURLDefaultsAreTheStoredOnes(t *testing.T) {
	assert.Equal(t,
		operator.VirtualWorkspaceURL("vw", "ns", operatorv1alpha1.DefaultClusterDomain, "", 0),
		operator.VirtualWorkspaceURL("vw", "ns", "", "", 0))
	assert.Equal(t,
		operator.VirtualWorkspaceURL("vw", "ns", "", "vw.example.com", operatorv1alpha1.DefaultExternalPort),
		operator.VirtualWorkspaceURL("vw", "ns", "", "vw.example.com", 0))
}
