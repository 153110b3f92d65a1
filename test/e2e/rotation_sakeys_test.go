package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const serviceAccountRotationSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root
spec:
  external: {hostname: kcp.example.com, port: 6443}
  etcd: {endpoints: ["https://etcd.example.com:2379"]}
  auth:
    serviceAccount: {enabled: true}
---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: alpha
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-alpha:2379"]}
  auth:
    serviceAccount: {enabled: true}
`

// signingKey is the private key of a service-account Secret, read in the test alone and
// never printed.
func signingKey(t *testing.T, ns, name string) crypto.Signer {
	t.Helper()
	block, _ := pem.Decode(readSecret(t, stack, ns, name, "tls.key"))
	require.NotNil(t, block, "the Secret %s holds a PEM key", name)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err, "the key of %s is PKCS#8", name)
	signer, ok := key.(crypto.Signer)
	require.True(t, ok, "the key of %s signs", name)
	return signer
}

// token is a JWT signed by key with ES256's digest (the signature in ASN.1, which
// verifiedBy checks with the same encoding): what matters is which public keys accept it.
type token struct{ signed, signature []byte }

func signToken(t *testing.T, key crypto.Signer, subject string) token {
	t.Helper()
	enc := base64.RawURLEncoding
	signed := []byte(enc.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"iss":"kubernetes/serviceaccount","sub":"`+subject+`"}`)))
	digest := sha256.Sum256(signed)
	sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
	require.NoError(t, err)
	return token{signed: signed, signature: sig}
}

// verifiedBy reports whether one of keys accepts tok.
func (tok token) verifiedBy(keys []crypto.PublicKey) bool {
	digest := sha256.Sum256(tok.signed)
	for _, k := range keys {
		if pub, ok := k.(*ecdsa.PublicKey); ok && ecdsa.VerifyASN1(pub, digest[:], tok.signature) {
			return true
		}
	}
	return false
}

// signingSecret is the Secret the Deployment name signs tokens with: the one mounted where
// its --service-account-private-key-file is.
func signingSecret(t *testing.T, ns, name string) string {
	t.Helper()
	d := deployment(t, ns, name)
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if file, ok := strings.CutPrefix(a, "--service-account-private-key-file="); ok {
			return secretAt(&d, path.Dir(file))
		}
	}
	t.Fatalf("%s has no --service-account-private-key-file", name)
	return ""
}

// verifyKeys are the public keys the Deployment name verifies service-account tokens with:
// those of every certificate in the file of each --service-account-key-file, read from the
// Secret mounted there.
func verifyKeys(t *testing.T, ns, name string) []crypto.PublicKey {
	t.Helper()
	d := deployment(t, ns, name)
	var keys []crypto.PublicKey
	for _, file := range keyFileArgs(d) {
		v := volumeAt(t, d.Spec.Template.Spec, path.Dir(file))
		require.NotNil(t, v.Secret, "%s: %s is not from a Secret", name, file)
		out, err := stack.Kubectl(t.Context(), "get", "secret", v.Secret.SecretName, "-n", ns, "-o", "name")
		if err != nil || out == "" {
			continue // not written yet: the pod would wait for it
		}
		for _, c := range certsIn(readSecret(t, stack, ns, v.Secret.SecretName, path.Base(file))) {
			keys = append(keys, c.PublicKey)
		}
	}
	return keys
}

