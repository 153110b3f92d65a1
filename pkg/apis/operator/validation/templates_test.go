package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateDeploymentTemplate(t *testing.T) {
	labels := func(kv ...string) *operator.MetadataTemplate {
		m := &operator.MetadataTemplate{Labels: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			m.Labels[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		tmpl *operator.DeploymentTemplate
		want []wantErr
	}{
		{name: "absent"},
		{name: "metadata only", tmpl: &operator.DeploymentTemplate{Metadata: labels("team", "a")}},
		{name: "spec without template", tmpl: &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{}}},
		{
			name: "bad deployment labels",
			tmpl: &operator.DeploymentTemplate{Metadata: labels("team", "-a-")},
			want: []wantErr{invalid("spec.deploymentTemplate.metadata.labels")},
		},
		{
			name: "bad pod annotations",
			tmpl: &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
				Metadata: &operator.MetadataTemplate{Annotations: map[string]string{"a b": "c"}},
			}}},
			want: []wantErr{invalid("spec.deploymentTemplate.spec.template.metadata.annotations")},
		},
		{
			name: "pod spec is validated",
			tmpl: &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
				Spec: &operator.PodSpecTemplate{NodeSelector: map[string]string{"zone": "a b"}},
			}}},
			want: []wantErr{invalid("spec.deploymentTemplate.spec.template.spec.nodeSelector")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateDeploymentTemplate(tc.tmpl, field.NewPath("spec", "deploymentTemplate")))
		})
	}
}

func TestValidateServiceTemplate(t *testing.T) {
	spec := func(typ corev1.ServiceType, clusterIP string) *operator.ServiceTemplate {
		return &operator.ServiceTemplate{Spec: &operator.ServiceSpecTemplate{Type: typ, ClusterIP: clusterIP}}
	}
	tests := []struct {
		name string
		tmpl *operator.ServiceTemplate
		want []wantErr
	}{
		{name: "absent"},
		{name: "metadata only", tmpl: &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{Annotations: map[string]string{"lb.example.com/x": "y"}}}},
		{name: "defaults", tmpl: spec("", "")},
		{name: "NodePort", tmpl: spec(corev1.ServiceTypeNodePort, "")},
		{name: "headless", tmpl: spec(corev1.ServiceTypeClusterIP, "None")},
		{name: "fixed IPv6 cluster IP", tmpl: spec(corev1.ServiceTypeLoadBalancer, "fd00::10")},
		{
			name: "ExternalName",
			tmpl: spec(corev1.ServiceTypeExternalName, ""),
			want: []wantErr{notSupported("spec.serviceTemplate.spec.type", `supported values: "ClusterIP", "NodePort", "LoadBalancer"`)},
		},
		{
			name: "bad cluster IP",
			tmpl: spec("", "10.0.0"),
			want: []wantErr{invalid("spec.serviceTemplate.spec.clusterIP")},
		},
		{
			name: "headless LoadBalancer",
			tmpl: spec(corev1.ServiceTypeLoadBalancer, "None"),
			want: []wantErr{invalid("spec.serviceTemplate.spec.clusterIP", "may be None only when type is ClusterIP")},
		},
		{
			name: "bad labels",
			tmpl: &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{Labels: map[string]string{"a b": "x"}}},
			want: []wantErr{invalid("spec.serviceTemplate.metadata.labels")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateServiceTemplate(tc.tmpl, field.NewPath("spec", "serviceTemplate")))
		})
	}
}

// TestTemplatesMayNotSetTheServersKeys: no template anywhere sets an operator.kcp.io/ label
// or annotation, by which the server selects and trusts its own objects (a Secret labelled
// operator.kcp.io/reference is a copy it hands keys to).
func TestTemplatesMayNotSetTheServersKeys(t *testing.T) {
	own := &operator.MetadataTemplate{
		Labels:      map[string]string{"operator.kcp.io/reference": "shard-join", "team": "a"},
		Annotations: map[string]string{"x.operator.kcp.io/y": "1", "operator.kcp.io.example.com/z": "2"},
	}
	want := []wantErr{
		forbidden("spec.certificateTemplates[server].spec.secretTemplate.labels[operator.kcp.io/reference]", "the operator.kcp.io/ keys are the server's own"),
		forbidden("spec.certificateTemplates[server].spec.secretTemplate.annotations[x.operator.kcp.io/y]"),
	}
	rs := validRootShard()
	rs.Spec.CertificateTemplates["server"] = operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{SecretTemplate: own}}
	assertErrors(t, want, ValidateRootShard(rs))

	for name, set := range map[string]func(*operator.RootShard){
		"certificate": func(o *operator.RootShard) {
			o.Spec.CertificateTemplates["server"] = operator.CertificateTemplate{Metadata: own}
		},
		"service":    func(o *operator.RootShard) { o.Spec.ServiceTemplate = &operator.ServiceTemplate{Metadata: own} },
		"deployment": func(o *operator.RootShard) { o.Spec.DeploymentTemplate = &operator.DeploymentTemplate{Metadata: own} },
		"pods": func(o *operator.RootShard) {
			o.Spec.DeploymentTemplate = &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{Metadata: own}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := validRootShard()
			set(o)
			errs := ValidateRootShard(o)
			assert.Len(t, errs, 2, "%v", errs)
			for _, err := range errs {
				assert.Contains(t, err.Error(), "the operator.kcp.io/ keys are the server's own")
			}
		})
	}
}
