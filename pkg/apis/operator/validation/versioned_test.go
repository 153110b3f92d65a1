package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/install"
)

// TestKeysLeftToTheirDefaultsOnTheVersionedPath: a kcp-operator manifest that leaves
// oidc.caFileRef.key and tokenAuthFile.key out is decoded, defaulted and converted as the
// server does, and is valid, with kcp-operator's defaults filled in.
func TestKeysLeftToTheirDefaultsOnTheVersionedPath(t *testing.T) {
	const manifest = `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata: {name: edge, namespace: team-a}
spec:
  rootShard: {ref: {name: root}}
  auth:
    serviceAccount: {enabled: true}
    oidc:
      issuerURL: https://dex.example.com
      clientID: kcp
      clientSecret: legacy
      caFileRef: {name: dex-ca}
    tokenAuthFile: {secretName: tokens}
    webhook: {configSecretName: authn-hook, version: v1}
`
	scheme := runtime.NewScheme()
	install.Install(scheme)
	obj, _, err := serializer.NewCodecFactory(scheme).UniversalDecoder(operator.SchemeGroupVersion).Decode([]byte(manifest), nil, nil)
	require.NoError(t, err)
	fp, ok := obj.(*operator.FrontProxy)
	require.True(t, ok, "%T", obj)
	assert.Empty(t, ValidateFrontProxy(fp))
	assert.Equal(t, "ca.crt", fp.Spec.Auth.OIDC.CAFileRef.Key)
	assert.Equal(t, "token.csv", fp.Spec.Auth.TokenAuthFile.Key)
}
