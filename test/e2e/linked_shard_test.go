package e2e

import (
	"crypto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestLinkedShardFromItsBundles: a Shard whose spec.rootShard.link names a bootstrap Secret
// waits for it, then for its bundles Secret, which the test writes as the remote's link
// client would (the keyless data of the RootShard's shard-join); then it is realized with no
// CA Secret and no Issuer of its own, every Certificate issued by the LinkIssuer (pending: the
// bootstrap's listener answers nothing), no Secret holding a CA's key, and LinkReady False:
// the link is down.
func TestLinkedShardFromItsBundles(t *testing.T) {
	parallel(t, alone)
	a, b := namespace(t, "linked-a"), namespace(t, "linked-b")
	givenRootShard(t, a, until())
	const bootstrapName = "eu-1-link-bootstrap"
	kubectl(t, "apply", "-n", b, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: eu
spec:
  rootShard: {link: {secretRef: {name: `+bootstrapName+`}}}
  etcd: {endpoints: ["https://etcd-eu:2379"]}
`))
	assert.Equal(t, "Link/"+bootstrapName, strings.Fields(kubectl(t, "get", "shard", "eu", "-n", b, "--no-headers"))[1], "the RootShard column")
	waitForReason(t, b, "shard/eu", "ReferenceValid", "False", "ReferenceSecretNotFound")

	ctx := t.Context()
	carried := linktest.Bootstrap(t, b, bootstrapName, "")
	carried.ResourceVersion = ""
	bootstrap, err := stack.Kube.CoreV1().Secrets(b).Create(ctx, carried, metav1.CreateOptions{})
	require.NoError(t, err)
	waitForReason(t, b, "shard/eu", "ReferenceValid", "False", "LinkBundlesNotReceived")
	// The server holds the link, whose listener (the bootstrap's) answers nothing.
	waitForReason(t, b, "shard/eu", "LinkReady", "False", "Disconnected")

	var join *corev1.Secret
	require.Eventually(t, func() bool {
		join, err = stack.Kube.CoreV1().Secrets(a).Get(ctx, "root-shard-join", metav1.GetOptions{})
		return err == nil
	}, 3*time.Minute, time.Second, "the shard-join Secret of the RootShard is written")
	bundles, err := link.Bundles(bootstrap, map[reference.Reference]map[string][]byte{reference.ShardJoin: link.KeepOnlyKeyless(join.Data)},
		bootstrap.Data[link.CACertKey], "1")
	require.NoError(t, err)
	_, err = stack.Kube.CoreV1().Secrets(b).Apply(ctx, bundles, metav1.ApplyOptions{FieldManager: "e2e-link-client", Force: true})
	require.NoError(t, err)
	waitFor(t, b, "shard/eu", "ReferenceValid")

	issuers := kubectl(t, "get", "certificates", "-n", b, "-o", `jsonpath={range .items[*]}{.spec.issuerRef.group}/{.spec.issuerRef.kind}{"\n"}{end}`)
	require.NotEmpty(t, strings.TrimSpace(issuers))
	for _, ref := range strings.Fields(issuers) {
		assert.Equal(t, "operator.kcp.io/LinkIssuer", ref)
	}
	assert.Empty(t, strings.TrimSpace(kubectl(t, "get", "issuers", "-n", b, "-o", "name")), "no CA Issuer in the linked namespace")
	// cert-manager makes the leaves' keys here, as it should: none of them is a CA's.
	var caKeys []crypto.PublicKey
	for _, ca := range reference.ShardJoin.KeyPairs() {
		certs, err := cert.ParseCertsPEM(join.Data[reference.CertKey(ca)])
		require.NoError(t, err)
		caKeys = append(caKeys, certs[0].PublicKey)
	}
	secrets, err := stack.Kube.CoreV1().Secrets(b).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, s := range secrets.Items {
		for k, v := range s.Data {
			key, err := keyutil.ParsePrivateKeyPEM(v)
			if err != nil {
				continue
			}
			signer, ok := key.(crypto.Signer)
			require.True(t, ok, "%s: %s", s.Name, k)
			for _, ca := range caKeys {
				assert.False(t, signer.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(ca), "%s: %s is no CA's key", s.Name, k)
			}
		}
	}
}
