package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeavesFollowARotatedCA rotates a RootShard's server CA the way an admin does, by
// deleting its Secret: cert-manager issues a new CA with a new key, and the server has the
// serving certificate it had signed issued again, so that the merged server CA bundle, which
// now carries only the new CA, verifies it. cert-manager alone would leave the old leaf in
// place until it expires.
func TestLeavesFollowARotatedCA(t *testing.T) {
	ns := namespace(t, "rotation")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("root", "kcp.example.com", 6443)))
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
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
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
	waitFor(t, ns, "rootshard/root", "Available")
}
