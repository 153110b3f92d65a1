package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backedUpRootShard is a RootShard with a managed etcd of one member whose snapshots go to
// the backup agent's volume, on demand only.
const backedUpRootShard = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: backed
spec:
  external:
    hostname: kcp.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
      backup: {}
`

// snapshotRequest is the body of the backup subresource.
const snapshotRequest = `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"EtcdSnapshotRequest"}`

// TestBackupIsHeldToItsRole is issue 42's backup subresource through kubectl and real RBAC:
// eve, bound to kcp-setups-edit, may not ask for a snapshot (403 naming rootshards/backup);
// bob, bound to kcp-setups-backup, gets 201 and the snapshot's name, recorded as
// status.etcd.pendingSnapshot; sam, who may patch rootshards/status, writes a
// pendingSnapshot through the status: 403 at status.etcd.pendingSnapshot, nothing stored.
func TestBackupIsHeldToItsRole(t *testing.T) {
	parallel(t, sharedRoles)
	ns := namespace(t, "tenant-backup")
	eve := editor(t, ns, "eve")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, statusWriterRole))
	kubectl(t, "create", "rolebinding", "status-writer", "-n", ns, "--role=rootshards-status-writer", "--user=sam")
	kubectl(t, "create", "rolebinding", "backup", "-n", ns, "--clusterrole=kcp-setups-backup", "--user=bob")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, backedUpRootShard))
	url := "/apis/operator.kcp.io/v1alpha1/namespaces/" + ns + "/rootshards/backed/backup"

	bob, err := stack.UserKubeconfig("bob")
	require.NoError(t, err)
	sam, err := stack.UserKubeconfig("sam")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		out, _, _ := stack.KubectlWith(t.Context(), bob, "auth", "can-i", "create", "rootshards.operator.kcp.io/backed", "--subresource=backup", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the bindings reach the authorizer")

	stderr, err := eve("create", "--raw", url, "-f", writeManifest(t, snapshotRequest))
	require.Error(t, err)
	assert.Contains(t, stderr, "403", "kcp-setups-edit asks for no snapshot")
	pending := func() string {
		return kubectl(t, "get", "rootshard/backed", "-n", ns, "-o", "jsonpath={.status.etcd.pendingSnapshot.name}")
	}
	assert.Empty(t, pending(), "nothing asked for")

	out, stderr, err := stack.KubectlWith(t.Context(), bob, "create", "--raw", url, "-f", writeManifest(t, snapshotRequest))
	require.NoError(t, err, stderr)
	assert.Regexp(t, `"snapshot":"backed-[0-9]{8}-[0-9]{6}"`, out)
	name := pending()
	assert.Regexp(t, `^backed-[0-9]{8}-[0-9]{6}$`, name)
	assert.Contains(t, out, `"snapshot":"`+name+`"`)

	_, stderr, err = stack.KubectlWith(t.Context(), sam, "patch", "rootshard/backed", "-n", ns, "--subresource=status", "--type=merge", "-p",
		`{"status":{"etcd":{"pendingSnapshot":{"name":"backed-20200101-000000","requestTime":"2020-01-01T00:00:00Z"}}}}`)
	require.Error(t, err)
	assert.Contains(t, stderr, "Forbidden")
	assert.Contains(t, stderr, `status.etcd.pendingSnapshot: user "sam" may not change it`)
	assert.Contains(t, stderr, "create on rootshards/backup")
	assert.Equal(t, name, pending(), "nothing stored")
}
