package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestHostnameColumnReadsTheDeprecatedField(t *testing.T) {
	tests := []struct {
		name string
		spec operator.FrontProxySpec
		want string
	}{
		{name: "none"},
		{name: "external.hostname", spec: operator.FrontProxySpec{External: &operator.FrontProxyExternalConfig{Hostname: "new.example.com"}}, want: "new.example.com"},
		{name: "deprecated externalHostname", spec: operator.FrontProxySpec{ExternalHostname: "old.example.com"}, want: "old.example.com"},
		{name: "external without a hostname", spec: operator.FrontProxySpec{ExternalHostname: "old.example.com", External: &operator.FrontProxyExternalConfig{Port: 443}}, want: "old.example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, externalHostname(&operator.FrontProxy{Spec: tc.spec}))
		})
	}
}
