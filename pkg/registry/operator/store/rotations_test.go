package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestRotationStepsBelongToWhomTakesThem: one row per step and requester. The controllers'
// steps are the server's loopback user's alone (name and UID), Start and Complete the
// rotation subresource's alone; a writer of the status, such as sam with patch on
// rootshards/status, gets a 403 at status.rotations[i].phase for either.
func TestRotationStepsBelongToWhomTakesThem(t *testing.T) {
	at := &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rs := func(rotations ...operator.CARotationState) *operator.RootShard {
		return &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
			Status: operator.RootShardStatus{Rotations: rotations}}
	}
	preparing := operator.CARotationState{Authority: "client", Phase: operator.CARotationPreparing, Slot: 1, LastInitiationTime: at}
	switched := *preparing.DeepCopy()
	switched.LeavesSwitched = true
	prepared := *switched.DeepCopy()
	prepared.Phase, prepared.LastPreparedTime = operator.CARotationPrepared, at
	completing := *prepared.DeepCopy()
	completing.Phase, completing.LastCompletionTriggeredTime = operator.CARotationCompleting, at
	dropped := *completing.DeepCopy()
	dropped.LastCompletionTime = at

	controllers := &user.DefaultInfo{Name: user.APIServerUser, UID: "loopback-uid", Groups: []string{user.SystemPrivilegedGroup}}
	sam := &user.DefaultInfo{Name: "sam"}
	impostor := &user.DefaultInfo{Name: user.APIServerUser, UID: "another", Groups: []string{user.SystemPrivilegedGroup}}
	check := statusCheck{resource: "rootshards", controller: &ControllerIdentity{}, rotations: func(obj runtime.Object) ([]operator.CARotationState, bool) {
		o, ok := obj.(*operator.RootShard)
		if !ok {
			return nil, false
		}
		return o.Status.Rotations, true
	}}
	check.controller.Set(controllers)

	for _, tc := range []struct {
		name      string
		requester user.Info
		request   bool
		old, new  *operator.RootShard
		forbidden bool
	}{
		{"the controllers switch the leaves", controllers, false, rs(preparing), rs(switched), false},
		{"the controllers make it Prepared", controllers, false, rs(switched), rs(prepared), false},
		{"the controllers drop the old CA", controllers, false, rs(completing), rs(dropped), false},
		{"sam switches the leaves", sam, false, rs(preparing), rs(switched), true},
		{"sam makes it Prepared", sam, false, rs(switched), rs(prepared), true},
		{"sam drops the old CA", sam, false, rs(completing), rs(dropped), true},
		{"system:apiserver of the host cluster makes it Prepared", impostor, false, rs(switched), rs(prepared), true},
		{"the rotation subresource starts", sam, true, rs(), rs(preparing), false},
		{"the rotation subresource completes", sam, true, rs(prepared), rs(completing), false},
		{"sam starts through the status", sam, false, rs(), rs(preparing), true},
		{"sam completes through the status", sam, false, rs(prepared), rs(completing), true},
		{"the controllers start", controllers, false, rs(), rs(preparing), true},
		{"the rotation subresource makes it Prepared", sam, true, rs(switched), rs(prepared), true},
		{"sam writes the status and no rotation", sam, false, rs(preparing), rs(preparing), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := genericapirequest.WithUser(context.Background(), tc.requester)
			if tc.request {
				ctx = WithRotationRequest(ctx)
			}
			err := check.check(ctx, tc.new, tc.old)
			if !tc.forbidden {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "a 403, got %v", err)
			assert.Contains(t, err.Error(), "status.rotations[0].phase")
			assert.Contains(t, err.Error(), tc.requester.GetName())
		})
	}

	t.Run("before the server knows its controllers, no one takes their steps", func(t *testing.T) {
		unset := check
		unset.controller = &ControllerIdentity{}
		err := unset.check(genericapirequest.WithUser(context.Background(), controllers), rs(prepared), rs(switched))
		assert.True(t, apierrors.IsForbidden(err), "a 403, got %v", err)
	})
}

// TestServerWrittenStatusIsTheServersAlone: what a Link's remote reported (status.consumers)
// is changed by the server's loopback user alone; anyone else, an impostor of its name
// included, gets a 403 at its path, while a status write that leaves it as it is passes.
func TestServerWrittenStatusIsTheServersAlone(t *testing.T) {
	link := func(consumers ...operator.LinkConsumerStatus) *operator.Link {
		return &operator.Link{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Namespace: "team-a"}, Status: operator.LinkStatus{Consumers: consumers}}
	}
	shard := operator.LinkConsumerStatus{Kind: "Shard", Namespace: "b", Name: "s", UID: "u", Generation: 1, Sequence: 1}
	trusting := *shard.DeepCopy()
	trusting.Sequence, trusting.Trust = 2, []operator.LinkConsumerCA{{CA: "server", Trusted: []string{"aa"}}}
	withCondition := link(shard)
	withCondition.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}

	controllers := &user.DefaultInfo{Name: user.APIServerUser, UID: "loopback-uid", Groups: []string{user.SystemPrivilegedGroup}}
	sam := &user.DefaultInfo{Name: "sam"}
	impostor := &user.DefaultInfo{Name: user.APIServerUser, UID: "another", Groups: []string{user.SystemPrivilegedGroup}}
	check := statusCheck{resource: "links", controller: &ControllerIdentity{}, serverWritten: []serverWrittenCheck{{path: "status.consumers",
		why: "what a remote reports over its link", changed: func(obj, old runtime.Object) bool {
			return !assert.ObjectsAreEqual(obj.(*operator.Link).Status.Consumers, old.(*operator.Link).Status.Consumers)
		}}}}
	check.controller.Set(controllers)
	for _, tc := range []struct {
		name      string
		requester user.Info
		old, new  *operator.Link
		forbidden bool
	}{
		{"the server records a consumer", controllers, link(), link(shard), false},
		{"the server records a newer report", controllers, link(shard), link(trusting), false},
		{"sam forges a consumer", sam, link(), link(shard), true},
		{"sam forges its trust", sam, link(shard), link(trusting), true},
		{"sam drops the consumers", sam, link(shard), link(), true},
		{"an impostor of the server's name", impostor, link(shard), link(trusting), true},
		{"sam writes the conditions and leaves the consumers", sam, link(shard), withCondition, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := genericapirequest.WithUser(context.Background(), tc.requester)
			err := check.check(ctx, tc.new, tc.old)
			if !tc.forbidden {
				assert.NoError(t, err)
				return
			}
			require.True(t, apierrors.IsForbidden(err), "%v", err)
			assert.Contains(t, err.Error(), "status.consumers: user \""+tc.requester.GetName()+"\" may not change it: only the server writes what a remote reports over its link")
		})
	}
}