// TestServiceAccountKeyRotation rotates the service-account CA of a RootShard with a Shard,
// both verifying each other's tokens (auth.serviceAccount): at no observed moment between
// Start and Complete does a shard sign with a key the other does not verify; at Prepared,
// every shard signs with a new key, its signing leaf's other slot, and accepts the tokens of
// both the old and the new keys of each shard; after Complete, the tokens of the old keys are
// refused, those of the new ones accepted, and the old slots are gone.
func TestServiceAccountKeyRotation(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "sakeys")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, serviceAccountRotationSetup))
	for _, obj := range []string{"rootshard/root", "shard/alpha"} {
		waitFor(t, ns, obj, "Available")
	}
	deployments := []string{"root-kcp", "alpha-shard-kcp"}
	issuers := []string{"root-service-account", "alpha-service-account"}
	// Each Deployment verifies both shards' tokens once both keys are issued.
	oldTokens := map[string]token{}
	for _, name := range issuers {
		oldTokens[name] = signToken(t, signingKey(t, ns, name), name)
	}
	for _, d := range deployments {
		require.Eventually(t, func() bool {
			keys := verifyKeys(t, ns, d)
			return oldTokens["root-service-account"].verifiedBy(keys) && oldTokens["alpha-service-account"].verifiedBy(keys)
		}, 2*time.Minute, time.Second, "%s verifies the tokens of both shards before the rotation", d)
	}
	oldCerts := map[string]*x509.Certificate{}
	for _, name := range issuers {
		oldCerts[name] = secretCert(t, ns, name)
	}

	// From Start to Complete, every key a shard signs with is verified by every shard.
	watch := watchSigning(t.Context(), ns, deployments)
	_, stderr, err := rotate(t, ns, "rootshards", "root", "Start", "service-account")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, "service-account")

	// Prepared: each shard signs with a new key, its leaf's other slot, and every shard
	// accepts both keys of each.
	newTokens := map[string]token{}
	for i, name := range issuers {
		require.Equal(t, name+"-next", signingSecret(t, ns, deployments[i]), "%s signs with its new slot", deployments[i])
		now := secretCert(t, ns, name+"-next")
		require.NotEqual(t, oldCerts[name].RawSubjectPublicKeyInfo, now.RawSubjectPublicKeyInfo, "%s-next holds a new key", name)
		assert.NoError(t, now.CheckSignatureFrom(secretCert(t, ns, "root-service-account-ca-next")), "%s-next comes from the new CA", name)
		assert.Equal(t, oldCerts[name].RawSubjectPublicKeyInfo, secretCert(t, ns, name).RawSubjectPublicKeyInfo, "%s keeps the old key until Complete", name)
		newTokens[name] = signToken(t, signingKey(t, ns, name+"-next"), name)
	}
	for _, d := range deployments {
		assert.Contains(t, kubectl(t, "get", "deployment", d, "-n", ns, "-o", "jsonpath={.spec.template.spec.volumes[*].secret.secretName}"),
			"root-service-account-trust", "%s verifies the root shard's tokens by its keys kept", d)
		require.Eventually(t, func() bool {
			keys := verifyKeys(t, ns, d)
			for _, name := range issuers {
				if !oldTokens[name].verifiedBy(keys) || !newTokens[name].verifiedBy(keys) {
					return false
				}
			}
			return true
		}, 2*time.Minute, time.Second, "%s accepts the old and the new key of each shard while Prepared", d)
	}

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", "service-account")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, "service-account")
	for _, d := range deployments {
		require.Eventually(t, func() bool {
			keys := verifyKeys(t, ns, d)
			for _, name := range issuers {
				if oldTokens[name].verifiedBy(keys) || !newTokens[name].verifiedBy(keys) {
					return false
				}
			}
			return true
		}, 2*time.Minute, time.Second, "%s refuses the old keys and accepts the new ones after Complete", d)
	}
	waitFor(t, ns, "rootshard/root", "Available")
	waitFor(t, ns, "shard/alpha", "Available")
	moments, broken := watch.Stop()
	assert.Empty(t, broken, "moments between Start and Complete when a shard signed with a key another did not verify")
	assert.Greater(t, moments, 10, "the Deployments were observed throughout the rotation")
	t.Logf("observed %d moments of the rotation", moments)

	final := verifyKeys(t, ns, "root-kcp")
	for i, name := range issuers {
		assert.Equal(t, name+"-next", signingSecret(t, ns, deployments[i]), "%s signs with the new slot after Complete", deployments[i])
		assert.True(t, signToken(t, signingKey(t, ns, name+"-next"), name).verifiedBy(final), "%s still signs with a key the shards accept", name)
		assert.Eventually(t, func() bool {
			out, err := stack.Kubectl(t.Context(), "get", "secret,certificate", name, "-n", ns, "--ignore-not-found", "-o", "name")
			return err == nil && out == ""
		}, time.Minute, time.Second, "the old slot %s is deleted after Complete", name)
	}
}
