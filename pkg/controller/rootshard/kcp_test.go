package rootshard

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// TestRootShardKcpReady: KcpReady says what the root shard's /readyz answers, from a kcp
// asked only while the Deployment is available; Available and the phase stay the
// Deployment's.
func TestRootShardKcpReady(t *testing.T) {
	for _, tc := range []struct {
		name                string
		kcp                 func(k *controllertest.Kcp)
		deploymentAvailable bool
		status              metav1.ConditionStatus
		reason, message     string
		event               string
	}{
		{"ready", func(*controllertest.Kcp) {}, true, metav1.ConditionTrue, "Ready", "kcp's /readyz answers 200", "Normal KcpReady"},
		{"not ready", func(k *controllertest.Kcp) {
			k.NotReady["root"] = controllertest.Readyz{Status: 500, Body: "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"}
		}, true, metav1.ConditionFalse, "NotReady", "kcp's /readyz answered 500: [-]etcd failed: reason withheld", "Warning KcpNotReady"},
		{"unreachable", func(k *controllertest.Kcp) { k.Down = true }, true, metav1.ConditionFalse, "KcpUnreachable", "kcp cannot be reached", "Warning KcpUnreachable"},
		{"credentials not issued", func(k *controllertest.Kcp) { k.NoCredentials = true }, true, metav1.ConditionFalse, "WaitingForCredentials",
			"waiting for the server's credentials toward kcp", "Warning WaitingForCredentials"},
		{"deployment unavailable", func(*controllertest.Kcp) {}, false, metav1.ConditionUnknown, "WaitingForDeployment",
			"kcp is asked once its Deployment is available", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testRootShard())
			f.converge(t)
			k := controllertest.NewKcp(t)
			k.Set(tc.kcp)
			health := kcphealth.NewPoller(time.Hour)
			events := record.NewFakeRecorder(10)
			f.Host.Kcp, f.Host.KcpHealth, f.c.Recorder = k, health, events
			f.c.Loop = controller.NewLoop(rootshard.Kind, f.c.SyncKey)
			t.Cleanup(f.c.Loop.Queue.ShutDown)
			if !tc.deploymentAvailable {
				obj, exists, err := f.Host.Caches["deployments"].GetByKey("team-a/root-kcp")
				require.NoError(t, err)
				require.True(t, exists)
				d := obj.(*appsv1.Deployment).DeepCopy()
				d.Status.ReadyReplicas = 0
				require.NoError(t, f.Host.Caches["deployments"].Update(d))
			}

			for range 2 {
				require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
				health.Wait()
				rs, err := f.Ours.OperatorV1alpha1().RootShards("team-a").Get(t.Context(), "root", metav1.GetOptions{})
				require.NoError(t, err)
				require.NoError(t, f.Caches.RootShards.Update(rs))
			}
			rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
			require.NoError(t, err)
			c := meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionKcpReady)
			require.NotNil(t, c)
			assert.Equal(t, tc.status, c.Status)
			assert.Equal(t, tc.reason, c.Reason)
			assert.Contains(t, c.Message, tc.message)
			assert.Equal(t, tc.deploymentAvailable, meta.IsStatusConditionTrue(rs.Status.Conditions, operatorv1alpha1.ConditionAvailable),
				"Available stays the Deployment's")
			assert.True(t, meta.IsStatusConditionTrue(rs.Status.Conditions, operatorv1alpha1.ConditionSynced))
			if tc.deploymentAvailable {
				assert.Equal(t, operatorv1alpha1.PhaseRunning, rs.Status.Phase, "Running stays the Deployment's and certificates'")
				want := []string{"GET /rootshards/root/readyz"}
				if tc.reason == operatorv1alpha1.ReasonWaitingForCredentials {
					want = []string{} // nothing to ask with
				}
				assert.Equal(t, want, k.Requests(), "asked once, however often reconciled within the interval")
			} else {
				assert.Empty(t, k.Requests(), "not asked while the Deployment is unavailable")
			}
			var got []string
			for len(events.Events) > 0 {
				got = append(got, <-events.Events)
			}
			if tc.event == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.True(t, strings.HasPrefix(got[0], tc.event), got[0])
		})
	}
}
