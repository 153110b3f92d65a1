package link

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestBundlesRoundTrip: what the stream sent comes back per reference from the bundles
// Secret, which is owned by its bootstrap Secret by UID and refuses a private key.
func TestBundlesRoundTrip(t *testing.T) {
	bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eu-1-link-bootstrap", Namespace: "b", UID: "u-b"}}
	shard := map[string][]byte{"root-shard-url": []byte("https://root"), "server-ca.crt": []byte("S")}
	kc := map[string][]byte{"root-shard-url": []byte("https://root"), "front-proxy-client-ca.crt": []byte("F")}
	s, err := Bundles(bootstrap, map[reference.Reference]map[string][]byte{reference.ShardJoin: shard, reference.KubeconfigIssuer: kc}, []byte("L"), "r1")
	require.NoError(t, err)
	assert.Equal(t, "eu-1-link-bootstrap-bundles", *s.Name)
	assert.Equal(t, BundlesType, *s.Type)
	require.Len(t, s.OwnerReferences, 1)
	assert.Equal(t, "u-b", string(*s.OwnerReferences[0].UID))
	assert.Equal(t, "r1", s.Annotations[RevisionAnnotation])

	got := &corev1.Secret{Data: s.Data}
	assert.Equal(t, shard, ReferenceData(got, reference.ShardJoin))
	assert.Equal(t, kc, ReferenceData(got, reference.KubeconfigIssuer))
	assert.Nil(t, ReferenceData(got, reference.FrontProxyJoin), "a kind the Link does not allow")
	assert.Equal(t, []byte("L"), got.Data[BundlesLinkCAKey])

	for _, k := range []string{"server-ca.key", "tls.key"} {
		_, err := Bundles(bootstrap, map[reference.Reference]map[string][]byte{reference.ShardJoin: {k: []byte("K")}}, []byte("L"), "r2")
		assert.Error(t, err, k)
	}
	assert.Equal(t, map[string][]byte{"tls.crt": []byte("C"), "server-ca.crt": []byte("S")},
		KeepOnlyKeyless(map[string][]byte{"tls.crt": []byte("C"), "tls.key": []byte("K"), "server-ca.crt": []byte("S"), "server-ca.key": []byte("K")}))
}
