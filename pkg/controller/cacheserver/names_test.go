package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
)

// TestDerivedNamesCoverWhatIsWritten: every host object a realized CacheServer has is a name
// hostnames.CacheServer derives, which the registry refuses to let another object of the
// namespace derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*operatorv1alpha1.CacheServer)
	}{
		{"from the namespace bootstrap", func(*operatorv1alpha1.CacheServer) {}},
		{"from an issuer of the users", func(cs *operatorv1alpha1.CacheServer) {
			cs.Spec.Certificates = &operatorv1alpha1.Certificates{IssuerRef: &operatorv1alpha1.ObjectReference{Name: "corp", Kind: "ClusterIssuer"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := cacheServer()
			tc.mutate(cs)
			f := newFixture(t, cs)
			before := f.Host.HostNames("team-a")
			for range 4 {
				cs = f.sync(t)
			}
			require.NotEmpty(t, f.Host.Caches["deployments"].List(), "the CacheServer is realized whole")
			f.Host.AssertDerived(t, "team-a", before, hostnames.CacheServer(cs))
		})
	}
}
