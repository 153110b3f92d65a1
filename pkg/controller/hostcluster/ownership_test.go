package hostcluster

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// configMapApplier is an applier over one host ConfigMap, held in host (nil when absent),
// that the cache never shows, as a cache filtered by the managed-by label does not show a
// foreign object; it counts the applies.
func configMapApplier(host *corev1.ConfigMap, applies *int) Applied[*corev1ac.ConfigMapApplyConfiguration] {
	return Applied[*corev1ac.ConfigMapApplyConfiguration]{
		Kind:     "ConfigMap",
		Key:      func(o *corev1ac.ConfigMapApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
		Annotate: func(o *corev1ac.ConfigMapApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
		Get: func(ns, name string) (metav1.Object, error) {
			return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
		},
		Apply: func(context.Context, *corev1ac.ConfigMapApplyConfiguration) (metav1.Object, error) {
			*applies++
			return &corev1.ConfigMap{}, nil
		},
		Labels: func(o *corev1ac.ConfigMapApplyConfiguration) map[string]string { return o.Labels },
		Lookup: func(_ context.Context, ns, name string) (metav1.Object, error) {
			if host == nil {
				return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
			}
			return host, nil
		},
	}
}

// TestTheFirstWriteNeverTakesOver: before the first write of a name the cache does not hold,
// the host cluster is read; a ConfigMap of that name that the controllers did not create for
// this FrontProxy is never written, and the error says whose it is.
func TestTheFirstWriteNeverTakesOver(t *testing.T) {
	ours := pki.Labels("frontproxy", "app", "front-proxy")
	desired := func() *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap("app-config", "team-a").WithLabels(ours).WithData(map[string]string{"mapping.yaml": "[]"})
	}
	existing := func(labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "team-a", Labels: labels}}
	}
	tests := []struct {
		name     string
		host     *corev1.ConfigMap
		conflict string // in the error; empty means written
	}{
		{name: "absent: written"},
		{name: "ours, the cache behind: written", host: existing(ours)},
		{name: "another team's", host: existing(map[string]string{"team": "b"}), conflict: "(not by kcp-setups)"},
		{name: "another setup's of the same name", host: existing(pki.Labels("rootshard", "app", "kcp")),
			conflict: "(by kcp-setups for rootshard app)"},
		{name: "another FrontProxy's", host: existing(pki.Labels("frontproxy", "other", "front-proxy")),
			conflict: "(by kcp-setups for frontproxy other)"},
		{name: "managed-by forged, no owner", host: existing(map[string]string{pki.LabelManagedBy: pki.ManagedBy}),
			conflict: "(by kcp-setups, for another object)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applies := 0
			wrote, err := configMapApplier(tc.host, &applies).ApplyIfChanged(t.Context(), desired())
			if tc.conflict == "" {
				require.NoError(t, err)
				assert.True(t, wrote)
				assert.Equal(t, 1, applies)
				return
			}
			var conflict *NameConflictError
			require.ErrorAs(t, err, &conflict)
			assert.Contains(t, err.Error(), "ConfigMap team-a/app-config exists and was not created for this object "+tc.conflict)
			assert.Equal(t, operatorv1alpha1.ReasonNameConflict, FailureReason(err))
			assert.False(t, wrote)
			assert.Zero(t, applies, "never written")
		})
	}
}

// TestTheFirstWriteReportsAFailedRead: a read that fails is the reconcile's error, and
// nothing is written.
func TestTheFirstWriteReportsAFailedRead(t *testing.T) {
	applies := 0
	a := configMapApplier(nil, &applies)
	a.Lookup = func(context.Context, string, string) (metav1.Object, error) {
		return nil, apierrors.NewForbidden(corev1.Resource("configmaps"), "app-config", errors.New("no RBAC rule"))
	}
	_, err := a.ApplyIfChanged(t.Context(), corev1ac.ConfigMap("app-config", "team-a").WithLabels(pki.Labels("frontproxy", "app", "front-proxy")))
	require.Error(t, err)
	assert.Equal(t, operatorv1alpha1.ReasonForbidden, FailureReason(err))
	assert.Zero(t, applies)
}

func TestOwnedBy(t *testing.T) {
	obj := func(labels map[string]string) metav1.Object { return &metav1.ObjectMeta{Labels: labels} }
	bootstrap := map[string]string{pki.LabelManagedBy: pki.ManagedBy, pki.LabelComponent: "bootstrap"}
	assert.True(t, OwnedBy(obj(bootstrap), bootstrap), "the namespace's bootstrap PKI is every setup's")
	assert.True(t, OwnedBy(obj(pki.Labels("rootshard", "web", "server")), pki.Labels("rootshard", "web", "server")))
	assert.False(t, OwnedBy(obj(pki.Labels("rootshard", "web", "server")), pki.Labels("shard", "web", "server")))
	assert.False(t, OwnedBy(obj(nil), bootstrap))
	assert.False(t, OwnedBy(obj(pki.Labels("rootshard", "kcp-pki", "ca")), bootstrap), "the bootstrap PKI never takes a setup's object")
}

