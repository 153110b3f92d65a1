package manager

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/rest"
)

func TestContentConfigs(t *testing.T) {
	host := &rest.Config{Host: "https://host.example", QPS: 7}
	for _, tc := range []struct {
		name           string
		config         *rest.Config
		contentType    string
		acceptsContent string
	}{
		{"kubernetes and operator.kcp.io clientsets", ProtobufConfig(host), "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf,application/json"},
		{"cert-manager's clientset", JSONConfig(host), "application/json", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.contentType, tc.config.ContentType)
			assert.Equal(t, tc.acceptsContent, tc.config.AcceptContentTypes)
			assert.Equal(t, host.Host, tc.config.Host, "the rest of the config is kept")
			assert.Equal(t, host.QPS, tc.config.QPS, "the rest of the config is kept")
		})
	}
	assert.Empty(t, host.ContentType, "the host config is copied, not changed")
}
