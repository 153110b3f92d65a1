package link

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeregisterRequest: POST /v1/deregister/{kind} is the Deregister of that kind, allowed
// only for a kind the declaration admits that kcp registers: a Shard.
func TestDeregisterRequest(t *testing.T) {
	r := RequestOf(httptest.NewRequest("POST", "/v1/deregister/Shard", nil))
	assert.Equal(t, Request{Operation: Deregister, Kind: Shard}, r)
	assert.Equal(t, Request{}, RequestOf(httptest.NewRequest("GET", "/v1/deregister/Shard", nil)))
	assert.Equal(t, Request{}, RequestOf(httptest.NewRequest("POST", "/v1/deregister/Shard/x", nil)))

	d := Declaration{Consumers: []ConsumerKind{Shard, FrontProxy}}
	assert.Equal(t, Reason(""), allowed(Request{Operation: Deregister, Kind: Shard}, d))
	assert.Equal(t, OperationNotAllowed, allowed(Request{Operation: Deregister, Kind: FrontProxy}, d), "a FrontProxy is not registered in kcp")
	assert.Equal(t, ConsumerKindNotAllowed, allowed(Request{Operation: Deregister, Kind: Shard}, Declaration{Consumers: []ConsumerKind{FrontProxy}}))
}

// TestMayRegister: a linked Shard may claim kcp's Shard of its name only at an https base URL
// whose host is within the Link's dnsNames, and never the root shard's.
func TestMayRegister(t *testing.T) {
	d := Declaration{DNSNames: []string{"*.remote.svc.cluster.local", "shard.eu.example.com"}}
	for _, tc := range []struct {
		name, baseURL string
		may           bool
	}{
		{"shard-1", "https://shard-1-shard-kcp.remote.svc.cluster.local:6443", true},
		{"shard-1", "https://shard.eu.example.com", true},
		{"root", "https://shard.eu.example.com", false},
		{"", "https://shard.eu.example.com", false},
		{"shard-1", "http://shard.eu.example.com", false},
		{"shard-1", "https://root-kcp.home.svc.cluster.local:6443", false},
		{"shard-1", "https://a.b.remote.svc.cluster.local:6443", false},
		{"shard-1", "https://user@shard.eu.example.com", false},
		{"shard-1", "://", false},
	} {
		assert.Equal(t, tc.may, MayRegister(d, tc.name, tc.baseURL), "%s at %s", tc.name, tc.baseURL)
	}
}
