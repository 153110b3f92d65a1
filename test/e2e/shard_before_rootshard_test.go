package e2e

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestShardBeforeItsRootShard creates a Shard first: it says its RootShard is missing, then
// heals once the RootShard exists, and runs with certificates from the RootShard's CAs.
func TestShardBeforeItsRootShard(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "shard-first")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, shardManifest))
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "shard", "shard-1", "-n", ns,
			"-o", `jsonpath={.status.conditions[?(@.type=="ReferenceValid")].status}/{.status.conditions[?(@.type=="ReferenceValid")].reason}`)
		return out == "False/RootShardNotFound"
	}, time.Minute, time.Second, "a Shard without its RootShard says so")
	// Events are written asynchronously.
	assert.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "events", "-n", ns, "--field-selector", "involvedObject.name=shard-1", "-o", "jsonpath={.items[*].reason}")
		return strings.Contains(out, "RootShardNotFound")
	}, 30*time.Second, time.Second, "an Event says what blocks the Shard")

	givenRootShard(t, ns, until())
	waitFor(t, ns, "shard/shard-1", "ReferenceValid")
	waitFor(t, ns, "shard/shard-1", "Available")
	assert.Equal(t, "Running", kubectl(t, "get", "shard", "shard-1", "-n", ns, "-o", "jsonpath={.status.phase}"))
	// The RootShard's status is its own reconcile's, written apart from the Shard's.
	assert.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.shards[*].name}")
		return out == "shard-1"
	}, 30*time.Second, time.Second, "the RootShard lists its Shard")

	args := nonEmptyLines(kubectl(t, "get", "deployment", "shard-1-shard-kcp", "-n", ns, "-o", `jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
	assert.NotContains(t, args, "--external-hostname=kcp.example.com", "kcp v0.32 has no use for it")
	for _, want := range []string{"--shard-name=shard-1",
		"--root-shard-kubeconfig-file=/etc/kcp/client-kubeconfig/kubeconfig", "--cache-kubeconfig=/etc/kcp/client-kubeconfig/kubeconfig",
		"--shard-base-url=https://shard-1-shard-kcp." + ns + ".svc.cluster.local:6443", "--etcd-servers=https://etcd-shard:2379"} {
		assert.Contains(t, args, want)
	}

	root, serverCA, clientCA := secretCert(t, ns, "root-ca"), secretCert(t, ns, "root-server-ca"), secretCert(t, ns, "root-client-ca")
	verifyChain(t, secretCert(t, ns, "shard-1-server"), serverCA, root, x509.ExtKeyUsageServerAuth)
	client := secretCert(t, ns, "shard-1-client")
	verifyChain(t, client, clientCA, root, x509.ExtKeyUsageClientAuth)
	assert.Equal(t, "shard-shard-1", client.Subject.CommonName)
	assert.Equal(t, []string{"system:masters"}, client.Subject.Organization)

	// No kcp runs here, so there is no kcp Shard object to deregister: the annotation an admin
	// would use lets the Shard go without it.
	kubectl(t, "annotate", "shard", "shard-1", "-n", ns, operatorv1alpha1.AnnotationSkipKcpCleanup+"=true")
	kubectl(t, "delete", "shard", "shard-1", "-n", ns, "--timeout=2m")
	for _, kind := range []string{"deployments", "services", "certificates", "secrets"} {
		out := kubectl(t, "get", kind, "-n", ns, "-l", "operator.kcp.io/shard=shard-1", "-o", "name")
		assert.Empty(t, strings.TrimSpace(out), "%s of the shard left behind", kind)
	}
	assert.NotEmpty(t, kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", "name"), "the RootShard's objects stay")
}
