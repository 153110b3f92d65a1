package e2e

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/test/framework"
)

// namedShardManifest is the Shard name of the RootShard rootShard.
func namedShardManifest(name, rootShard string) string {
	return strings.NewReplacer("NAME", name, "ROOT", rootShard).Replace(`apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: NAME
spec:
  rootShard: {ref: {name: ROOT}}
  etcd: {endpoints: ["https://etcd-NAME:2379"]}
`)
}

// kubeconfigIntoManifest is the Kubeconfig name toward the RootShard rootShard, into the Secret
// secret.
func kubeconfigIntoManifest(name, rootShard, secret string) string {
	return strings.NewReplacer("NAME", name, "ROOT", rootShard, "SECRET", secret).Replace(`apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: NAME
spec:
  target: {rootShardRef: {name: ROOT}}
  username: alice
  groups: [team-a]
  validity: 24h
  secretRef: {name: SECRET}
`)
}

// TestNamesCannotCollide: for each pair of objects whose derived host names meet, in one
// namespace, the second is refused at admission with a 422 that names the first and the
// name; a pair of near names that do not meet both run. Then, with the admitted objects
// Running side by side, nothing of theirs is written to the host for 30 s.
func TestNamesCannotCollide(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "names")
	apply := func(t *testing.T, manifest string) (string, error) {
		t.Helper()
		return stack.Kubectl(t.Context(), "apply", "-n", ns, "-f", writeManifest(t, manifest))
	}
	running := []string{}

	for _, tc := range []struct {
		name          string
		first, second string
		// firstObject is the first as kind/name; want are in the refusal of the second,
		// empty when the second is admitted too (secondObject).
		firstObject, secondObject string
		want                      []string
	}{
		{"Shard and RootShard of one name", framework.RootShardManifest("alpha", "alpha.example.com", 6443), namedShardManifest("alpha", "alpha"),
			"rootshard/alpha", "", []string{`The Shard "alpha" is invalid`, "metadata.name", "RootShard/alpha", `"alpha-`}},
		{"RootShard kcp-pki", "", framework.RootShardManifest("kcp-pki", "pki.example.com", 6443),
			"", "", []string{`The RootShard "kcp-pki" is invalid`, "metadata.name", "reserved", pki.BootstrapCA}},
		{"a Shard named as kcp registers the root shard", "", namedShardManifest("root", "alpha"),
			"", "", []string{`The Shard "root" is invalid`, "metadata.name", "reserved", "kcp registers the root shard"}},
		{"RootShard x and x-etcd", framework.RootShardManifest("x", "x.example.com", 6443), framework.RootShardManifest("x-etcd", "x-etcd.example.com", 6443),
			"rootshard/x", "", []string{`The RootShard "x-etcd" is invalid`, "RootShard/x", `"x-etcd-client-ca"`}},
		{"RootShard x and xetcd", "", framework.RootShardManifest("xetcd", "xetcd.example.com", 6443),
			"", "rootshard/xetcd", nil},
		{"Kubeconfig ca and RootShard kubeconfig", framework.RootShardManifest("kubeconfig", "kubeconfig.example.com", 6443), kubeconfigIntoManifest("ca", "kubeconfig", "ca-kubeconfig"),
			"rootshard/kubeconfig", "", []string{`The Kubeconfig "ca" is invalid`, "RootShard/kubeconfig", `"kubeconfig-ca"`}},
		{"a Kubeconfig into the join Secret of a RootShard", "", kubeconfigIntoManifest("admin", "alpha", "alpha-shard-join"),
			"", "", []string{`The Kubeconfig "admin" is invalid`, "spec.secretRef.name", "RootShard/alpha", `"alpha-shard-join"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.first != "" {
				out, err := apply(t, tc.first)
				require.NoError(t, err, out)
				running = append(running, tc.firstObject)
			}
			out, err := apply(t, tc.second)
			if tc.want == nil {
				require.NoError(t, err, out)
				running = append(running, tc.secondObject)
				return
			}
			require.Error(t, err, "the second object is refused: %s", out)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
		})
	}

	// A Shard joined through a copy of a join Secret derives the names of the copies of the
	// RootShard's CAs it writes, <shard>-shard-root-*: a RootShard of that name is refused.
	// (The Shard is not named y, which YAML reads as true.)
	t.Run("a joined Shard and its shard-root name", func(t *testing.T) {
		require.Eventually(t, func() bool {
			_, err := stack.Kubectl(t.Context(), "get", "secret", "alpha-shard-join", "-n", ns, "-o", "name")
			return err == nil
		}, 3*time.Minute, time.Second, "RootShard alpha writes its shard-join Secret")
		out, err := apply(t, joinedShardManifest("joined", "alpha-shard-join"))
		require.NoError(t, err, out)
		running = append(running, "shard/joined")
		out, err = apply(t, framework.RootShardManifest("joined-shard-root", "joined.example.com", 6443))
		require.Error(t, err, "RootShard joined-shard-root is refused: %s", out)
		for _, w := range []string{`The RootShard "joined-shard-root" is invalid`, "Shard/joined", `"joined-shard-root-`} {
			assert.Contains(t, out, w)
		}
	})

	for _, refused := range []string{"shard/alpha", "rootshard/kcp-pki", "rootshard/x-etcd", "kubeconfig/ca", "kubeconfig/admin", "rootshard/joined-shard-root"} {
		out, err := stack.Kubectl(t.Context(), "get", refused, "-n", ns, "-o", "name")
		require.Error(t, err, "%s is not stored: %s", refused, out)
		assert.Contains(t, out, "NotFound")
	}

	// Side by side, each admitted object runs, and once their host objects have settled
	// nothing of theirs is written to the host for 30 s: no two controllers fight over an
	// object. (Their reconciles never settle here: each RootShard polls its kcp, which
	// kwok's pods do not run, every few seconds; a poll writes nothing.)
	for _, o := range running {
		waitFor(t, ns, o, "Available")
		assert.Equal(t, "Running", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
	selector := pki.LabelManagedBy + "=" + pki.ManagedBy
	objects := ownedObjects(t, ns, selector)
	require.Eventually(t, func() bool {
		now := ownedObjects(t, ns, selector)
		settled := maps.EqualFunc(now, objects, func(a, b owned) bool { return a == b })
		objects = now
		return settled
	}, 2*time.Minute, 5*time.Second, "the host objects settle")
	require.NotEmpty(t, objects)
	before := ownReconciles(t, ns)
	time.Sleep(30 * time.Second)
	grew := delta(before, ownReconciles(t, ns))
	t.Logf("reconciles of the objects in the 30 s: %v", grew)
	assert.Zero(t, grew["error"], "failed reconciles in 30 s of steady state: %v", grew)
	assert.Equal(t, objects, ownedObjects(t, ns, selector), "no host object was written in 30 s of steady state")
	for _, o := range running {
		assert.Equal(t, "Running", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
}
