package hostcluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestSecretMetadataTransformKeepsWhatIsRead: the cache of every Secret keeps the name,
// namespace, UID, resourceVersion, labels and the server's own annotations, and drops a
// client-side apply's copy of the data and the managed fields.
func TestSecretMetadataTransformKeepsWhatIsRead(t *testing.T) {
	in := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "db", Namespace: "team-b", UID: "u-1", ResourceVersion: "42",
			Labels: map[string]string{"operator.kcp.io/reference": "shard-join", "app": "db"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"c2VjcmV0"}}`,
				"operator.kcp.io/owner":                            "RootShard/root",
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
	}
	out, err := SecretMetadataTransform(in)
	require.NoError(t, err)
	m := out.(*metav1.PartialObjectMetadata)
	assert.Equal(t, "db", m.Name)
	assert.Equal(t, "team-b", m.Namespace)
	assert.EqualValues(t, "u-1", m.UID)
	assert.Equal(t, "42", m.ResourceVersion)
	assert.Equal(t, in.Labels, m.Labels)
	assert.Equal(t, map[string]string{"operator.kcp.io/owner": "RootShard/root"}, m.Annotations)
	assert.Empty(t, m.ManagedFields)
	assert.Equal(t, in.TypeMeta, m.TypeMeta)

	tombstone := cache.DeletedFinalStateUnknown{Key: "team-b/db", Obj: in}
	passed, err := SecretMetadataTransform(tombstone)
	require.NoError(t, err)
	assert.Equal(t, tombstone, passed, "anything else passes as it is")
}
