package rootshard

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// TestRefusedWriteIsReportedAndHeals: while the host refuses the Deployment, the RootShard
// says so in Synced and in a Warning Event, both with the refusal's reason; once the host
// takes writes again, the next sync realizes the change and Synced turns True.
func TestRefusedWriteIsReportedAndHeals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refusal error
		reason  string
	}{
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "root-kcp",
			errors.New(`User "system:serviceaccount:kcp-setups:kcp-setups" cannot patch resource "deployments" in API group "apps"`)), "Forbidden"},
		{"throttled", apierrors.NewTooManyRequests("the server has received too many requests", 1), "TooManyRequests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testRootShard())
			f.converge(t)
			events := record.NewFakeRecorder(100)
			f.c.Recorder = events
			synced := func() *metav1.Condition {
				rs, err := f.Ours.OperatorV1alpha1().RootShards("team-a").Get(t.Context(), "root", metav1.GetOptions{})
				require.NoError(t, err)
				return meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionSynced)
			}
			require.NotNil(t, synced())
			assert.Equal(t, metav1.ConditionTrue, synced().Status)

			apply := f.Host.DeploymentApplier.Apply
			f.Host.DeploymentApplier.Apply = func(context.Context, *appsv1ac.DeploymentApplyConfiguration) (metav1.Object, error) {
				return nil, tc.refusal
			}
			rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
			require.NoError(t, err)
			rs = rs.DeepCopy()
			rs.Spec.Replicas = new(int32(3))
			rs.Generation = 2
			require.NoError(t, f.Caches.RootShards.Update(rs))

			err = f.c.SyncKey(t.Context(), "team-a/root")
			require.Error(t, err, "the key is retried with backoff")
			c := synced()
			require.NotNil(t, c)
			assert.Equal(t, metav1.ConditionFalse, c.Status)
			assert.Equal(t, tc.reason, c.Reason)
			assert.Contains(t, c.Message, "applying Deployment team-a/root-kcp")
			assert.Contains(t, c.Message, tc.refusal.Error())
			assert.EqualValues(t, 2, c.ObservedGeneration)
			require.Len(t, events.Events, 1)
			assert.True(t, strings.HasPrefix(<-events.Events, "Warning "+tc.reason+" applying Deployment team-a/root-kcp"))

			// The same failure again writes no status: its informer event would requeue the key
			// at once, past the backoff.
			f.Reset()
			f.hostCatchesUp(t)
			require.Error(t, f.c.SyncKey(t.Context(), "team-a/root"))
			assert.Empty(t, f.Writes())

			f.Host.DeploymentApplier.Apply = apply
			require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
			assert.Contains(t, f.Writes(), "Deployment root-kcp")
			c = synced()
			assert.Equal(t, metav1.ConditionTrue, c.Status)
			assert.Equal(t, "Reconciled", c.Reason)
		})
	}
}
