package integration

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestLinks: a Link is stored and served as every kind, with its columns; an invalid one is
// a 422 naming each field and nothing is stored; its RootShard and identity are immutable;
// an identity is one Link's of a RootShard; the status subresource writes the status alone.
// Who may create one (the right link) needs an authorizer: the registry's unit tests and the
// e2e TestLinkNeedsTheLinkRight hold it.
func TestLinks(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	links := s.client.OperatorV1alpha1().Links(namespace)

	t.Run("create, get and list as a table", func(t *testing.T) {
		ctx := t.Context()
		l := newLink("eu-1", "root", "eu-1.links.example.com")
		l.Spec.DNSNames = []string{"*.eu.kcp.example.com"}
		created, err := links.Create(ctx, l, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.EqualValues(t, 1, created.GetGeneration())
		got, err := links.Get(ctx, "eu-1", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, l.Spec, got.Spec)

		raw, err := s.client.OperatorV1alpha1().RESTClient().Get().Namespace(namespace).Resource("links").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		require.NoError(t, err)
		var table metav1.Table
		require.NoError(t, json.Unmarshal(raw, &table))
		var columns []string
		for _, c := range table.ColumnDefinitions {
			columns = append(columns, c.Name)
		}
		assert.Equal(t, []string{"Name", "RootShard", "Identity", "Consumers", "Ready", "Age"}, columns)
		require.Len(t, table.Rows, 1)
		assert.Equal(t, []any{"eu-1", "root", "eu-1.links.example.com", "Shard,Kubeconfig", "Unknown"}, table.Rows[0].Cells[:5])
	})

	t.Run("invalid: a 422 naming each field, nothing stored", func(t *testing.T) {
		ctx := t.Context()
		l := newLink("bad", "", "EU.links.example.com")
		l.Spec.Consumers = []operatorv1alpha1.LinkConsumerKind{"Shard", "RootShard", "Shard"}
		l.Spec.CacheServerRef = &corev1.LocalObjectReference{}
		l.Spec.DNSNames = []string{"*.*.example.com", "eu.example.com", "eu.example.com"}
		_, err := links.Create(ctx, l, metav1.CreateOptions{})
		assertInvalid(t, err, "spec.rootShardRef.name", "spec.identity", "spec.consumers[1]", "spec.consumers[2]",
			"spec.cacheServerRef.name", "spec.dnsNames[0]", "spec.dnsNames[2]")
		none := newLink("none", "root", "none.links.example.com")
		none.Spec.Consumers = nil
		_, err = links.Create(ctx, none, metav1.CreateOptions{})
		assertInvalid(t, err, "spec.consumers")
		for _, name := range []string{"bad", "none"} {
			_, err = links.Get(ctx, name, metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "nothing is stored, got %v", err)
		}
	})

	t.Run("rootShardRef and identity are immutable; the rest may change", func(t *testing.T) {
		ctx := t.Context()
		l, err := links.Create(ctx, newLink("pinned", "root", "pinned.links.example.com"), metav1.CreateOptions{})
		require.NoError(t, err)
		moved := l.DeepCopy()
		moved.Spec.RootShardRef.Name, moved.Spec.Identity = "other", "other.links.example.com"
		_, err = links.Update(ctx, moved, metav1.UpdateOptions{})
		assertInvalid(t, err, "spec.rootShardRef", "spec.identity")

		l.Spec.Consumers = []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerFrontProxy}
		l.Spec.DNSNames = []string{"edge.eu.kcp.example.com"}
		updated, err := links.Update(ctx, l, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.EqualValues(t, 2, updated.GetGeneration())
	})

	t.Run("an identity is one Link's of a RootShard", func(t *testing.T) {
		ctx := t.Context()
		_, err := links.Create(ctx, newLink("eu-1-again", "root", "eu-1.links.example.com"), metav1.CreateOptions{})
		assertInvalid(t, err, "spec.identity")
		require.ErrorContains(t, err, "is the identity of Link/eu-1 of RootShard \"root\"")
		_, err = links.Get(ctx, "eu-1-again", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "nothing is stored, got %v", err)

		// The same identity for another RootShard is another member.
		_, err = links.Create(ctx, newLink("eu-1-other", "other", "eu-1.links.example.com"), metav1.CreateOptions{})
		require.NoError(t, err)
	})

	t.Run("the status subresource writes the status alone", func(t *testing.T) {
		ctx := t.Context()
		l, err := links.Get(ctx, "eu-1", metav1.GetOptions{})
		require.NoError(t, err)
		l.Status = operatorv1alpha1.LinkStatus{ObservedGeneration: 1, BootstrapSecretName: "eu-1-link-bootstrap",
			Conditions: []metav1.Condition{{Type: operatorv1alpha1.ConditionLinkReady, Status: metav1.ConditionTrue, Reason: "Issued",
				LastTransitionTime: metav1.Now()}}}
		l.Spec.Consumers = []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerFrontProxy}
		written, err := links.UpdateStatus(ctx, l, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "eu-1-link-bootstrap", written.Status.BootstrapSecretName)
		assert.Equal(t, []operatorv1alpha1.LinkConsumerKind{"Shard", "Kubeconfig"}, written.Spec.Consumers, "the spec is not the status's")
		assert.EqualValues(t, 1, written.Generation)

		// The main endpoint keeps the status, and the table shows Ready.
		written.Status = operatorv1alpha1.LinkStatus{}
		written.Labels = map[string]string{"region": "eu"}
		kept, err := links.Update(ctx, written, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "eu-1-link-bootstrap", kept.Status.BootstrapSecretName)

		written.Status.BootstrapSecretName = "Not_A_Name"
		written.ResourceVersion = kept.ResourceVersion
		_, err = links.UpdateStatus(ctx, written, metav1.UpdateOptions{})
		assertInvalid(t, err, "status.bootstrapSecretName")
	})
}
