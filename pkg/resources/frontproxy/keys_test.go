package frontproxy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// TestNoComponentMountsAnotherShardsServiceAccountKey scans the volumes of every builder's
// Deployment, with service-account authentication enabled everywhere: a service-account
// Secret that is not the component's own must be projected to tls.crt alone, so that no pod
// ever holds the private key another shard signs tokens with.
func TestNoComponentMountsAnotherShardsServiceAccountKey(t *testing.T) {
	enabled := func() *operatorv1alpha1.AuthSpec {
		return &operatorv1alpha1.AuthSpec{ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true}}
	}
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "ns"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{Auth: enabled()}}}
	issuers := []string{"root", "alpha", "beta"}
	ref := operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}

	deployments := map[string]*appsv1ac.DeploymentApplyConfiguration{}
	root := rootshard.Server(rs)
	root.ServiceAccountIssuers = issuers
	deployments["root"] = root.Deployment(nil, "h")
	for _, name := range []string{"alpha", "beta"} {
		s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: operatorv1alpha1.ShardSpec{RootShard: ref, CommonShardSpec: operatorv1alpha1.CommonShardSpec{Auth: enabled()}}}
		k := shard.Server(s, rs)
		k.ServiceAccountIssuers = issuers
		deployments[name] = k.Deployment(nil, "h")
	}
	fp := frontproxy.FrontProxy{RootShard: rs, ServiceAccountIssuers: issuers, FrontProxy: &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "ns"},
		Spec:       operatorv1alpha1.FrontProxySpec{RootShard: ref, Auth: enabled()}}}
	deployments["edge"] = fp.Deployment(nil, "h")

	for owner, d := range deployments {
		mounted := 0
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Secret == nil || !strings.HasSuffix(*v.Secret.SecretName, "-service-account") {
				continue
			}
			mounted++
			if *v.Secret.SecretName == owner+"-service-account" {
				continue // its own key pair, which it signs with
			}
			require.Len(t, v.Secret.Items, 1, "%s mounts all of %s", owner, *v.Secret.SecretName)
			assert.Equal(t, "tls.crt", *v.Secret.Items[0].Key, "%s mounts %s", owner, *v.Secret.SecretName)
			assert.Equal(t, "tls.crt", *v.Secret.Items[0].Path, "%s mounts %s", owner, *v.Secret.SecretName)
		}
		assert.Equal(t, 3, mounted, "%s verifies the tokens of every shard", owner)
	}
}