// TestTheOwnersUIDMarksWhatItWrites: in a reconcile of an owner, what carries the owner's
// label is written with its UID; what another object of the same name wrote (a leftover of a
// deleted one, or a Shard next to a RootShard of one name) is never written, whether the
// cache holds it or not; an object from before the mark, with none, stays this owner's.
func TestTheOwnersUIDMarksWhatItWrites(t *testing.T) {
	labels := pki.Labels("frontproxy", "app", "front-proxy")
	ctx := WithOwner(t.Context(), Owner{Kind: "frontproxy", Name: "app", UID: "uid-1"})
	marked := func(uid string) map[string]string {
		l := maps.Clone(labels)
		l[pki.LabelOwnerUID] = uid
		return l
	}
	desired := func(l map[string]string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap("app-config", "team-a").WithLabels(l)
	}
	existing := func(l map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "team-a", Labels: l}}
	}

	t.Run("the first write carries the UID", func(t *testing.T) {
		applies := 0
		a := configMapApplier(nil, &applies)
		a.Mark = func(o *corev1ac.ConfigMapApplyConfiguration, l map[string]string) { o.WithLabels(l) }
		d := desired(labels)
		_, err := a.ApplyIfChanged(ctx, d)
		require.NoError(t, err)
		assert.Equal(t, "uid-1", d.Labels[pki.LabelOwnerUID])
	})
	t.Run("not another owners object, nor the shared bootstrap PKI", func(t *testing.T) {
		applies := 0
		a := configMapApplier(nil, &applies)
		a.Mark = func(o *corev1ac.ConfigMapApplyConfiguration, l map[string]string) { o.WithLabels(l) }
		for _, l := range []map[string]string{pki.Labels("rootshard", "app", "kcp"), {pki.LabelManagedBy: pki.ManagedBy}} {
			d := desired(l)
			_, err := a.ApplyIfChanged(ctx, d)
			require.NoError(t, err)
			assert.NotContains(t, d.Labels, pki.LabelOwnerUID)
		}
	})
	for _, tc := range []struct {
		name     string
		host     map[string]string
		conflict bool
	}{
		{name: "same UID", host: marked("uid-1")},
		{name: "written before the mark", host: labels},
		{name: "a deleted owner of the same name", host: marked("uid-0"), conflict: true},
	} {
		t.Run("first write "+tc.name, func(t *testing.T) {
			applies := 0
			_, err := configMapApplier(existing(tc.host), &applies).ApplyIfChanged(ctx, desired(marked("uid-1")))
			if !tc.conflict {
				require.NoError(t, err)
				return
			}
			var conflict *NameConflictError
			require.ErrorAs(t, err, &conflict)
			assert.Contains(t, err.Error(), "UID uid-0")
			assert.Zero(t, applies)
		})
		t.Run("cached "+tc.name, func(t *testing.T) {
			applies := 0
			a := configMapApplier(nil, &applies)
			a.Get = func(string, string) (metav1.Object, error) { return existing(tc.host), nil }
			_, err := a.ApplyIfChanged(ctx, desired(marked("uid-1")))
			if !tc.conflict {
				require.NoError(t, err)
				assert.Equal(t, 1, applies)
				return
			}
			var conflict *NameConflictError
			require.ErrorAs(t, err, &conflict)
			assert.Zero(t, applies, "never written")
		})
	}
}

// TestDeletionSelectsTheOwnersUID: deletion selects what carries the owner's UID, and what
// carries none (written before the mark), never another UID.
func TestDeletionSelectsTheOwnersUID(t *testing.T) {
	selectors := OwnedSelectors("rootshard", "web", "uid-1")
	require.Len(t, selectors, 2)
	matches := func(l map[string]string) bool {
		for _, s := range selectors {
			sel, err := k8slabels.Parse(s)
			require.NoError(t, err)
			if sel.Matches(k8slabels.Set(l)) {
				return true
			}
		}
		return false
	}
	ours := pki.Labels("rootshard", "web", "server")
	withUID := func(uid string) map[string]string {
		l := maps.Clone(ours)
		l[pki.LabelOwnerUID] = uid
		return l
	}
	assert.True(t, matches(withUID("uid-1")))
	assert.True(t, matches(ours), "written before the mark")
	assert.False(t, matches(withUID("uid-0")), "a leftover of a deleted RootShard web")
	assert.False(t, matches(pki.Labels("shard", "web", "server")))
	assert.False(t, matches(map[string]string{"team": "b"}))
}
