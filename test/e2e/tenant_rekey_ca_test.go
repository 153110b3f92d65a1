package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEditorCannotRekeyACA has eve, bound only to kcp-setups-edit, ask through kubectl for
// what would give the client CA a new key at once, outside the two-phase rotation that she
// may not start: rotationPolicy Always on its template, and a new key size. Each is a 422 at
// the field's path that names the rotation subresource, for her as for the admin, and nothing
// is stored; a leaf's template may do both.
func TestEditorCannotRekeyACA(t *testing.T) {
	parallel(t, sharedRoles)
	ns := namespace(t, "rekey")
	as := editor(t, ns, "eve")
	givenRootShard(t, ns, until())
	stderr, err := as("create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/"+ns+"/rootshards/root/rotation", "-f", writeManifest(t,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"CARotation","spec":{"phase":"Start","authorities":["client"]}}`))
	require.Error(t, err)
	require.Contains(t, stderr, "403", "eve may not rotate the client CA")

	tests := []struct {
		name, patch string
		says        []string
	}{
		{
			name:  "rotationPolicy Always",
			patch: `{"spec":{"certificateTemplates":{"client-ca":{"spec":{"privateKey":{"rotationPolicy":"Always"}}}}}}`,
			says: []string{`spec.certificateTemplates[client-ca].spec.privateKey.rotationPolicy: Invalid value: "Always": must be Never (or unset)`,
				"rootshards/rotation"},
		},
		{
			name:  "a new size",
			patch: `{"spec":{"certificateTemplates":{"client-ca":{"spec":{"privateKey":{"size":384}}}}}}`,
			says: []string{`spec.certificateTemplates[client-ca].spec.privateKey.size: Forbidden: may not change from 256 to 384`,
				"rootshards/rotation"},
		},
		{
			name:  "another algorithm",
			patch: `{"spec":{"certificateTemplates":{"client-ca":{"spec":{"privateKey":{"algorithm":"RSA","size":4096}}}}}}`,
			says:  []string{`spec.certificateTemplates[client-ca].spec.privateKey.algorithm: Forbidden: may not change from ECDSA to RSA`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stderr, err := as("patch", "rootshard", "root", "--type=merge", "-p", tc.patch)
			require.Error(t, err, "refused")
			assert.Contains(t, stderr, "422 Unprocessable Entity")
			for _, s := range tc.says {
				assert.Contains(t, stderr, s)
			}
			assert.Empty(t, kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.spec.certificateTemplates}"), "nothing was stored")
			// Not a matter of rights: the admin is refused the same.
			out, err := stack.Kubectl(t.Context(), "patch", "rootshard", "root", "-n", ns, "--type=merge", "--dry-run=server", "-p", tc.patch)
			require.Error(t, err)
			assert.Contains(t, out, "spec.certificateTemplates[client-ca].spec.privateKey")
		})
	}

	// A leaf's key is its own: eve may give the server certificate a new key and rotationPolicy.
	stderr, err = as("patch", "rootshard", "root", "--type=merge", "-p",
		`{"spec":{"certificateTemplates":{"server":{"spec":{"privateKey":{"rotationPolicy":"Always","size":384}}}}}}`)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "200 OK")
}
