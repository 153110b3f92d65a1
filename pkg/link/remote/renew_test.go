package remote

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// TestManagerRenewsAtTwoThirds: a client certificate past two thirds of its life is renewed
// over the link; only tls.crt and tls.key of the bootstrap Secret change, and the next
// stream speaks with the new certificate.
func TestManagerRenewsAtTwoThirds(t *testing.T) {
	h := newLinkHome(t)
	// Valid 2h30 from two hours ago: two thirds was 20 minutes ago.
	h.clientCert, h.clientKey = h.ca.pairOf(t, clientTemplate(t, time.Now().Add(-2*time.Hour), time.Now().Add(30*time.Minute)))
	bootstrap, kube, _, _ := h.managed(t)

	var renewed *corev1.Secret
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := kube.CoreV1().Secrets("remote").Get(context.Background(), bootstrap.Name, metav1.GetOptions{})
		require.NoError(c, err)
		assert.NotEqual(c, bootstrap.Data[linkpki.ClientCertKey], s.Data[linkpki.ClientCertKey])
		renewed = s
	}, 5*time.Second, 10*time.Millisecond)
	assert.NotEqual(t, bootstrap.Data[linkpki.ClientKeyKey], renewed.Data[linkpki.ClientKeyKey])
	for _, k := range []string{linkpki.ListenerURLKey, linkpki.ServerNameKey, linkpki.CACertKey} {
		assert.Equal(t, bootstrap.Data[k], renewed.Data[k], k)
	}
	b, err := linkpki.ResolveBootstrap(renewed, time.Now())
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		h.mu.Lock()
		defer h.mu.Unlock()
		assert.Contains(c, h.serials, b.Client.Cert.SerialNumber.String(), "a stream with the new certificate")
	}, 5*time.Second, 10*time.Millisecond)
	var patches []string
	for _, a := range kube.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok && p.GetName() == bootstrap.Name {
			patches = append(patches, string(p.GetPatch()))
		}
	}
	require.Len(t, patches, 1)
	var patch map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(patches[0]), &patch))
	assert.Equal(t, map[string]any{"resourceVersion": "1"}, patch["metadata"], "the patch holds to the Secret read")
	assert.ElementsMatch(t, []string{linkpki.ClientCertKey, linkpki.ClientKeyKey}, slices.Collect(maps.Keys(patch["data"])), "only the pair")
}

// TestRenewAt: two thirds of the life.
func TestRenewAt(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, from.Add(60*24*time.Hour), RenewAt(from, from.Add(90*24*time.Hour)))
	assert.Equal(t, from.Add(2*time.Hour), RenewAt(from, from.Add(3*time.Hour)))
}
