package hostcluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// object is a desired object of the test: a name and a value.
type object struct{ Name, Value string }

// fakeHost holds one object as the cache shows it, and counts applies; each apply bumps the
// generation when the value changes, as a spec change does.
type fakeHost struct {
	cached  *metav1.ObjectMeta
	applies int
}

func (h *fakeHost) applier() Applied[*object] {
	var annotations map[string]string
	return Applied[*object]{
		Kind:     "Thing",
		Key:      func(o *object) (string, string) { return "ns", o.Name },
		Annotate: func(_ *object, a map[string]string) { annotations = a },
		Get: func(_, name string) (metav1.Object, error) {
			if h.cached == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, name)
			}
			return h.cached, nil
		},
		Apply: func(_ context.Context, o *object) (metav1.Object, error) {
			h.applies++
			gen := int64(1)
			if h.cached != nil {
				gen = h.cached.Generation + 1
			}
			h.cached = &metav1.ObjectMeta{Namespace: "ns", Name: o.Name, Generation: gen, Annotations: annotations}
			return h.cached, nil
		},
	}
}

func TestDriftOfTheSpecIsUndone(t *testing.T) {
	h := &fakeHost{}
	a := h.applier().WithDriftDetection()
	apply := func() bool {
		wrote, err := a.ApplyIfChanged(t.Context(), &object{Name: "x", Value: "v"})
		require.NoError(t, err)
		return wrote
	}
	require.True(t, apply(), "created")
	assert.False(t, apply(), "unchanged: nothing written")

	h.cached.Generation++ // someone edits the spec
	assert.True(t, apply(), "the edit is undone")
	assert.False(t, apply(), "and then nothing is written")

	h.cached = h.cached.DeepCopy()
	h.cached.Generation-- // a cache that lags behind our own write
	assert.False(t, apply(), "a stale cache is no drift")

	restarted := h.applier().WithDriftDetection()
	h.cached.Generation += 5
	wrote, err := restarted.ApplyIfChanged(t.Context(), &object{Name: "x", Value: "v"})
	require.NoError(t, err)
	assert.False(t, wrote, "after a restart the desired hash alone decides: a resync writes nothing")
	assert.Equal(t, 2, h.applies, "one create, one undo")
}

// TestReturnedHearsWhatIsOurs: Returned hears the object an apply wrote, and the one it found
// up to date (after a restart, the first reconcile finds everything so), not one it failed
// to write.
func TestReturnedHearsWhatIsOurs(t *testing.T) {
	h := &fakeHost{}
	var heard []string
	a := h.applier()
	a.Returned = func(obj metav1.Object) { heard = append(heard, obj.GetName()) }
	_, err := a.ApplyIfChanged(t.Context(), &object{Name: "x", Value: "v"})
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, heard, "written")
	wrote, err := a.ApplyIfChanged(t.Context(), &object{Name: "x", Value: "v"})
	require.NoError(t, err)
	require.False(t, wrote)
	assert.Equal(t, []string{"x", "x"}, heard, "up to date")

	a.Apply = func(context.Context, *object) (metav1.Object, error) {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "things"}, "y", nil)
	}
	_, err = a.ApplyIfChanged(t.Context(), &object{Name: "y", Value: "v"})
	require.Error(t, err)
	assert.Equal(t, []string{"x", "x"}, heard, "not written")
}
