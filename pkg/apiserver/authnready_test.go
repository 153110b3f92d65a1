package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// caContent is a CA provider whose content a test sets.
type caContent struct {
	dynamiccertificates.CAContentProvider
	bundle []byte
}

func (c *caContent) CurrentCABundleContent() []byte { return c.bundle }

func TestAuthenticationReadyWaitsForEveryConfiguredCA(t *testing.T) {
	client, header := &caContent{}, &caContent{}
	check := AuthenticationReady(client, header)
	assert.Error(t, check.Check(nil), "nothing loaded")
	header.bundle = []byte("header CA")
	assert.ErrorContains(t, check.Check(nil), "client CA")
	client.bundle = []byte("client CA")
	assert.NoError(t, check.Check(nil))
	header.bundle = nil
	assert.ErrorContains(t, check.Check(nil), "request-header CA")

	assert.NoError(t, AuthenticationReady(nil, nil).Check(nil), "no delegated authentication: nothing to wait for")
}
