package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// managedEtcdRootShard is the minimal RootShard with the managed etcd defaulting gives one
// without endpoints.
func managedEtcdRootShard() *operatorv1alpha1.RootShard {
	rs := minimalRootShard()
	size := resource.MustParse("8Gi")
	rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{
		Replicas: ptr.To[int32](3), Storage: &operatorv1alpha1.EtcdStorage{VolumeSize: &size}}}
	return rs
}

func TestManagedEtcdGoldens(t *testing.T) {
	rs := managedEtcdRootShard()
	e := Etcd(rs)
	require.NotNil(t, e)

	p := BuildPKI(rs)
	objects := []any{}
	for _, c := range p.Certificates {
		objects = append(objects, c)
	}
	golden.Assert(t, "pki-etcd-managed", objects...)

	ss := e.StatefulSet(workload.SecretsHash(map[string]string{e.ServerSecret(): "1", e.PeerSecret(): "2"}))
	golden.Assert(t, "workloads-etcd-managed", Server(rs).Deployment(nil, "hash"), ss, e.Service(), e.PeerService(), e.DisruptionBudget())
}

func TestManagedEtcdNamesAndKcp(t *testing.T) {
	assert.Nil(t, Etcd(minimalRootShard()), "a RootShard with endpoints has no managed etcd")

	rs := managedEtcdRootShard()
	e := Etcd(rs)
	assert.Equal(t, "root-etcd", e.Name())
	assert.Equal(t, "root-etcd-peers", e.PeerServiceName())
	assert.Equal(t, []string{
		"https://root-etcd-0.root-etcd-peers.team-a.svc.cluster.local:2379",
		"https://root-etcd-1.root-etcd-peers.team-a.svc.cluster.local:2379",
		"https://root-etcd-2.root-etcd-peers.team-a.svc.cluster.local:2379",
	}, e.ClientURLs())

	k := Server(rs)
	args := k.Args()
	assert.Contains(t, args, "--etcd-servers="+
		"https://root-etcd-0.root-etcd-peers.team-a.svc.cluster.local:2379,"+
		"https://root-etcd-1.root-etcd-peers.team-a.svc.cluster.local:2379,"+
		"https://root-etcd-2.root-etcd-peers.team-a.svc.cluster.local:2379")
	assert.Contains(t, args, "--etcd-certfile=/etc/etcd/tls/tls.crt")
	assert.Contains(t, args, "--etcd-keyfile=/etc/etcd/tls/tls.key")
	assert.Contains(t, args, "--etcd-cafile=/etc/etcd/tls/ca.crt")
	assert.Contains(t, k.MountedSecrets(), "root-etcd-client", "a renewed client certificate rolls kcp")
	assert.Contains(t, workload.Secrets(k.Mounts(), workload.WaitedSecret), "root-etcd-client", "kcp waits for its client certificate")
	assert.NotContains(t, k.MountedSecrets(), "root-etcd-server", "kcp mounts no etcd member's certificate")

	issuers := map[string]string{}
	for _, c := range BuildPKI(rs).Certificates {
		issuers[*c.Name] = *c.Spec.IssuerRef.Name
	}
	assert.Equal(t, "root-etcd-client-ca", issuers["root-etcd-server"])
	assert.Equal(t, "root-etcd-peer-ca", issuers["root-etcd-peer"])
	assert.Equal(t, "root-etcd-client-ca", issuers["root-etcd-client"])
}

// An external etcd gets no leaves, but its RootShard keeps the etcd CAs: its Shards may have
// a managed etcd.
func TestExternalEtcdHasNoEtcdLeaves(t *testing.T) {
	names := map[string]bool{}
	for _, c := range BuildPKI(minimalRootShard()).Certificates {
		names[*c.Name] = true
	}
	assert.True(t, names["root-etcd-client-ca"])
	assert.True(t, names["root-etcd-peer-ca"])
	assert.False(t, names["root-etcd-server"])
	assert.False(t, names["root-etcd-peer"])
	assert.False(t, names["root-etcd-client"])
}
