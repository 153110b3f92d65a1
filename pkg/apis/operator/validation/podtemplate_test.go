package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidatePodSpecTemplate(t *testing.T) {
	const p = "spec.deploymentTemplate.spec.template.spec"
	tests := []struct {
		name string
		spec *operator.PodSpecTemplate
		want []wantErr
	}{
		{name: "absent"},
		{
			name: "valid",
			spec: &operator.PodSpecTemplate{
				NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
				Affinity:     &corev1.Affinity{},
				Tolerations: []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "kcp", Effect: corev1.TaintEffectNoSchedule},
					{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](30)},
					{Key: "node-role.kubernetes.io/kcp", Operator: corev1.TolerationOpExists},
					{Key: "dedicated", Value: "kcp"},
				},
				HostAliases:      []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"etcd.local"}}},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
					{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway},
				},
			},
		},
		{
			name: "bad node selector",
			spec: &operator.PodSpecTemplate{NodeSelector: map[string]string{"a": "-"}},
			want: []wantErr{invalid(p + ".nodeSelector")},
		},
		{
			name: "bad toleration key",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Key: "a b", Operator: corev1.TolerationOpExists}}},
			want: []wantErr{invalid(p + ".tolerations[0].key")},
		},
		{
			name: "unknown toleration operator",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Key: "a", Operator: "In"}}},
			want: []wantErr{notSupported(p+".tolerations[0].operator", `supported values: "Equal", "Exists"`)},
		},
		{
			name: "Exists with a value",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, Value: "b"}}},
			want: []wantErr{invalid(p+".tolerations[0].value", "must be empty when operator is Exists")},
		},
		{
			name: "Equal without a key",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "b"}}},
			want: []wantErr{invalid(p+".tolerations[0].operator", "must be Exists when key is empty")},
		},
		{
			name: "Equal with a bad value",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Key: "a", Value: "b c"}}},
			want: []wantErr{invalid(p + ".tolerations[0].value")},
		},
		{
			name: "unknown effect",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, Effect: "Evict"}}},
			want: []wantErr{notSupported(p + ".tolerations[0].effect")},
		},
		{
			name: "tolerationSeconds without NoExecute",
			spec: &operator.PodSpecTemplate{Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr[int64](5)}}},
			want: []wantErr{invalid(p+".tolerations[0].effect", "must be NoExecute when tolerationSeconds is set")},
		},
		{
			name: "bad host aliases",
			spec: &operator.PodSpecTemplate{HostAliases: []corev1.HostAlias{{Hostnames: []string{"ok"}}, {IP: "300.1.1.1", Hostnames: []string{"", "Bad_Host"}}}},
			want: []wantErr{
				required(p + ".hostAliases[0].ip"), invalid(p + ".hostAliases[1].ip"),
				required(p + ".hostAliases[1].hostnames[0]"), invalid(p + ".hostAliases[1].hostnames[1]"),
			},
		},
		{
			name: "bad image pull secret",
			spec: &operator.PodSpecTemplate{ImagePullSecrets: []corev1.LocalObjectReference{{Name: ""}}},
			want: []wantErr{required(p + ".imagePullSecrets[0].name")},
		},
		{
			name: "bad topology spread constraint",
			spec: &operator.PodSpecTemplate{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{WhenUnsatisfiable: "Never"}}},
			want: []wantErr{
				invalid(p+".topologySpreadConstraints[0].maxSkew", "must be greater than zero"),
				required(p + ".topologySpreadConstraints[0].topologyKey"),
				notSupported(p+".topologySpreadConstraints[0].whenUnsatisfiable", `supported values: "DoNotSchedule", "ScheduleAnyway"`),
			},
		},
		{
			name: "topology key not a qualified name",
			spec: &operator.PodSpecTemplate{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "zone/a/b", WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			want: []wantErr{invalid(p + ".topologySpreadConstraints[0].topologyKey")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validatePodSpecTemplate(tc.spec, field.NewPath("spec", "deploymentTemplate", "spec", "template", "spec")))
		})
	}
}
