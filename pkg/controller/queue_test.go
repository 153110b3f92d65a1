package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestMembershipHandlerIgnoresUpdates: siblings are re-reconciled when an object appears or
// goes, not on each of its status updates.
func TestMembershipHandlerIgnoresUpdates(t *testing.T) {
	l := NewLoop("test", func(context.Context, string) error { return nil })
	defer l.Queue.ShutDown()
	h := l.MembershipHandler(func(m metav1.Object) []string { return []string{"ns/sibling-of-" + m.GetName()} })
	obj := &metav1.ObjectMeta{Namespace: "ns", Name: "a"}

	h.OnUpdate(obj, obj)
	assert.Equal(t, 0, l.Queue.Len(), "an update enqueues nothing")
	h.OnAdd(obj, false)
	assert.Equal(t, 1, l.Queue.Len())
	key, _ := l.Queue.Get()
	assert.Equal(t, "ns/sibling-of-a", key)
	l.Queue.Done(key)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: obj})
	assert.Equal(t, 1, l.Queue.Len(), "a deletion, even seen late")
}
