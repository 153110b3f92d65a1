package e2e

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"slices"
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
	parallel(t, alone)
	ns := namespace(t, "rotation")
	givenRootShard(t, ns, withObjects(shardManifest), until("CertificatesReady"))
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
	var newCA *x509.Certificate
	require.Eventually(t, func() bool {
		certs := certsIn(readSecret(t, stack, ns, "root-server-ca", "tls.crt"))
		if len(certs) == 0 || certs[0].Equal(oldCA) {
			return false
		}
		newCA = certs[0]
		return true
	}, 3*time.Minute, time.Second, "cert-manager issues a new server CA")
	// Until the server has written the new CA into the merged bundle, the old serving
	// certificate and the old bundle still agree.
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(certsIn(readSecret(t, stack, ns, "root-merged-ca-bundle", "tls.crt")), newCA.Equal)
	}, 3*time.Minute, time.Second, "the merged bundle carries the new CA")

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

// renewCertificate asks cert-manager to renew the Certificate name now, as `cmctl renew`
// does: an Issuing condition on its status.
func renewCertificate(t *testing.T, ns, name string) {
	t.Helper()
	kubectl(t, "patch", "certificate", name, "-n", ns, "--subresource=status", "--type=json", "-p",
		`[{"op":"add","path":"/status/conditions/-","value":{"type":"Issuing","status":"True","reason":"ManuallyTriggered","message":"renewed by the test"}}]`)
}

// keyDigest is the SHA-256 of the key in the Secret name: keys are compared by it, so that
// none ever reaches the test's output.
func keyDigest(t *testing.T, ns, name string) string {
	t.Helper()
	sum := sha256.Sum256(readSecret(t, stack, ns, name, "tls.key"))
	return hex.EncodeToString(sum[:])
}

// certPool is a pool of every certificate of PEM data.
func certPool(t *testing.T, data []byte) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(data))
	return pool
}

// TestARenewedCABreaksNoChain: cert-manager renews a RootShard's CAs (forced, as `cmctl
// renew` does). Each keeps its key and subject, so the serving certificate verifies with the
// bundle clients held before the renewal and with the one written after, and a credential
// minted before the renewal still chains to the client CAs.
func TestARenewedCABreaksNoChain(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "renewal")
	givenRootShard(t, ns, until("CertificatesReady"))
	before := rootShardPKI(t, ns, "root")
	var minted kubeconfigResponse
	var stderr string
	var err error
	require.Eventually(t, func() bool {
		minted, stderr, err = mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
		return err == nil
	}, time.Minute, time.Second, "mint: %s", stderr)
	credential, _ := clientCertOf(t, []byte(minted.Status.Kubeconfig))

	cas := []string{"root-ca", "root-server-ca", "root-client-ca", "root-front-proxy-client-ca"}
	keys, certs := map[string]string{}, map[string]*x509.Certificate{}
	for _, ca := range cas {
		keys[ca] = keyDigest(t, ns, ca)
		certs[ca] = secretCert(t, ns, ca)
		renewCertificate(t, ns, ca)
	}
	for _, ca := range cas {
		require.Eventually(t, func() bool {
			c := certsIn(readSecret(t, stack, ns, ca, "tls.crt"))
			return len(c) > 0 && c[0].SerialNumber.Cmp(certs[ca].SerialNumber) != 0
		}, 2*time.Minute, time.Second, "cert-manager renews %s", ca)
		renewed := secretCert(t, ns, ca)
		assert.Equal(t, keys[ca], keyDigest(t, ns, ca), "%s keeps its key", ca)
		assert.Equal(t, certs[ca].RawSubject, renewed.RawSubject, "%s keeps its subject", ca)
		assert.Equal(t, certs[ca].SubjectKeyId, renewed.SubjectKeyId, "%s keeps its key identifier", ca)
	}

	after := rootShardPKI(t, ns, "root")
	oldClients := before
	oldClients.ServingCert = after.ServingCert
	assert.NoError(t, oldClients.VerifyServing(), "a client holding the bundle of before the renewal trusts the shard")
	renewedServerCA := secretCert(t, ns, "root-server-ca")
	serving := certsIn(after.ServingCert)[0]
	roots := certPool(t, readSecret(t, stack, ns, "root-ca", "tls.crt"))
	inters := x509.NewCertPool()
	inters.AddCert(renewedServerCA)
	_, err = serving.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err, "the serving certificate chains to the renewed CAs")
	_, err = credential.Verify(x509.VerifyOptions{Roots: certPool(t, after.ClientCA), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err, "the credential minted before the renewal chains to the client CAs after it")
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
}
