package virtualworkspace

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

func ref(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }

// virtualWorkspace is kcp's own virtual workspace server for the root shard: nothing in it
// has the server act beyond what a setup is for.
func virtualWorkspace() *operator.VirtualWorkspace {
	return &operator.VirtualWorkspace{
		ObjectMeta: metav1.ObjectMeta{Name: "access", Namespace: "team-a"},
		Spec: operator.VirtualWorkspaceSpec{
			Target:        operator.VirtualWorkspaceTarget{RootShardRef: ref("root")},
			External:      operator.ExternalConfig{Hostname: "vw.example.com", Port: 6443},
			ClusterDomain: "cluster.local",
		},
	}
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}

// held renders permissions as "field=value: verb resource.group name", to compare whole lists.
func held(perms []store.Permission) []string {
	var out []string
	for _, p := range perms {
		out = append(out, p.Field+"="+p.Value+": "+p.Verb+" "+p.Resource+"."+p.Group+" "+p.Name)
	}
	return out
}

// TestPermissions checks each field a VirtualWorkspace has the server act on with its own
// rights: what it asks of the author, at its field path, and that what kcp's own server needs
// asks nothing.
func TestPermissions(t *testing.T) {
	const runs = ": create deployments.apps "
	tests := []struct {
		name        string
		mutate      func(*operator.VirtualWorkspaceSpec)
		want        []string
		noRootShard bool
	}{
		{name: "kcp's own server", mutate: func(*operator.VirtualWorkspaceSpec) {}},
		{name: "kcp's own image, pinned", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.Image = &operator.ImageSpec{Repository: "ghcr.io/kcp-dev/kcp", Tag: "v0.32.3"}
		}},
		{name: "another image", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.Image = &operator.ImageSpec{Repository: "ghcr.io/kcp-dev/contrib-access-virtual-workspace", Tag: "latest"}
		}, want: []string{"spec.image.repository=ghcr.io/kcp-dev/contrib-access-virtual-workspace" + runs}},
		{name: "a command", mutate: func(s *operator.VirtualWorkspaceSpec) { s.Command = []string{"/access-vw", "--serve"} },
			want: []string{"spec.command=/access-vw --serve" + runs}},
		{name: "a NodePort Service", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.ServiceTemplate = &operator.ServiceTemplate{Spec: &operator.ServiceSpecTemplate{Type: corev1.ServiceTypeNodePort}}
		}, want: []string{"spec.serviceTemplate.spec.type=NodePort: create services. "}},
		{name: "an extra Secret volume", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.ExtraVolumes = []corev1.Volume{secretVolume("keys", "signing-keys")}
		}, want: []string{"spec.extraVolumes[0].secret.secretName=Secret/signing-keys: get secrets. signing-keys"}},
		{name: "a template's issuer", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.CertificateTemplates = operator.CertificateTemplateMap{"server": {Spec: &operator.CertificateSpecTemplate{
				IssuerRef: &operator.ObjectReference{Name: "public", Kind: "ClusterIssuer", Group: "cert-manager.io"}}}}
		}, want: []string{"spec.certificateTemplates[server].spec.issuerRef=ClusterIssuer/public: create certificates.cert-manager.io "}},
		{name: "the CA bundles", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.CABundleSecretRef, s.ClientCABundleRef = ref("extra-ca"), ref("extra-client-ca")
		}, want: []string{
			"spec.caBundleSecretRef=Secret/extra-ca: get secrets. extra-ca",
			"spec.clientCABundleRef=Secret/extra-client-ca: get secrets. extra-client-ca",
		}},
		{name: "the server's kubeconfig", mutate: func(s *operator.VirtualWorkspaceSpec) { s.KubeconfigSecretRef = ref("vw-kubeconfig") },
			want: []string{"spec.kubeconfigSecretRef=Secret/vw-kubeconfig: get secrets. vw-kubeconfig"}},
		{name: "an init container of the server's image, with args only", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.InitContainers = []operator.VirtualWorkspaceInitContainer{{Name: "init", Args: []string{"--help"}}}
		}, want: []string{"spec.initContainers[0].args=--help" + runs}},
		{name: "a Shard as the target", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.Target = operator.VirtualWorkspaceTarget{ShardRef: ref("shard-1")}
		}, want: []string{"spec.target.shardRef=Shard/shard-1: use shards.operator.kcp.io shard-1"}, noRootShard: true},
		{name: "an init container of kcp's image", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.InitContainers = []operator.VirtualWorkspaceInitContainer{{Name: "init", Image: &operator.ImageSpec{Tag: "v0.32.3"}}}
		}},
		{name: "an init container of another image", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.InitContainers = []operator.VirtualWorkspaceInitContainer{{Name: "a"}, {Name: "b", Image: &operator.ImageSpec{Repository: "busybox"}}}
		}, want: []string{"spec.initContainers[1].image.repository=busybox" + runs}},
		{name: "an init container's command", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.InitContainers = []operator.VirtualWorkspaceInitContainer{{Name: "init", Command: []string{"/access-vw-init"}}}
		}, want: []string{"spec.initContainers[0].command=/access-vw-init" + runs}},
		{name: "an init container's kubeconfig", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.InitContainers = []operator.VirtualWorkspaceInitContainer{{Name: "a"}, {Name: "b", KubeconfigSecretRef: ref("bootstrap")}}
		}, want: []string{"spec.initContainers[1].kubeconfigSecretRef=Secret/bootstrap: get secrets. bootstrap"}},
		{name: "an init container's volumes", mutate: func(s *operator.VirtualWorkspaceSpec) {
			s.InitContainers = []operator.VirtualWorkspaceInitContainer{{Name: "init", Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				secretVolume("keys", "signing-keys"),
				{Name: "seed", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *ref("seed")}}},
				{Name: "both", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{LocalObjectReference: *ref("projected-secret")}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: *ref("projected-config")}},
				}}}},
			}}}
		}, want: []string{
			"spec.initContainers[0].volumes[1].secret.secretName=Secret/signing-keys: get secrets. signing-keys",
			"spec.initContainers[0].volumes[2].configMap.name=ConfigMap/seed: get configmaps. seed",
			"spec.initContainers[0].volumes[3].projected.sources[0].secret.name=Secret/projected-secret: get secrets. projected-secret",
			"spec.initContainers[0].volumes[3].projected.sources[1].configMap.name=ConfigMap/projected-config: get configmaps. projected-config",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vw := virtualWorkspace()
			tc.mutate(&vw.Spec)
			want := tc.want
			if !tc.noRootShard {
				// Every VirtualWorkspace serves a shard, and so uses what it targets.
				want = append([]string{"spec.target.rootShardRef=RootShard/root: use rootshards.operator.kcp.io root"}, want...)
			}
			assert.ElementsMatch(t, want, held(Kind.Permissions(vw)))
		})
	}
}

