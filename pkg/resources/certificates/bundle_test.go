package certificates

import (
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/assert"
)

func block(name string) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(name)})
}

// The bundle of a root CA's two slots carries each slot's CA, and what is above both once.
func TestChainsBundle(t *testing.T) {
	old := Bundle(block("root-ca"), block("kcp-pki-ca"))
	next := Bundle(block("root-ca-next"), block("kcp-pki-ca"))
	assert.Equal(t, Bundle(block("root-ca"), block("kcp-pki-ca"), block("root-ca-next")), ChainsBundle(old, next))
	assert.Equal(t, Bundle(old), ChainsBundle(old), "one chain is kept as it is")
	assert.Equal(t, Bundle(block("root-ca"), block("kcp-pki-ca"), block("root-ca-next")), ChainsBundle(old, nil, next), "an empty chain is skipped")
}
