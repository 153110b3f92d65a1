package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

func localRef(name string) *corev1.LocalObjectReference {
	return &corev1.LocalObjectReference{Name: name}
}

// TestWhatATenantMayNotGetForFree lists, one row per case of a tenant acting through the
// server, the right each field needs: references need use on what they name, copies need get,
// and templates and volumes need the right they stand for.
func TestWhatATenantMayNotGetForFree(t *testing.T) {
	const runs = ": create deployments.apps "
	podTemplate := func(labels, annotations map[string]string, pullSecrets ...string) *operator.DeploymentTemplate {
		spec := &operator.PodSpecTemplate{}
		for _, s := range pullSecrets {
			spec.ImagePullSecrets = append(spec.ImagePullSecrets, *localRef(s))
		}
		return &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
			Metadata: &operator.MetadataTemplate{Labels: labels, Annotations: annotations}, Spec: spec}}}
	}
	rootShard := func(mutate func(*operator.RootShardSpec)) []string {
		rs := &operator.RootShard{}
		mutate(&rs.Spec)
		return held(rootshard.Kind.Permissions(rs))
	}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{
			name: "a Shard joins a RootShard by name",
			got:  held(shard.Kind.Permissions(&operator.Shard{Spec: operator.ShardSpec{RootShard: operator.RootShardConfig{Reference: localRef("root")}}})),
			want: []string{"spec.rootShard.ref=RootShard/root: use rootshards.operator.kcp.io root"},
		},
		{
			name: "a Shard joins by a copy of the join Secret, and caches by a copy",
			got: held(shard.Kind.Permissions(&operator.Shard{Spec: operator.ShardSpec{
				RootShard: operator.RootShardConfig{SecretRef: localRef("root-shard-join")},
				Cache:     &operator.CacheConfig{SecretRef: localRef("cache-client")}}})),
			want: []string{
				"spec.rootShard.secretRef=Secret/root-shard-join: get secrets. root-shard-join",
				"spec.cache.secretRef=Secret/cache-client: get secrets. cache-client",
			},
		},
		{
			name: "a Shard joins and caches over a link",
			got: held(shard.Kind.Permissions(&operator.Shard{Spec: operator.ShardSpec{
				RootShard: operator.RootShardConfig{Link: &operator.RootShardLink{SecretRef: *localRef("eu-1-link-bootstrap")}},
				Cache:     &operator.CacheConfig{Link: &operator.RootShardLink{SecretRef: *localRef("eu-1-link-bootstrap")}}}})),
			want: []string{
				"spec.rootShard.link.secretRef=Secret/eu-1-link-bootstrap: get secrets. eu-1-link-bootstrap",
				"spec.cache.link.secretRef=Secret/eu-1-link-bootstrap: get secrets. eu-1-link-bootstrap",
			},
		},
		{
			name: "a RootShard's CacheServer and the VirtualWorkspace it announces",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.Cache = &operator.CacheConfig{Reference: localRef("cache")}
				s.KcpVirtualWorkspace = localRef("vw")
			}),
			want: []string{
				"spec.kcpVirtualWorkspace=VirtualWorkspace/vw: use virtualworkspaces.operator.kcp.io vw",
				"spec.cache.ref=CacheServer/cache: use cacheservers.operator.kcp.io cache",
			},
		},
		{
			name: "a Kubeconfig of a FrontProxy, and one of a copy of the issuer Secret",
			got: append(held(kubeconfig.Kind.Permissions(&operator.Kubeconfig{Spec: operator.KubeconfigSpec{Target: operator.KubeconfigTarget{FrontProxyRef: localRef("edge")}}})),
				held(kubeconfig.Kind.Permissions(&operator.Kubeconfig{Spec: operator.KubeconfigSpec{Target: operator.KubeconfigTarget{RootShardSecretRef: localRef("issuer")}}}))...),
			want: []string{
				"spec.target.frontProxyRef=FrontProxy/edge: use frontproxies.operator.kcp.io edge",
				"spec.target.rootShardSecretRef=Secret/issuer: get secrets. issuer",
			},
		},
		{
			name: "a managed etcd's image, pull Secret and template",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.Etcd.Managed = &operator.ManagedEtcd{
					Image:    &operator.ImageSpec{Repository: "evil.example.com/etcd", ImagePullSecrets: []corev1.LocalObjectReference{*localRef("pull")}},
					Template: podTemplate(map[string]string{"app": "payments"}, nil),
				}
			}),
			want: []string{
				"spec.etcd.managed.image.repository=evil.example.com/etcd: create statefulsets.apps ",
				"spec.etcd.managed.image.imagePullSecrets[0].name=Secret/pull: get secrets. pull",
				"spec.etcd.managed.template.spec.template.metadata.labels=app: create statefulsets.apps ",
			},
		},
		{
			name: "etcd's own repository at any tag",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.Etcd.Managed = &operator.ManagedEtcd{Image: &operator.ImageSpec{Repository: "quay.io/coreos/etcd", Tag: "v3.6.0"}}
			}),
		},
		{
			name: "kcp's arguments",
			got:  rootShard(func(s *operator.RootShardSpec) { s.ExtraArgs = []string{"--authorization-mode=AlwaysAllow"} }),
			want: []string{"spec.extraArgs=--authorization-mode=AlwaysAllow" + runs},
		},
		{
			name: "pod labels, annotations outside the allow-list, pull Secrets",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.DeploymentTemplate = podTemplate(map[string]string{"app": "payments"},
					map[string]string{"prometheus.io/scrape": "true", "sidecar.istio.io/inject": "false"}, "registry")
			}),
			want: []string{
				"spec.deploymentTemplate.spec.template.metadata.labels=app" + runs,
				"spec.deploymentTemplate.spec.template.metadata.annotations=sidecar.istio.io/inject" + runs,
				"spec.deploymentTemplate.spec.template.spec.imagePullSecrets[0].name=Secret/registry: get secrets. registry",
			},
		},
		{
			name: "pod annotations of the allow-list only",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.DeploymentTemplate = podTemplate(nil, map[string]string{"prometheus.io/scrape": "true", "kubectl.kubernetes.io/default-container": "kcp"})
			}),
		},
		{
			name: "the Deployment's own labels, and a Service's annotations",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.DeploymentTemplate = &operator.DeploymentTemplate{Metadata: &operator.MetadataTemplate{Annotations: map[string]string{"keel.sh/policy": "force"}}}
				s.ServiceTemplate = &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": "bank.example.com"}}}
			}),
			want: []string{
				"spec.serviceTemplate.metadata=external-dns.alpha.kubernetes.io/hostname: create services. ",
				"spec.deploymentTemplate.metadata=keel.sh/policy" + runs,
			},
		},
		{
			name: "a CA Secret's template",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.CertificateTemplates = operator.CertificateTemplateMap{"server-ca": {Spec: &operator.CertificateSpecTemplate{
					SecretTemplate: &operator.MetadataTemplate{Annotations: map[string]string{"reflector.v1.k8s.emberstack.com/reflection-allowed": "true"}}}}}
			}),
			want: []string{"spec.certificateTemplates[server-ca].spec.secretTemplate=reflector.v1.k8s.emberstack.com/reflection-allowed: patch secrets. "},
		},
		{
			name: "volumes: a claim, an inline CSI volume, an ephemeral volume, a service account token",
			got: rootShard(func(s *operator.RootShardSpec) {
				s.ExtraVolumes = []corev1.Volume{
					{Name: "a", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
					{Name: "b", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets-store.csi.k8s.io"}}},
					{Name: "c", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
					{Name: "d", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault"}}}}}},
					{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				}
			}),
			want: []string{
				"spec.extraVolumes[0].persistentVolumeClaim.claimName=PersistentVolumeClaim/data: get persistentvolumeclaims. data",
				"spec.extraVolumes[1].csi=CSI driver secrets-store.csi.k8s.io: create pods. ",
				"spec.extraVolumes[2].ephemeral=an ephemeral volume claim: create pods. ",
				`spec.extraVolumes[3].projected.sources[0].serviceAccountToken=a token for audience "vault": create pods. `,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}

// TestChangingAFrontProxysAuthUsesItsRootShardAgain: use on the RootShard is asked when the
// FrontProxy is created, and again whenever spec.auth changes, since auth decides whom the
// front door to that RootShard lets in; any other change does not ask it again. (An identity
// source in auth needs trust as well: TestIdentitySourcesNeedTrust.)
func TestChangingAFrontProxysAuthUsesItsRootShardAgain(t *testing.T) {
	fp := func(drop string, replicas int32) *operator.FrontProxy {
		return &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
			Spec: operator.FrontProxySpec{
				ComponentSpec: operator.ComponentSpec{Replicas: &replicas},
				RootShard:     operator.RootShardConfig{Reference: localRef("root")},
				Auth:          &operator.AuthSpec{DropGroups: []string{drop}},
			}}
	}
	var asked []string
	deny := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, a.GetVerb()+" "+a.GetResource()+" "+a.GetName())
		return authorizer.DecisionNoOpinion, "no RBAC rule", nil
	})
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})
	check := func(obj, old *operator.FrontProxy) error {
		asked = nil
		if old == nil {
			return store.CheckRequest(ctx, &frontproxy.Kind, deny, obj, nil)
		}
		return store.CheckRequest(ctx, &frontproxy.Kind, deny, obj, old)
	}

	err := check(fp("contractors", 2), nil)
	require.Error(t, err)
	assert.Equal(t, []string{"use rootshards root"}, asked, "one right, asked once for both fields")
	assert.Contains(t, err.Error(), `spec.rootShard.ref to RootShard/root without use on rootshards.operator.kcp.io "root"`)
	assert.Contains(t, err.Error(), `spec.auth to RootShard/root without use on rootshards.operator.kcp.io "root"`)

	require.NoError(t, check(fp("contractors", 3), fp("contractors", 2)), "scaling asks nothing")
	assert.Empty(t, asked)

	err = check(fp("interns", 2), fp("contractors", 2))
	require.Error(t, err, "another auth is a new use of the RootShard")
	assert.Equal(t, []string{"use rootshards root"}, asked)
	assert.Contains(t, err.Error(), "spec.auth to RootShard/root")
}

