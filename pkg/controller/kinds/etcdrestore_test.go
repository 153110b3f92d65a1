package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
)

// TestRestoreSource: restore.from names a RootShard, or a Shard of a RootShard of the
// namespace, whose managed etcd has a backup (an agent that serves its store); anything else
// says why it cannot serve.
func TestRestoreSource(t *testing.T) {
	managed := func(backup bool) operatorv1alpha1.CommonShardSpec {
		spec := operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}}
		if backup {
			spec.Etcd.Managed.Backup = &operatorv1alpha1.EtcdBackup{}
		}
		return spec
	}
	x := controller.Indexes{}
	for _, k := range All {
		x[k.KindName()] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	for _, o := range []controller.Object{
		&operatorv1alpha1.RootShard{ObjectMeta: inTeamA("root"), Spec: operatorv1alpha1.RootShardSpec{CommonShardSpec: managed(true)}},
		&operatorv1alpha1.RootShard{ObjectMeta: inTeamA("plain"), Spec: operatorv1alpha1.RootShardSpec{CommonShardSpec: managed(false)}},
		&operatorv1alpha1.RootShard{ObjectMeta: inTeamA("external"), Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}},
		&operatorv1alpha1.Shard{ObjectMeta: inTeamA("beta"), Spec: operatorv1alpha1.ShardSpec{
			RootShard: operatorv1alpha1.RootShardConfig{Reference: ref("root")}, CommonShardSpec: managed(true)}},
		&operatorv1alpha1.Shard{ObjectMeta: inTeamA("joined"), Spec: operatorv1alpha1.ShardSpec{
			RootShard: operatorv1alpha1.RootShardConfig{SecretRef: ref("root-shard-join")}, CommonShardSpec: managed(true)}},
		&operatorv1alpha1.Shard{ObjectMeta: inTeamA("orphan"), Spec: operatorv1alpha1.ShardSpec{
			RootShard: operatorv1alpha1.RootShardConfig{Reference: ref("gone")}, CommonShardSpec: managed(true)}},
	} {
		require.NoError(t, x[All.KindOf(o)].Add(o))
	}
	for _, tc := range []struct {
		kind, name            string
		base, rootShard, says string
	}{
		{kind: "RootShard", name: "root", base: "root", rootShard: "root"},
		{kind: "Shard", name: "beta", base: "beta-shard", rootShard: "root"},
		{kind: "RootShard", name: "absent", says: `RootShard "absent"`},
		{kind: "RootShard", name: "plain", says: "no spec.etcd.managed.backup"},
		{kind: "RootShard", name: "external", says: "external etcd"},
		{kind: "Shard", name: "joined", says: "through a copy or a link"},
		{kind: "Shard", name: "orphan", says: `the RootShard of the restore's source Shard "orphan"`},
	} {
		t.Run(tc.kind+" "+tc.name, func(t *testing.T) {
			e, err := RestoreSource(x, "team-a", &operatorv1alpha1.EtcdRestoreSource{Kind: tc.kind, Name: tc.name})
			if tc.says != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.says)
				assert.Nil(t, e)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.base, e.Base)
			assert.Equal(t, tc.rootShard, e.RootShard, "whose etcd client CA issues the restore client certificate")
			assert.Equal(t, "https://"+tc.base+"-etcd-backup.team-a.svc.cluster.local:2390", e.AgentURL())
		})
	}
}
