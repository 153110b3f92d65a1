package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRootShardStatusFollowsReferencesAndShards(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "pki-refs")
	givenRootShard(t, ns, withSpec(`  cache:
    ref:
      name: cache
`), until())
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "rootshard", "root", "-n", ns,
			"-o", `jsonpath={.status.conditions[?(@.type=="ReferenceValid")].reason}`)
		return out == "CacheServerNotFound"
	}, 3*time.Minute, time.Second, "a missing CacheServer is reported")

	givenCacheServer(t, ns, until())
	waitFor(t, ns, "rootshard/root", "ReferenceValid")

	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: shard-1
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd:2379"]}
`))
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.shards[*].name}")
		return out == "shard-1"
	}, 3*time.Minute, time.Second, "the Shard is listed in status.shards")
}