// TestAPathMappedToAVirtualWorkspaceNeedsUseOnIt: a FrontProxy that routes a path to a
// VirtualWorkspace with its request-header identity needs use on that VirtualWorkspace, by
// name (a 403 at the field without it), beside use on its RootShard; adding a mapping on
// update asks for the new VirtualWorkspace only.
func TestAPathMappedToAVirtualWorkspaceNeedsUseOnIt(t *testing.T) {
	fp := func(vws ...string) *operator.FrontProxy {
		o := &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
			Spec: operator.FrontProxySpec{RootShard: operator.RootShardConfig{Reference: localRef("root")}}}
		for _, vw := range vws {
			o.Spec.AdditionalPathMappings = append(o.Spec.AdditionalPathMappings,
				operator.PathMappingEntry{Path: "/services/" + vw, VirtualWorkspaceRef: localRef(vw)})
		}
		return o
	}
	var asked []string
	allowed := map[string]bool{"use rootshards root": true}
	authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		key := a.GetVerb() + " " + a.GetResource() + " " + a.GetName()
		asked = append(asked, key)
		if allowed[key] {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no RBAC rule", nil
	})
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})

	err := store.CheckRequest(ctx, &frontproxy.Kind, authz, fp("access"), nil)
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "a 403, got %v", err)
	assert.ElementsMatch(t, []string{"use rootshards root", "use virtualworkspaces access"}, asked)
	assert.Contains(t, err.Error(),
		`spec.additionalPathMappings[0].virtualWorkspaceRef to VirtualWorkspace/access without use on virtualworkspaces.operator.kcp.io "access"`)

	allowed["use virtualworkspaces access"] = true
	asked = nil
	require.NoError(t, store.CheckRequest(ctx, &frontproxy.Kind, authz, fp("access"), nil))

	asked = nil
	err = store.CheckRequest(ctx, &frontproxy.Kind, authz, fp("access", "mcp"), fp("access"))
	require.Error(t, err)
	assert.Equal(t, []string{"use virtualworkspaces mcp"}, asked, "only the new VirtualWorkspace is asked")
	assert.Contains(t, err.Error(), "spec.additionalPathMappings[1].virtualWorkspaceRef to VirtualWorkspace/mcp")
}

// TestTheRootShardsProxyCountsItsReplicas: spec.proxy.replicas is a pod count the server's
// --max-replicas bounds, as spec.replicas is (TestNestedReplicasAreBoundedByTheServer).
func TestTheRootShardsProxyCountsItsReplicas(t *testing.T) {
	two := int32(2000000000)
	assert.Empty(t, rootshard.Kind.NestedReplicas(&operator.RootShard{}))
	rs := &operator.RootShard{Spec: operator.RootShardSpec{Proxy: &operator.RootShardProxySpec{ComponentSpec: operator.ComponentSpec{Replicas: &two}}}}
	assert.Equal(t, map[string]*int32{"proxy.replicas": &two}, rootshard.Kind.NestedReplicas(rs))
}
