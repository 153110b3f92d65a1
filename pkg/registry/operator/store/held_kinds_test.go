package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// TestAnUpdateOfAHeldValueIsAskedAgain runs the RootShard kind's own check, as its REST does
// on update, for eve, who may do nothing directly: on a stored RootShard that the admin gave
// an external-dns hostname, a pod label, a CSI volume and a CA Secret reflected to one
// namespace, a change of any of those values is a 403 naming the field and the right, and an
// update that changes none of them asks nothing.
func TestAnUpdateOfAHeldValueIsAskedAgain(t *testing.T) {
	type values struct{ hostname, app, vault, reflectTo string }
	rs := func(v values) *operator.RootShard {
		o := &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"}}
		o.Spec.ServiceTemplate = &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": v.hostname}}}
		o.Spec.DeploymentTemplate = &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
			Metadata: &operator.MetadataTemplate{Labels: map[string]string{"app": v.app}}}}}
		o.Spec.ExtraVolumes = []corev1.Volume{{Name: "vault", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
			Driver: "secrets-store.csi.k8s.io", VolumeAttributes: map[string]string{"secretProviderClass": v.vault}}}}}
		o.Spec.CertificateTemplates = operator.CertificateTemplateMap{"client-ca": {Spec: &operator.CertificateSpecTemplate{
			SecretTemplate: &operator.MetadataTemplate{Annotations: map[string]string{
				"reflector.v1.k8s.emberstack.com/reflection-allowed-namespaces": v.reflectTo}}}}}
		return o
	}
	admin := values{hostname: "kcp.team-a.example.com", app: "kcp", vault: "team-a", reflectTo: "team-a"}
	var asked []string
	deny := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, a.GetVerb()+" "+a.GetResource())
		return authorizer.DecisionNoOpinion, "no RBAC rule", nil
	})
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"})

	unchanged := rs(admin)
	unchanged.Labels = map[string]string{"team": "a"}
	require.NoError(t, store.CheckRequest(ctx, &rootshard.Kind, deny, unchanged, rs(admin)), "an edit of nothing held asks nothing")
	assert.Empty(t, asked)

	for _, tc := range []struct {
		name   string
		change func(*values)
		says   string
	}{
		{"the external-dns hostname", func(v *values) { v.hostname = "login.bank.example.com" },
			"spec.serviceTemplate.metadata to external-dns.alpha.kubernetes.io/hostname without create on services"},
		{"the pod label's value", func(v *values) { v.app = "payments" },
			"spec.deploymentTemplate.spec.template.metadata.labels to app without create on deployments.apps"},
		{"the CSI volume's attributes", func(v *values) { v.vault = "payments" },
			"spec.extraVolumes[0].csi to CSI driver secrets-store.csi.k8s.io without create on pods"},
		{"the CA Secret's reflector namespaces", func(v *values) { v.reflectTo = "team-a,payments" },
			"spec.certificateTemplates[client-ca].spec.secretTemplate to reflector.v1.k8s.emberstack.com/reflection-allowed-namespaces without patch on secrets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := admin
			tc.change(&v)
			asked = nil
			err := store.CheckRequest(ctx, &rootshard.Kind, deny, rs(v), rs(admin))
			require.Error(t, err)
			assert.Len(t, asked, 1, "only the changed value is asked again")
			assert.Contains(t, err.Error(), `user "eve" may not set `+tc.says)
		})
	}
}
