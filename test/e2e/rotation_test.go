package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestLeavesFollowARotatedCA rotates a RootShard's server CA the way an admin does, by
// deleting its Secret: cert-manager issues a new CA with a new key, and the server has the
// serving certificates it had signed, the RootShard's and its Shard's, issued again, so that
// the merged server CA bundle, which now carries only the new CA, verifies them.
// cert-manager alone would leave the old leaves in place until they expire.
func TestLeavesFollowARotatedCA(t *testing.T) {
	ns := namespace(t, "rotation")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("root", "kcp.example.com", 6443)+"---\n"+shardManifest))
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
	waitFor(t, ns, "shard/shard-1", "CertificatesReady")
	shardServing := func() framework.StandInOptions {
		return framework.StandInOptions{ServingCert: readSecret(t, stack, ns, "shard-1-server", "tls.crt"),
			ServerCA: readSecret(t, stack, ns, "root-merged-ca-bundle", "tls.crt"), ServerName: "localhost"}
	}
	require.NoError(t, shardServing().VerifyServing())
	shardBefore := shardServing().ServingCert
	before := rootShardPKI(t, ns, "root")
	oldCA := secretCert(t, ns, "root-server-ca")

	kubectl(t, "delete", "secret", "root-server-ca", "-n", ns)
	require.Eventually(t, func() bool {
		certs := certsIn(readSecret(t, stack, ns, "root-server-ca", "tls.crt"))
		return len(certs) > 0 && !certs[0].Equal(oldCA)
	}, 3*time.Minute, time.Second, "cert-manager issues a new server CA")

	// rootShardPKI waits until the serving certificate and the bundle agree again.
	after := rootShardPKI(t, ns, "root")
	assert.NotEqual(t, before.ServingCert, after.ServingCert, "the serving certificate was issued again")
	assert.NotEqual(t, before.ServerCA, after.ServerCA, "the bundle carries the new CA")
	var err error
	if !assert.Eventually(t, func() bool {
		err = shardServing().VerifyServing()
		return err == nil
	}, 2*time.Minute, time.Second, "the Shard's serving certificate is issued again") {
		t.Logf("the Shard's serving certificate: %v", err)
	}
	assert.NotEqual(t, shardBefore, shardServing().ServingCert)
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
	waitFor(t, ns, "rootshard/root", "Available")
	waitFor(t, ns, "shard/shard-1", "CertificatesReady")
}
