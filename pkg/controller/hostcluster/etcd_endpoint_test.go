package hostcluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// A member's own endpoint is verified by a name the members' serving certificate carries,
// and leads to that member's pod alone.
func TestEtcdMemberEndpoint(t *testing.T) {
	spec := &operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{Replicas: ptr.To[int32](3)}}}
	e := etcd.New("rootshard", &metav1.ObjectMeta{Name: "root", Namespace: "ns"}, spec, "root", "root")
	var server []string
	for _, l := range e.Leaves() {
		if l.Name == e.ServerSecret() {
			server = l.DNSNames
		}
	}
	seen := map[string]bool{}
	for i := range e.Replicas() {
		ep := EtcdMemberEndpoint(e, i)
		assert.Equal(t, "ns", ep.Namespace)
		assert.Equal(t, int32(etcd.ClientPort), ep.Port)
		assert.Contains(t, server, ep.ServerName(), "member %d", i)
		assert.Equal(t, e.MemberName(i), ep.Selector[appsv1.StatefulSetPodNameLabel])
		for k, v := range e.SelectorLabels() {
			assert.Equal(t, v, ep.Selector[k], "the member's pod is one of the cluster's")
		}
		assert.False(t, seen[ep.URL()], "each member has its own URL, so its own transport")
		seen[ep.URL()] = true
	}
	assert.NotContains(t, EtcdEndpoint(e).Selector, appsv1.StatefulSetPodNameLabel, "the cluster's endpoint is left as it was")
}
