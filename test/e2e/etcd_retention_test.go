package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const retainedEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: kept
spec:
  external:
    hostname: kcp.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
      backup:
        schedule: "* * * * *"
        retention: 2
        store:
          volume: {}
`

// TestSnapshotRetentionAndVerification: a managed etcd (a real member) backed up every minute
// to a volume store that keeps two snapshots. Once three have been taken, the store (the
// agent's claim, a directory here) holds exactly the newest two and status.etcd.snapshots lists
// exactly them. Then one of them is corrupted in the store, the member and its volume are lost,
// and the RootShard names it to restore: the agent's hash check refuses it, EtcdRestored is
// False with SnapshotCorrupt, and no StatefulSet is created.
func TestSnapshotRetentionAndVerification(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "etcd-retention")
	members := givenManagedEtcd(t, ns, "kept", retainedEtcdSetup)
	agent := runRealizedAgent(t, ns, "kept", members)
	dir, ok := agent.Claims["kept-etcd-snapshots"]
	require.True(t, ok, "the agent mounts its snapshot claim: %v", agent.Claims)

	// Every snapshot status has listed: the schedule has taken three once it names three.
	seen := map[string]bool{}
	var listed []string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status := etcdStatusOf(t, ns, "kept")
		listed = nil
		for _, s := range status.Snapshots {
			assert.False(c, s.OnDemand, "%s is a scheduled snapshot", s.Name)
			seen[s.Name] = true
			listed = append(listed, s.Name)
		}
		assert.GreaterOrEqual(c, len(seen), 3, "the schedule has taken three snapshots (status listed %v)", listed)
	}, 5*time.Minute, 2*time.Second)
	assert.Len(t, listed, 2, "status lists the two snapshots the store keeps")
	assert.ElementsMatch(t, listed, storedSnapshots(t, dir), "the store keeps exactly what status lists")

	// The newest kept snapshot is corrupted in the store: a byte in its middle flipped.
	corrupted := listed[0]
	file := filepath.Join(dir, corrupted)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data[len(data)/2] ^= 0xff
	require.NoError(t, os.WriteFile(file, data, 0o600))

	// The RootShard names the corrupted snapshot, and the member and its volume are lost.
	loseEtcdAndRestore(t, ns, "kept", members, corrupted)

	waitForReason(t, ns, "rootshard/kept", "EtcdRestored", "False", "SnapshotCorrupt")
	_, err = stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), "kept-etcd", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "nothing starts from a corrupt snapshot: the StatefulSet is not created (%v)", err)
	message := kubectl(t, "get", "rootshard/kept", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="EtcdRestored")].message}`)
	assert.Contains(t, message, corrupted, "the condition names the snapshot")
}

// storedSnapshots are the snapshots a volume store's directory holds (its files but the
// partial ones being written, which start with a dot).
func storedSnapshots(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
