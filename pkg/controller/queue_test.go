package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
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

// TestRetryLaterKeepsItsFloor: a failure marked RetryLater comes back no sooner than its
// floor, where any other failure comes back after the backoff's first few milliseconds.
func TestRetryLaterKeepsItsFloor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		backSoon bool
	}{
		{"plain failure", errors.New("host refused"), true},
		{"kcp failure", RetryKcpLater(errors.New("kcp cannot be reached")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLoop("test", func(context.Context, string) error { return tc.err })
			defer l.Queue.ShutDown()
			l.Queue.Add("ns/name")
			require.True(t, l.next(t.Context()))
			assert.Equal(t, 1, l.Queue.NumRequeues("ns/name"), "the backoff grows either way")
			// Far more than the first backoff step (5 ms), far less than the floor (5 s).
			time.Sleep(200 * time.Millisecond)
			assert.Equal(t, tc.backSoon, l.Queue.Len() == 1)
		})
	}
}

// TestConflictsAreNotErrorLines: a reconcile that met a newer version of an object is
// retried like any failure, but logged at V(2), not as an error: it is routine. Any other
// failure is an error line.
func TestConflictsAreNotErrorLines(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		errorLine bool
	}{
		{"conflict", fmt.Errorf("writing the status: %w", apierrors.NewConflict(schema.GroupResource{Group: "operator.kcp.io", Resource: "rootshards"}, "root", errors.New("the object has been modified"))), false},
		{"other failure", errors.New("host refused"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(ktesting.NopTL{}, ktesting.NewConfig(ktesting.Verbosity(2), ktesting.BufferLogs(true)))
			l := NewLoop("test", func(context.Context, string) error { return tc.err })
			defer l.Queue.ShutDown()
			l.Queue.Add("ns/name")
			require.True(t, l.next(klog.NewContext(t.Context(), logger)))
			assert.Equal(t, 1, l.Queue.NumRequeues("ns/name"), "retried either way")
			log := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			assert.Equal(t, tc.errorLine, strings.Contains(log, "ERROR"), log)
			assert.Contains(t, log, `key="ns/name"`)
		})
	}
}
