package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateResources(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	tests := []struct {
		name string
		res  *corev1.ResourceRequirements
		want []wantErr
	}{
		{name: "absent", res: nil},
		{name: "request equals limit", res: &corev1.ResourceRequirements{Requests: list("cpu", "1", "memory", "1Gi"), Limits: list("cpu", "1000m", "memory", "1Gi")}},
		{name: "request without limit", res: &corev1.ResourceRequirements{Requests: list("cpu", "4")}},
		{
			name: "negative quantities",
			res:  &corev1.ResourceRequirements{Requests: list("cpu", "-1"), Limits: list("memory", "-1Gi")},
			want: []wantErr{invalid("spec.resources.requests[cpu]", "must be greater than or equal to 0"), invalid("spec.resources.limits[memory]")},
		},
		{
			name: "request above limit",
			res:  &corev1.ResourceRequirements{Requests: list("cpu", "2", "memory", "1Gi"), Limits: list("cpu", "1", "memory", "2Gi")},
			want: []wantErr{invalid("spec.resources.requests[cpu]", "must be less than or equal to cpu limit of 1")},
		},
		{
			name: "negative limit is reported once",
			res:  &corev1.ResourceRequirements{Requests: list("cpu", "1"), Limits: list("cpu", "-1")},
			want: []wantErr{invalid("spec.resources.limits[cpu]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateResources(tc.res, field.NewPath("spec", "resources")))
		})
	}
}
