package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// managedEtcdShard has a managed etcd with every field set, and asks for its volumes to go
// with it.
func managedEtcdShard() *operatorv1alpha1.Shard {
	s := minimalShard()
	s.UID = "shard-uid"
	s.Annotations = map[string]string{operatorv1alpha1.AnnotationDeleteEtcdVolumes: "true"}
	size := resource.MustParse("20Gi")
	s.Spec.Etcd = operatorv1alpha1.EtcdConfig{Prefix: "/kcp", Managed: &operatorv1alpha1.ManagedEtcd{
		Replicas: ptr.To[int32](5),
		Storage:  &operatorv1alpha1.EtcdStorage{VolumeSize: &size, StorageClassName: ptr.To("fast-ssd")},
		Image: &operatorv1alpha1.ImageSpec{Repository: "registry.example.com/etcd", Tag: "v3.7.1",
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		Template: &operatorv1alpha1.DeploymentTemplate{
			Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a", "app.kubernetes.io/component": "mine"}},
			Spec: &operatorv1alpha1.DeploymentSpecTemplate{Template: &operatorv1alpha1.PodTemplateSpec{
				Metadata: &operatorv1alpha1.MetadataTemplate{Annotations: map[string]string{"prometheus.io/port": "2381"}},
				Spec: &operatorv1alpha1.PodSpecTemplate{
					NodeSelector: map[string]string{"disk": "ssd"},
					Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "etcd", Effect: corev1.TaintEffectNoSchedule}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelTopologyZone}}}},
				},
			}},
		},
	}}
	s.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		"etcd-server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"etcd.shard-1.internal"}}},
	}
	return s
}

func TestManagedEtcdGolden(t *testing.T) {
	s, rs := managedEtcdShard(), rootShard()
	e := Etcd(s, rs)
	require.NotNil(t, e)
	k := Server(s, rs)
	k.ServiceAccountIssuers = issuers
	ss := e.StatefulSet(workload.SecretsHash(map[string]string{e.ServerSecret(): "1", e.PeerSecret(): "2"}))
	objects := []any{k.Deployment(nil, "hash"), ss, e.Service(), e.PeerService(), e.DisruptionBudget()}
	for _, c := range Certificates(s, rs) {
		objects = append(objects, c)
	}
	golden.Assert(t, "etcd-managed", objects...)
}

func TestManagedEtcd(t *testing.T) {
	assert.Nil(t, Etcd(minimalShard(), rootShard()), "a Shard with endpoints has no managed etcd")

	s, rs := managedEtcdShard(), rootShard()
	e := Etcd(s, rs)
	assert.Equal(t, "shard-1-shard-etcd", e.Name())
	assert.Len(t, e.ClientURLs(), 5)
	assert.Equal(t, "https://shard-1-shard-etcd-4.shard-1-shard-etcd-peers.team-a.svc.cluster.local:2379", e.ClientURLs()[4])

	args := Server(s, rs).Args()
	assert.Contains(t, args, "--etcd-prefix=/kcp", "a managed etcd keeps the spec's prefix")
	assert.Contains(t, args, "--etcd-cafile=/etc/etcd/tls/ca.crt")

	ss := e.StatefulSet("h")
	assert.Equal(t, ptr.To(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted,
		"the StatefulSet controller deletes no claim, whoever's: the owner's annotation has the server delete its own")
	claim := ss.Spec.VolumeClaimTemplates[0]
	assert.Equal(t, "shard-uid", claim.Labels["operator.kcp.io/owner-uid"], "the claims carry the owner's UID")
	assert.Equal(t, "shard-1", claim.Labels["operator.kcp.io/shard"])
	assert.Equal(t, []string{"data-shard-1-shard-etcd-0", "data-shard-1-shard-etcd-1", "data-shard-1-shard-etcd-2",
		"data-shard-1-shard-etcd-3", "data-shard-1-shard-etcd-4"}, e.ClaimNames(), "as the StatefulSet controller names them")
	e.OwnerUID = ""
	assert.NotContains(t, e.StatefulSet("h").Spec.VolumeClaimTemplates[0].Labels, "operator.kcp.io/owner-uid",
		"a StatefulSet from before the mark keeps its claim templates")
	assert.Equal(t, "etcd", ss.Labels["app.kubernetes.io/component"], "a template's labels do not replace ours")
	assert.Equal(t, "a", ss.Labels["team"])
	assert.Nil(t, ss.Spec.Template.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		"a template's affinity replaces the default one")

	s.Annotations = nil
	assert.Equal(t, ptr.To(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), Etcd(s, rs).StatefulSet("h").Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted,
		"the volumes stay by default")

	issuer := map[string]string{}
	for _, c := range Certificates(s, rs) {
		issuer[*c.Name] = *c.Spec.IssuerRef.Name
		assert.Equal(t, "shard-1", c.Labels["operator.kcp.io/shard"])
	}
	assert.Equal(t, "root-etcd-client-ca", issuer["shard-1-shard-etcd-server"], "the RootShard's etcd CAs sign a Shard's etcd")
	assert.Equal(t, "root-etcd-peer-ca", issuer["shard-1-shard-etcd-peer"])
	assert.Equal(t, "root-etcd-client-ca", issuer["shard-1-shard-etcd-client"])
}

func TestManagedEtcdSingleMemberHasNoDisruptionBudget(t *testing.T) {
	s := managedEtcdShard()
	s.Spec.Etcd.Managed.Replicas = ptr.To[int32](1)
	e := Etcd(s, rootShard())
	assert.Nil(t, e.DisruptionBudget(), "a budget would block every drain")
	assert.Equal(t, []string{"https://shard-1-shard-etcd-0.shard-1-shard-etcd-peers.team-a.svc.cluster.local:2379"}, e.ClientURLs())
	assert.Contains(t, e.Args(), "--initial-cluster=shard-1-shard-etcd-0=https://shard-1-shard-etcd-0.shard-1-shard-etcd-peers.team-a.svc.cluster.local:2380")
}
