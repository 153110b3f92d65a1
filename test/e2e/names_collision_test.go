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

// TestNamesCannotCollide: a Shard named as the RootShard beside it derives the RootShard's
// host names, and kubectl shows the 422 that names the RootShard and the name; nothing is
// stored. Near names that do not meet (RootShards x and xetcd, and a Shard joined through a
// copy of alpha's join Secret beside alpha) are admitted, and with them Running side by side,
// nothing of theirs is written to the host for 30 s. Every pair that meets, or nearly does, is
// the integration tier's TestDerivedNamesCannotCollide.
func TestNamesCannotCollide(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "names")
	apply := func(t *testing.T, manifest string) (string, error) {
		t.Helper()
		return stack.Kubectl(t.Context(), "apply", "-n", ns, "-f", writeManifest(t, manifest))
	}
	admit := func(t *testing.T, manifest string) {
		t.Helper()
		out, err := apply(t, manifest)
		require.NoError(t, err, out)
	}

	admit(t, framework.RootShardManifest("alpha", "alpha.example.com", 6443))
	out, err := apply(t, namedShardManifest("alpha", "alpha"))
	require.Error(t, err, "the Shard is refused: %s", out)
	for _, w := range []string{`The Shard "alpha" is invalid`, "metadata.name", "RootShard/alpha", `"alpha-`} {
		assert.Contains(t, out, w)
	}
	out, err = stack.Kubectl(t.Context(), "get", "shard/alpha", "-n", ns, "-o", "name")
	require.Error(t, err, "shard/alpha is not stored: %s", out)
	assert.Contains(t, out, "NotFound")

	admit(t, framework.RootShardManifest("x", "x.example.com", 6443))
	admit(t, framework.RootShardManifest("xetcd", "xetcd.example.com", 6443))
	// A Shard joined through a copy of a join Secret derives the names of the copies of the
	// RootShard's CAs it writes, <shard>-shard-root-*. (The Shard is not named y, which YAML
	// reads as true.)
	require.Eventually(t, func() bool {
		_, err := stack.Kubectl(t.Context(), "get", "secret", "alpha-shard-join", "-n", ns, "-o", "name")
		return err == nil
	}, 3*time.Minute, time.Second, "RootShard alpha writes its shard-join Secret")
	admit(t, joinedShardManifest("joined", "alpha-shard-join"))
	running := []string{"rootshard/alpha", "rootshard/x", "rootshard/xetcd", "shard/joined"}

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
