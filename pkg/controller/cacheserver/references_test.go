package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

func TestReferenceSecretFollowsTheCredentials(t *testing.T) {
	f := newFixture(t, cacheServer())
	for range 4 {
		f.sync(t)
	}
	s := f.Host.Secret(t, "team-a", "cache-cache-client")
	assert.Equal(t, reference.CacheClient.Type(), s.Type)
	assert.Equal(t, "cache-client", s.Labels[reference.Label])
	assert.Equal(t, "cache", s.Labels[pki.OwnerLabel("cacheserver")], "DeleteOwned removes it with the CacheServer")
	assert.Equal(t, "https://cache-cache-server.team-a.svc.cluster.local:6443", string(s.Data[reference.CacheURLKey]))
	assert.Equal(t, f.Host.Secret(t, "team-a", "cache-ca").Data["tls.crt"], s.Data[reference.CACertKey])
	assert.Equal(t, f.Host.Secret(t, "team-a", "cache-client-certificate").Data["tls.crt"], s.Data["tls.crt"])
	assert.Equal(t, f.Host.Secret(t, "team-a", "cache-client-certificate").Data["tls.key"], s.Data["tls.key"])

	// cert-manager renews the client certificate: the reference Secret follows.
	renewed := f.Host.Secret(t, "team-a", "cache-client-certificate").DeepCopy()
	renewed.ResourceVersion = "2"
	renewed.Data = map[string][]byte{"tls.crt": []byte("renewed certificate"), "tls.key": []byte("renewed key")}
	require.NoError(t, f.Host.Caches["secrets"].Update(renewed))
	f.Host.Reset()
	f.sync(t)
	assert.Contains(t, f.Host.Writes(), "Secret cache-cache-client")
	assert.Equal(t, []byte("renewed key"), f.Host.Secret(t, "team-a", "cache-cache-client").Data["tls.key"])
}
