package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// rootShardBaseURL is where the other cluster reaches the root shard of cluster 1.
const rootShardBaseURL = "https://root.cluster-1.example.com:6443"

// TestReferencesAcrossClusters: a second host cluster, with its own kcp-setups server, runs
// a Shard of a RootShard of the first, from a copy of its shard-join Secret made with the
// one-liner of docs/references.md. The Shard runs, and the RootShard's kcp (its stand-in) accepts its
// client certificate. When the RootShard's front-proxy-client CA rotates, a copy made again
// carries the new CA: credentials minted in the second cluster are signed by it and
// accepted, and those minted before are refused.
func TestReferencesAcrossClusters(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "refs-cluster-1")
	givenRootShard(t, ns, withSpec("  shardBaseURL: "+rootShardBaseURL+"\n"), until("CertificatesReady"))

	second := startSecondCluster(t)
	remote := "refs-cluster-2"
	kubectlOn(t, second, "create", "namespace", remote)
	copyReference(t, stack, ns, "root-shard-join", second, remote)
	assert.Equal(t, rootShardBaseURL, string(decodeSecretOn(t, second, remote, "root-shard-join", "root-shard-url")))
	kubectlOn(t, second, "apply", "-n", remote, "-f", writeManifest(t, joinedShardManifest("shard-1", "root-shard-join")))
	waitForOn(t, second, remote, "shard/shard-1", "ReferenceValid")
	waitForOn(t, second, remote, "shard/shard-1", "Available")
	assert.Equal(t, "Running", kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", "jsonpath={.status.phase}"))
	assertReachesRootShard(t, second, remote, "shard-1", rootShardBaseURL)
	assertCertificatesChainTo(t, second, remote, secretCert(t, ns, "root-ca"))

	// The RootShard's kcp accepts the Shard's client certificate from the other cluster.
	standIn, err := stack.StartStandIn(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	shardClient := clientKubeconfig(t, standIn.URL, decodeSecret(t, ns, "root-merged-ca-bundle", "tls.crt"),
		decodeSecretOn(t, second, remote, "shard-1-client", "tls.crt"), decodeSecretOn(t, second, remote, "shard-1-client", "tls.key"))
	out, err := whoami(t, standIn, shardClient)
	require.NoError(t, err, out)
	assert.Equal(t, `shard-shard-1 ["system:masters","system:authenticated"]`, out)

	// A credential minted from the Shard in cluster 2 works in cluster 1.
	before := mintCarol(t, second, remote, "shards", "shard-1")
	out, err = whoami(t, standIn, before.path)
	require.NoError(t, err, out)
	assert.Equal(t, carolWhoami, out)
	oldCA := secretCert(t, ns, "root-front-proxy-client-ca")
	require.NoError(t, before.cert.CheckSignatureFrom(oldCA), "signed by the RootShard's front-proxy-client CA")
	standIn.Stop()

	// The front-proxy-client CA rotates in cluster 1: cert-manager issues a new one in place
	// of the deleted Secret, and the RootShard's merged client CA and shard-join follow.
	kubectl(t, "delete", "secret", "root-front-proxy-client-ca", "-n", ns)
	var newCA *x509.Certificate
	require.Eventually(t, func() bool {
		certs := certsIn(readSecret(t, stack, ns, "root-front-proxy-client-ca", "tls.crt"))
		if len(certs) == 0 || certs[0].Equal(oldCA) {
			return false
		}
		newCA = certs[0]
		return true
	}, 3*time.Minute, time.Second, "cert-manager issues a new front-proxy-client CA")
	require.Eventually(t, func() bool {
		joined := certsIn(readSecret(t, stack, ns, "root-shard-join", "front-proxy-client-ca.crt"))
		merged := certsIn(readSecret(t, stack, ns, "root-merged-client-ca", "tls.crt"))
		return len(joined) > 0 && joined[0].Equal(newCA) && slices.ContainsFunc(merged, newCA.Equal) && !slices.ContainsFunc(merged, oldCA.Equal)
	}, 3*time.Minute, time.Second, "the shard-join Secret and the merged client CA carry the new CA, and not the old one")

	// The copy does not follow by itself: cluster 2 still mints with the old CA.
	stale := mintCarol(t, second, remote, "shards", "shard-1")
	assert.NoError(t, stale.cert.CheckSignatureFrom(oldCA), "until it is copied again, cluster 2 signs with the CA it received")

	copyReference(t, stack, ns, "root-shard-join", second, remote)
	var after mintedCredential
	require.Eventually(t, func() bool {
		after = mintCarol(t, second, remote, "shards", "shard-1")
		return after.cert.CheckSignatureFrom(newCA) == nil
	}, 3*time.Minute, time.Second, "a credential minted after the copy is signed by the new CA")

	rotated := rootShardPKI(t, ns, "root")
	rotated.Name = ns + "-rotated"
	standIn, err = stack.StartStandIn(t.Context(), rotated)
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)
	out, err = whoami(t, standIn, after.path)
	require.NoError(t, err, out)
	assert.Equal(t, carolWhoami, out, "the new credential is accepted")
	for what, c := range map[string]mintedCredential{"before the rotation": before, "before the copy": stale} {
		out, err = whoami(t, standIn, c.path)
		assert.Error(t, err, "a credential minted %s is refused", what)
		assert.Contains(t, out, "Unauthorized", what)
	}
	waitForOn(t, second, remote, "shard/shard-1", "Available")
}

// readSecret is one key of a Secret on the stack s, or nil while it cannot be read: for the
// conditions that Eventually polls, which must not fail the test.
func readSecret(t *testing.T, s *framework.Stack, ns, name, key string) []byte {
	out, err := s.Kubectl(t.Context(), "get", "secret", name, "-n", ns, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", "\\.")+"}")
	if err != nil {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(out)
	if err != nil {
		return nil
	}
	return data
}

// startSecondCluster starts a second host cluster, independent of the suite's stack (its own
// etcd, kube-apiserver, controllers, kwok and cert-manager) with its own kcp-setups server,
// for the calling test alone. When the test ends, its own leak scan runs, its logs are
// dumped if the test failed and the scan found nothing, and it stops.
func startSecondCluster(t *testing.T) *framework.Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	second, err := framework.Start(ctx, framework.Options{RecordForLeakScan: true, Progress: func(format string, args ...any) {
		t.Logf("cluster 2: "+format, args...)
	}})
	require.NoError(t, err, "starting a second cluster")
	t.Cleanup(func() {
		defer second.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		report, err := second.ScanForLeaks(ctx)
		if err != nil {
			t.Errorf("the leak scan of cluster 2 failed: %v", err)
			return
		}
		var buf bytes.Buffer
		report.Write(&buf)
		t.Logf("cluster 2: %s", buf.String())
		if len(report.Findings) > 0 {
			t.Errorf("cluster 2: private keys leaked where they must not be; its logs are not dumped: they may hold keys")
			return
		}
		if t.Failed() {
			second.DumpLogs(os.Stderr, 60)
		}
	})
	return second
}
