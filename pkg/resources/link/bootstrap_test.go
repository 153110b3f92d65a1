package link

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

func TestBootstrap(t *testing.T) {
	d := testDeclaration()
	client := reference.KeyPair{Cert: pemOf("eu-1-link-client"), Key: []byte("the key")}
	// While the link CA rotates, the remote trusts both slots, in slot order.
	trust := certificates.Bundle(pemOf("root-link-ca"), pemOf("root-link-ca-next"))
	s, err := Bootstrap(d, client, trust)
	require.NoError(t, err)
	assert.Equal(t, "eu-1-link-bootstrap", *s.Name)
	assert.Equal(t, "team-a", *s.Namespace)
	assert.Equal(t, BootstrapType, *s.Type)
	want := pki.Labels("link", "eu-1", "link-bootstrap")
	want["operator.kcp.io/reference"] = "link-bootstrap"
	assert.Equal(t, want, s.Labels)
	assert.Equal(t, BootstrapKeys, slices.Sorted(maps.Keys(s.Data)), "every key, and no other")
	assert.Equal(t, map[string]string{
		"listener-url": "https://links.example.com:8443",
		"server-name":  "root.team-a.link.kcp-setups.local",
		"ca.crt":       string(trust),
		"tls.crt":      string(client.Cert),
		"tls.key":      "the key",
	}, func() map[string]string {
		out := map[string]string{}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out
	}())
	assert.True(t, slices.IsSorted(BootstrapKeys))
}

func TestBootstrapNotYet(t *testing.T) {
	client := reference.KeyPair{Cert: pemOf("eu-1-link-client"), Key: []byte("the key")}
	for _, tc := range []struct {
		name   string
		client reference.KeyPair
		trust  []byte
		url    string
		want   string
	}{
		{"no client certificate", reference.KeyPair{}, pemOf("ca"), "https://l:1", "the client certificate eu-1-link-client is not issued yet"},
		{"no client key", reference.KeyPair{Cert: client.Cert}, pemOf("ca"), "https://l:1", "the client certificate eu-1-link-client is not issued yet"},
		{"no link CA", client, nil, "https://l:1", "the link CA root-link-ca is not issued yet"},
		{"no listener URL", client, pemOf("ca"), "", `the listener's URL "" is no https URL`},
		{"an http listener URL", client, pemOf("ca"), "http://links.example.com", `the listener's URL "http://links.example.com" is no https URL`},
		{"a listener URL without a host", client, pemOf("ca"), "https://", `the listener's URL "https://" is no https URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeclaration()
			d.ListenerURL = tc.url
			s, err := Bootstrap(d, tc.client, tc.trust)
			assert.Nil(t, s)
			assert.EqualError(t, err, "the bootstrap Secret of Link team-a/eu-1: "+tc.want)
		})
	}
}