// grants is a fake delegated authorizer that allows exactly the listed attributes, as
// "verb resource.group name", and counts what it was asked.
type grants struct {
	allow map[string]bool
	asked int
}

func (g *grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	g.asked++
	if g.allow[a.GetVerb()+" "+a.GetResource()+"."+a.GetAPIGroup()+" "+a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule", nil
}

// thirdParty is kcp-operator's sample of a third-party server: its own image and command, its
// own kubeconfig and an init container with a bootstrap kubeconfig.
func thirdParty() *operator.VirtualWorkspace {
	vw := virtualWorkspace()
	vw.Spec.Image = &operator.ImageSpec{Repository: "ghcr.io/kcp-dev/contrib-access-virtual-workspace", Tag: "latest"}
	vw.Spec.Command = []string{"/access-vw"}
	vw.Spec.KubeconfigSecretRef = ref("access-vw-server-kubeconfig")
	vw.Spec.InitContainers = []operator.VirtualWorkspaceInitContainer{{
		Name: "init", Command: []string{"/access-vw-init"}, KubeconfigSecretRef: ref("access-vw-bootstrap-kubeconfig"),
	}}
	return vw
}

// TestForbidden holds the Kind's wiring to the 403 a client gets: every field the requester
// may not set is named with its path, and a field the stored object already had is not asked
// again on update.
func TestForbidden(t *testing.T) {
	everything := []string{
		"use rootshards.operator.kcp.io root",
		"create deployments.apps ",
		"get secrets. access-vw-server-kubeconfig",
		"get secrets. access-vw-bootstrap-kubeconfig",
	}
	tests := []struct {
		name      string
		obj, old  runtime.Object
		allow     []string
		asked     int
		forbidden []string
	}{
		{name: "kcp's own server", obj: virtualWorkspace(), allow: everything[:1], asked: 1},
		{
			name: "kcp's own server, without use on its RootShard", obj: virtualWorkspace(), asked: 1,
			forbidden: []string{`spec.target.rootShardRef to RootShard/root without use on rootshards.operator.kcp.io "root" in namespace "team-a"`},
		},
		{
			name: "a third-party server, nothing granted", obj: thirdParty(), asked: 4,
			forbidden: []string{
				`virtualworkspaces.operator.kcp.io "access" is forbidden: user "mallory" may not set`,
				`spec.image.repository to ghcr.io/kcp-dev/contrib-access-virtual-workspace without create on deployments.apps in namespace "team-a"`,
				"spec.command to /access-vw without create on deployments.apps",
				`spec.kubeconfigSecretRef to Secret/access-vw-server-kubeconfig without get on secrets "access-vw-server-kubeconfig"`,
				"spec.initContainers[0].command to /access-vw-init without create on deployments.apps",
				`spec.initContainers[0].kubeconfigSecretRef to Secret/access-vw-bootstrap-kubeconfig without get on secrets "access-vw-bootstrap-kubeconfig"`,
			},
		},
		{name: "a third-party server, everything granted", obj: thirdParty(), allow: everything, asked: 4},
		{
			name: "only the bootstrap kubeconfig denied", obj: thirdParty(), allow: everything[:3], asked: 4,
			forbidden: []string{"spec.initContainers[0].kubeconfigSecretRef to Secret/access-vw-bootstrap-kubeconfig"},
		},
		{name: "unchanged on update", obj: thirdParty(), old: thirdParty()},
		{
			name: "the command changed on update", obj: func() *operator.VirtualWorkspace {
				vw := thirdParty()
				vw.Spec.Command = []string{"/bin/sh", "-c", "cat /etc/kcp-virtual-workspaces/*/tls.key"}
				return vw
			}(), old: thirdParty(), asked: 1,
			forbidden: []string{"spec.command to /bin/sh -c cat /etc/kcp-virtual-workspaces/*/tls.key without create on deployments.apps"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &grants{allow: map[string]bool{}}
			for _, a := range tc.allow {
				g.allow[a] = true
			}
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})
			err := store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(g.Authorize), tc.obj, tc.old)
			assert.Equal(t, tc.asked, g.asked)
			if len(tc.forbidden) == 0 {
				require.NoError(t, err)
				return
			}
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusForbidden, status.Status().Code)
			for _, s := range tc.forbidden {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*operator.VirtualWorkspace)
		target, url string
	}{
		{name: "a root shard's, reached at its external hostname", mutate: func(*operator.VirtualWorkspace) {},
			target: "RootShard/root", url: "https://vw.example.com:6443"},
		{name: "a shard's, on another port", mutate: func(vw *operator.VirtualWorkspace) {
			vw.Spec.Target = operator.VirtualWorkspaceTarget{ShardRef: ref("shard-1")}
			vw.Spec.External.Port = 443
		}, target: "Shard/shard-1", url: "https://vw.example.com:443"},
		{name: "without a hostname: the Service", mutate: func(vw *operator.VirtualWorkspace) {
			vw.Spec.External = operator.ExternalConfig{}
			vw.Spec.ClusterDomain = "corp.local"
		}, target: "RootShard/root", url: "https://access-virtual-workspace.team-a.svc.corp.local:6443"},
		{name: "no target", mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Target = operator.VirtualWorkspaceTarget{} },
			url: "https://vw.example.com:6443"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vw := virtualWorkspace()
			tc.mutate(vw)
			assert.Equal(t, tc.target, target(vw))
			assert.Equal(t, tc.url, url(vw))
		})
	}
	var names []string
	for _, c := range Kind.Table.Columns {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"Target", "URL", "Phase"}, names, "Name and Age frame them")
}
