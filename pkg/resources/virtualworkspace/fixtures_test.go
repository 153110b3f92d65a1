package virtualworkspace

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443},
		},
	}
}

func shardOf(rs *operatorv1alpha1.RootShard) *operatorv1alpha1.Shard {
	return &operatorv1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd-shard:2379"}}},
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: rs.Name}},
		},
	}
}

func object(name string) *operatorv1alpha1.VirtualWorkspace {
	return &operatorv1alpha1.VirtualWorkspace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{
			External:      operatorv1alpha1.ExternalConfig{Hostname: name + ".example.com", Port: 6443},
			ClusterDomain: "cluster.local",
		},
	}
}

// minimal serves the root shard with kcp's own server, at the default image.
func minimal() VirtualWorkspace {
	vw := object("vw")
	vw.Spec.Target.RootShardRef = &corev1.LocalObjectReference{Name: "root"}
	return VirtualWorkspace{VirtualWorkspace: vw, Target: rootshard.Server(rootShard())}
}

// onShard serves a Shard, whose cache server and image it inherits where given.
func onShard(vw *operatorv1alpha1.VirtualWorkspace, s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) VirtualWorkspace {
	vw.Spec.Target.ShardRef = &corev1.LocalObjectReference{Name: s.Name}
	return VirtualWorkspace{VirtualWorkspace: vw, Target: shard.Server(s, rs)}
}

// loaded sets every field of a VirtualWorkspace of kcp's own server, next to a Shard with a
// cache server, with a least-privilege kubeconfig of the user's.
func loaded() VirtualWorkspace {
	rs := rootShard()
	s := shardOf(rs)
	s.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}}
	vw := object("loaded")
	vw.Spec.External = operatorv1alpha1.ExternalConfig{Hostname: "vw.example.com", Port: 8443,
		PrivateHostname: "vw.internal.example.com", PrivatePort: ptr.To[int32](9443)}
	vw.Spec.Image = &operatorv1alpha1.ImageSpec{Repository: "registry.example.com/kcp", Tag: "v0.32.3",
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
	vw.Spec.Replicas = ptr.To[int32](3)
	vw.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	vw.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		ServerRole: {Spec: &operatorv1alpha1.CertificateSpecTemplate{
			IssuerRef: &operatorv1alpha1.ObjectReference{Name: "letsencrypt", Kind: "ClusterIssuer", Group: "cert-manager.io"},
			DNSNames:  []string{"vw.example.com"},
		}},
		ClientRole: {Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a"}}},
	}
	vw.Spec.ServiceTemplate = &operatorv1alpha1.ServiceTemplate{Spec: &operatorv1alpha1.ServiceSpecTemplate{Type: corev1.ServiceTypeLoadBalancer}}
	vw.Spec.DeploymentTemplate = &operatorv1alpha1.DeploymentTemplate{
		Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a"}},
		Spec: &operatorv1alpha1.DeploymentSpecTemplate{Template: &operatorv1alpha1.PodTemplateSpec{
			Metadata: &operatorv1alpha1.MetadataTemplate{Annotations: map[string]string{"prometheus.io/scrape": "true"}},
			Spec: &operatorv1alpha1.PodSpecTemplate{
				NodeSelector:     map[string]string{"pool": "kcp"},
				HostAliases:      []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"kcp.example.com"}}},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "template-pull"}},
			},
		}},
	}
	vw.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "extra-ca"}
	vw.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "extra-client-ca"}
	vw.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "vw-kubeconfig"}
	vw.Spec.ExtraArgs = []string{"--profiler-address=:6060"}
	vw.Spec.ExtraVolumes = []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "extra-secret"}}},
		}}}}}
	vw.Spec.ExtraVolumeMounts = []corev1.VolumeMount{{Name: "extra", MountPath: "/var/extra"}}
	vw.Spec.Logging = &operatorv1alpha1.LoggingSpec{Level: 4}
	vw.Spec.ClusterDomain = "example.internal"
	return onShard(vw, s, rs)
}

// thirdParty runs a server of its own next to a Shard without a cache server, with an init
// container of its own image and kubeconfig and one that uses the server's.
func thirdParty() VirtualWorkspace {
	rs := rootShard()
	vw := object("access")
	vw.Spec.Image = &operatorv1alpha1.ImageSpec{Repository: "ghcr.io/kcp-dev/contrib-access-virtual-workspace", Tag: "latest"}
	vw.Spec.Command = []string{"/access-vw"}
	vw.Spec.ExtraArgs = []string{"--apiexport-endpointslice=access.contrib.kcp.io", "--endpoint-base=https://kcp.example.com:443/clusters/"}
	scratch := corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	vw.Spec.ExtraVolumes = []corev1.Volume{scratch}
	vw.Spec.ExtraVolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/var/lib/bootstrap", ReadOnly: true}}
	vw.Spec.InitContainers = []operatorv1alpha1.VirtualWorkspaceInitContainer{
		{
			Name:                "bootstrap",
			Image:               &operatorv1alpha1.ImageSpec{Repository: "ghcr.io/example/init", Tag: "v1", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "init-pull"}}},
			Command:             []string{"/access-vw-init"},
			Args:                []string{"--kubeconfig=/etc/kcp/init-kubeconfig/kubeconfig", "--workspace-prefix=root:access"},
			KubeconfigSecretRef: &corev1.LocalObjectReference{Name: "bootstrap-kubeconfig"},
			Resources:           &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
			Volumes:             []corev1.Volume{scratch, {Name: "seed", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "seed"}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/var/lib/bootstrap"},
				{Name: "seed", MountPath: "/var/seed", ReadOnly: true}},
		},
		{
			Name:    "wait",
			Command: []string{"/access-vw-init", "--wait"},
		},
	}
	return onShard(vw, shardOf(rs), rs)
}

// oldKcp is kcp's own server of kcp v0.30.0, whose target runs that release too.
func oldKcp() VirtualWorkspace {
	rs := rootShard()
	rs.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.30.0"}
	vw := object("old")
	vw.Spec.Target.RootShardRef = &corev1.LocalObjectReference{Name: "root"}
	return VirtualWorkspace{VirtualWorkspace: vw, Target: rootshard.Server(rs)}
}

// fixtures are the VirtualWorkspaces of the golden files.
func fixtures() map[string]VirtualWorkspace {
	return map[string]VirtualWorkspace{"minimal": minimal(), "loaded": loaded(), "third-party": thirdParty(), "old-kcp": oldKcp()}
}
