package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/install"
)

// validVirtualWorkspace is a loaded VirtualWorkspace: every field set to a valid value, a
// third-party server with an init container that shares a scratch volume with the server.
func validVirtualWorkspace() *operator.VirtualWorkspace {
	component := validComponentSpec("server")
	component.CertificateTemplates["client"] = validCertificateTemplate()
	scratch := corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	component.ExtraVolumes = append(component.ExtraVolumes, scratch)
	return &operator.VirtualWorkspace{
		ObjectMeta: validObjectMeta("access"),
		Spec: operator.VirtualWorkspaceSpec{
			ComponentSpec: component,
			Target:        operator.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "shard-a"}},
			External: operator.ExternalConfig{
				Hostname: "vw.example.com", Port: 6443, PrivateHostname: "vw.internal.example.com", PrivatePort: ptr[int32](8443),
			},
			Command: []string{"/access-vw", "--serve"},
			InitContainers: []operator.VirtualWorkspaceInitContainer{{
				Name:                "init",
				Image:               &operator.ImageSpec{Repository: "ghcr.io/example/init", Tag: "v1", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}},
				Command:             []string{"/access-vw-init"},
				Args:                []string{"--kubeconfig=/etc/kcp/init-kubeconfig/kubeconfig", ""},
				KubeconfigSecretRef: &corev1.LocalObjectReference{Name: "bootstrap-kubeconfig"},
				Resources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resourceQuantity("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resourceQuantity("128Mi")},
				},
				Volumes: []corev1.Volume{
					scratch,
					{Name: "seed", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "seed"},
					}}},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "seed", MountPath: "/var/seed"},
					{Name: "scratch", MountPath: "/var/scratch"},
					{Name: "extra", MountPath: "/var/extra"},
				},
			}},
			CABundleSecretRef:   &corev1.LocalObjectReference{Name: "extra-ca"},
			ClientCABundleRef:   &corev1.LocalObjectReference{Name: "extra-client-ca"},
			KubeconfigSecretRef: &corev1.LocalObjectReference{Name: "access-vw-kubeconfig"},
			ClusterDomain:       "cluster.local",
		},
	}
}

func TestValidateVirtualWorkspace(t *testing.T) {
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	hostPath := corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
	tests := []struct {
		name   string
		mutate func(*operator.VirtualWorkspace)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.VirtualWorkspace) {}},
		{
			name: "minimal",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec = operator.VirtualWorkspaceSpec{
					Target:        operator.VirtualWorkspaceTarget{RootShardRef: ref("root")},
					External:      operator.ExternalConfig{Hostname: "vw.example.com", Port: 6443},
					ClusterDomain: "cluster.local",
				}
			},
		},

		// metadata
		{
			name:   "name at the maximum length",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Name = strings.Repeat("v", 45) },
		},
		{
			name:   "name too long for the Service name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Name = strings.Repeat("v", 46) },
			want:   []wantErr{invalid("metadata.name", "must be no more than 45 characters, so that the Service <name>-virtual-workspace is a valid name")},
		},
		{
			name:   "name not a DNS-1035 label",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Name = "1access" },
			want:   []wantErr{invalid("metadata.name")},
		},

		// target
		{
			name:   "no target",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Target = operator.VirtualWorkspaceTarget{} },
			want:   []wantErr{required("spec.target", "one of rootShardRef or shardRef is required")},
		},
		{
			name: "two targets",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.Target = operator.VirtualWorkspaceTarget{RootShardRef: ref("root"), ShardRef: ref("shard-a")}
			},
			want: []wantErr{forbidden("spec.target.shardRef", "only one of rootShardRef or shardRef may be set")},
		},
		{
			name:   "target ref without a name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Target.ShardRef.Name = "" },
			want:   []wantErr{required("spec.target.shardRef.name")},
		},
		{
			name: "target ref not a DNS-1035 label",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.Target = operator.VirtualWorkspaceTarget{RootShardRef: ref("Root")}
			},
			want: []wantErr{invalid("spec.target.rootShardRef.name")},
		},

		// external
		{
			name:   "external hostname missing",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.External.Hostname = "" },
			want:   []wantErr{required("spec.external.hostname")},
		},
		{
			name:   "external hostname not a DNS name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.External.Hostname = "vw_example.com" },
			want:   []wantErr{invalid("spec.external.hostname")},
		},
		{
			name:   "external port not defaulted",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.External.Port = 0 },
			want:   []wantErr{invalid("spec.external.port")},
		},
		{
			name:   "external port out of range",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.External.Port = 65536 },
			want:   []wantErr{invalid("spec.external.port")},
		},
		{
			name:   "private hostname not a DNS name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.External.PrivateHostname = "-vw" },
			want:   []wantErr{invalid("spec.external.privateHostname")},
		},
		{
			name:   "private port out of range",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.External.PrivatePort = ptr[int32](0) },
			want:   []wantErr{invalid("spec.external.privatePort")},
		},

		// component spec
		{
			name: "certificate template of a shard",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.CertificateTemplates["logical-cluster-admin"] = operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}}}
			},
			want: []wantErr{invalid("spec.certificateTemplates[logical-cluster-admin].spec.dnsNames[0]")},
		},
		{
			name: "certificate template invalid",
			mutate: func(vw *operator.VirtualWorkspace) {
				tmpl := vw.Spec.CertificateTemplates["client"]
				tmpl.Spec.IPAddresses = []string{"not-an-ip"}
				vw.Spec.CertificateTemplates["client"] = tmpl
			},
			want: []wantErr{invalid("spec.certificateTemplates[client].spec.ipAddresses[0]")},
		},
		{
			name:   "replicas negative",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Replicas = ptr[int32](-1) },
			want:   []wantErr{invalid("spec.replicas")},
		},
		{
			name: "extra volume mount at the reserved directory",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.ExtraVolumeMounts[0].MountPath = "/etc/kcp-virtual-workspaces/tls"
			},
			want: []wantErr{invalid("spec.extraVolumeMounts[0].mountPath", "may not be at, under or above /etc/kcp-virtual-workspaces")},
		},
		{
			// kcp-operator's server mounts live under /etc/kcp; this server's do not.
			name:   "extra volume mount under /etc/kcp",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.ExtraVolumeMounts[0].MountPath = "/etc/kcp/extra" },
		},
		{
			name:   "extra volume on the node",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.ExtraVolumes[0].VolumeSource = hostPath },
			want:   []wantErr{forbidden("spec.extraVolumes[0].hostPath")},
		},
		{
			name:   "extra arg not a flag",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.ExtraArgs = []string{"serve"} },
			want:   []wantErr{invalid("spec.extraArgs[0]")},
		},

		// command
		{
			name:   "command entry empty",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Command = []string{"/access-vw", ""} },
			want:   []wantErr{required("spec.command[1]")},
		},

		// init containers
		{
			name:   "init container without a name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Name = "" },
			want:   []wantErr{required("spec.initContainers[0].name")},
		},
		{
			name:   "init container name not a DNS-1123 label",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Name = "Init" },
			want:   []wantErr{invalid("spec.initContainers[0].name")},
		},
		{
			name:   "init container named as the server container",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Name = "virtual-workspaces" },
			want:   []wantErr{invalid("spec.initContainers[0].name", "is the name of the server container")},
		},
		{
			name: "init container names repeated",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers = append(vw.Spec.InitContainers, operator.VirtualWorkspaceInitContainer{Name: "init"})
			},
			want: []wantErr{duplicate("spec.initContainers[1].name")},
		},
		{
			name:   "init container image tag invalid",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Image.Tag = "v1:2" },
			want:   []wantErr{invalid("spec.initContainers[0].image.tag")},
		},
		{
			name:   "init container command entry empty",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Command = []string{""} },
			want:   []wantErr{required("spec.initContainers[0].command[0]")},
		},
		{
			name:   "init container kubeconfig without a name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].KubeconfigSecretRef.Name = "" },
			want:   []wantErr{required("spec.initContainers[0].kubeconfigSecretRef.name")},
		},
		{
			name: "init container requests above its limits",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers[0].Resources.Requests[corev1.ResourceMemory] = resourceQuantity("1Gi")
			},
			want: []wantErr{invalid("spec.initContainers[0].resources.requests[memory]")},
		},
		{
			name: "extra volume with a name the server's volumes take",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.ExtraVolumes[1].Name = "kcp-server"
				vw.Spec.InitContainers[0].Volumes[0].Name = "kcp-server"
				vw.Spec.InitContainers[0].VolumeMounts[1].Name = "kcp-server"
			},
			want: []wantErr{
				invalid("spec.extraVolumes[1].name", `may not begin with "kcp-"`),
				invalid("spec.initContainers[0].volumes[0].name", `may not begin with "kcp-"`),
			},
		},
		{
			name: "init container volume with a name the server's volumes take",
			mutate: func(vw *operator.VirtualWorkspace) {
				ic := &vw.Spec.InitContainers[0]
				ic.Volumes[1].Name = "kcp-client"
				ic.VolumeMounts[0].Name = "kcp-client"
			},
			want: []wantErr{invalid("spec.initContainers[0].volumes[1].name", `may not begin with "kcp-"`)},
		},
		{
			name:   "init container volume on the node",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Volumes[1].VolumeSource = hostPath },
			want:   []wantErr{forbidden("spec.initContainers[0].volumes[1].hostPath")},
		},
		{
			name:   "init container volume name not a DNS-1123 label",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].Volumes[1].Name = "Seed" },
			want: []wantErr{
				invalid("spec.initContainers[0].volumes[1].name"),
				// The mount of "seed" names a volume that is now gone.
				notFound("spec.initContainers[0].volumeMounts[0].name"),
			},
		},
		{
			name: "init container volume repeated in its own list",
			mutate: func(vw *operator.VirtualWorkspace) {
				ic := &vw.Spec.InitContainers[0]
				ic.Volumes = append(ic.Volumes, corev1.Volume{Name: "seed"})
			},
			want: []wantErr{duplicate("spec.initContainers[0].volumes[2].name")},
		},
		{
			name: "init container volume declared differently by the server",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers[0].Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
			},
			want: []wantErr{invalid("spec.initContainers[0].volumes[0].name", "is declared differently at spec.extraVolumes[1]")},
		},
		{
			name: "init container volume declared differently by another init container",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers = append(vw.Spec.InitContainers, operator.VirtualWorkspaceInitContainer{
					Name:    "second",
					Volumes: []corev1.Volume{{Name: "seed", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				})
			},
			want: []wantErr{invalid("spec.initContainers[1].volumes[0].name", "is declared differently at spec.initContainers[0].volumes[1]")},
		},
		{
			// kcp-operator keeps the first declaration; the same volume twice is one volume.
			name: "init container volume declared alike by another init container",
			mutate: func(vw *operator.VirtualWorkspace) {
				ic := vw.Spec.InitContainers[0]
				ic.Name = "second"
				vw.Spec.InitContainers = append(vw.Spec.InitContainers, ic)
			},
		},
		{
			name: "init container mount of a volume of another init container",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers = append(vw.Spec.InitContainers, operator.VirtualWorkspaceInitContainer{
					Name:         "second",
					VolumeMounts: []corev1.VolumeMount{{Name: "seed", MountPath: "/var/seed"}},
				})
			},
			want: []wantErr{notFound("spec.initContainers[1].volumeMounts[0].name")},
		},
		{
			name:   "init container mount without a path",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].VolumeMounts[0].MountPath = "" },
			want:   []wantErr{required("spec.initContainers[0].volumeMounts[0].mountPath")},
		},
		{
			name: "init container mount at the same path twice",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers[0].VolumeMounts[1].MountPath = "/var/seed/"
			},
			want: []wantErr{duplicate("spec.initContainers[0].volumeMounts[1].mountPath")},
		},
		{
			name:   "init container mount above the reserved directory",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.InitContainers[0].VolumeMounts[0].MountPath = "/etc" },
			want:   []wantErr{invalid("spec.initContainers[0].volumeMounts[0].mountPath", "may not be at, under or above /etc/kcp-virtual-workspaces")},
		},
		{
			name: "init container mount at its kubeconfig's directory",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers[0].VolumeMounts[0].MountPath = "/etc/kcp/init-kubeconfig"
			},
			want: []wantErr{invalid("spec.initContainers[0].volumeMounts[0].mountPath", "may not be at, under or above /etc/kcp/init-kubeconfig")},
		},
		{
			name: "init container mount propagating to the node",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.InitContainers[0].VolumeMounts[0].MountPropagation = ptr(corev1.MountPropagationBidirectional)
			},
			want: []wantErr{forbidden("spec.initContainers[0].volumeMounts[0].mountPropagation")},
		},

		// references
		{
			name:   "kubeconfig without a name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.KubeconfigSecretRef.Name = "" },
			want:   []wantErr{required("spec.kubeconfigSecretRef.name")},
		},
		{
			name:   "CA bundle name invalid",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.CABundleSecretRef.Name = "Extra_CA" },
			want:   []wantErr{invalid("spec.caBundleSecretRef.name")},
		},
		{
			name:   "client CA bundle without a name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.ClientCABundleRef.Name = "" },
			want:   []wantErr{required("spec.clientCABundleRef.name")},
		},
		{
			name:   "cluster domain not defaulted",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.ClusterDomain = "" },
			want:   []wantErr{required("spec.clusterDomain")},
		},
		{
			name:   "cluster domain not a DNS name",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.ClusterDomain = "cluster..local" },
			want:   []wantErr{invalid("spec.clusterDomain")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vw := validVirtualWorkspace()
			tc.mutate(vw)
			assertErrors(t, tc.want, ValidateVirtualWorkspace(vw))
		})
	}
}

func TestValidateVirtualWorkspaceUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.VirtualWorkspace)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.VirtualWorkspace) {}},
		{
			name: "mutable field changed",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.External.Hostname, vw.Spec.InitContainers = "vw2.example.com", nil
			},
		},
		{
			name:   "target renamed",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Target.ShardRef.Name = "shard-b" },
			want:   []wantErr{invalid("spec.target", `Invalid value: "Shard/shard-b": field is immutable`)},
		},
		{
			name: "target kind changed",
			mutate: func(vw *operator.VirtualWorkspace) {
				vw.Spec.Target = operator.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "shard-a"}}
			},
			want: []wantErr{invalid("spec.target", `Invalid value: "RootShard/shard-a": field is immutable`)},
		},
		{
			name:   "target removed",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Target = operator.VirtualWorkspaceTarget{} },
			want:   []wantErr{required("spec.target"), invalid("spec.target", "field is immutable")},
		},
		{
			name:   "spec invalid on update",
			mutate: func(vw *operator.VirtualWorkspace) { vw.Spec.Command = []string{""} },
			want:   []wantErr{required("spec.command[0]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validVirtualWorkspace(), validVirtualWorkspace()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("access"), updatedObjectMeta("access")
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateVirtualWorkspaceUpdate(newObj, oldObj))
		})
	}
}

func TestValidateVirtualWorkspaceStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status operator.VirtualWorkspaceStatus
		want   []wantErr
	}{
		{
			name: "valid",
			status: operator.VirtualWorkspaceStatus{Phase: operator.PhaseRunning, ObservedGeneration: 2, Conditions: []metav1.Condition{
				{Type: "ReferenceValid", Status: metav1.ConditionTrue, Reason: "Found", LastTransitionTime: metav1.Now()},
			}},
		},
		{name: "a Kubeconfig's phase", status: operator.VirtualWorkspaceStatus{Phase: "Ready"}, want: []wantErr{notSupported("status.phase")}},
		{name: "negative observedGeneration", status: operator.VirtualWorkspaceStatus{ObservedGeneration: -1}, want: []wantErr{invalid("status.observedGeneration")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validVirtualWorkspace(), validVirtualWorkspace()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("access"), updatedObjectMeta("access")
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateVirtualWorkspaceStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateVirtualWorkspaceNil(t *testing.T) {
	assert.NotEmpty(t, ValidateVirtualWorkspace(nil))
	assert.NotEmpty(t, ValidateVirtualWorkspaceUpdate(nil, nil))
	assert.NotEmpty(t, ValidateVirtualWorkspaceStatusUpdate(nil, nil))
}

// TestKcpOperatorVirtualWorkspaceSample: kcp-operator's sample of a third-party virtual
// workspace (config/samples/operator.kcp.io_v1alpha1_virtualworkspace_custom.yaml, its
// VirtualWorkspace, comments dropped) is decoded, defaulted and converted as the server
// does, and is valid, with the defaults filled in.
func TestKcpOperatorVirtualWorkspaceSample(t *testing.T) {
	const manifest = `apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata:
  labels:
    app.kubernetes.io/name: kcp-operator
    app.kubernetes.io/managed-by: kustomize
  name: access
  namespace: team-a
spec:
  target:
    rootShardRef:
      name: shard-sample
  external:
    hostname: example.operator.kcp.io
    port: 6443
  image:
    repository: ghcr.io/kcp-dev/contrib-access-virtual-workspace
    tag: latest
  command:
    - /access-vw
  replicas: 1
  kubeconfigSecretRef:
    name: access-vw-server-kubeconfig
  initContainers:
    - name: init
      kubeconfigSecretRef:
        name: access-vw-bootstrap-kubeconfig
      command:
        - /access-vw-init
      args:
        - --kubeconfig=/etc/kcp/init-kubeconfig/kubeconfig
        - --workspace-prefix=root:access
        - --controllers-workspace=controllers
  extraArgs:
    - --apiexport-endpointslice=access.contrib.kcp.io
    - --endpoint-base=https://example.operator.kcp.io:6443/clusters/
  resources:
    requests:
      cpu: 100m
      memory: 128Mi
    limits:
      memory: 512Mi
  deploymentTemplate:
    spec:
      template:
        spec:
          hostAliases:
            - ip: "10.96.100.100"
              hostnames:
                - "example.operator.kcp.io"
`
	scheme := runtime.NewScheme()
	install.Install(scheme)
	obj, _, err := serializer.NewCodecFactory(scheme).UniversalDecoder(operator.SchemeGroupVersion).Decode([]byte(manifest), nil, nil)
	require.NoError(t, err)
	vw, ok := obj.(*operator.VirtualWorkspace)
	require.True(t, ok, "%T", obj)
	assert.Empty(t, ValidateVirtualWorkspace(vw))
	assert.Equal(t, "cluster.local", vw.Spec.ClusterDomain)
	assert.Equal(t, "RootShard/shard-sample", describeTarget(virtualWorkspaceTargetRefs(&vw.Spec.Target)))
}

// TestVirtualWorkspaceWarnings: a server other than kcp's own (spec.command) without its own
// kubeconfig runs with the generated admin identity, which deserves a warning; kcp's own
// server, or one with a least-privilege kubeconfig, does not.
func TestVirtualWorkspaceWarnings(t *testing.T) {
	const want = "spec.command runs a server other than kcp's own, and without spec.kubeconfigSecretRef it talks to its shard with the generated admin identity"
	tests := []struct {
		name   string
		mutate func(*operator.VirtualWorkspaceSpec)
		warns  bool
	}{
		{name: "a custom server with its own kubeconfig", mutate: func(*operator.VirtualWorkspaceSpec) {}},
		{name: "a custom server with the admin identity", mutate: func(s *operator.VirtualWorkspaceSpec) { s.KubeconfigSecretRef = nil }, warns: true},
		{name: "kcp's own server with the admin identity", mutate: func(s *operator.VirtualWorkspaceSpec) { s.Command, s.KubeconfigSecretRef = nil, nil }},
		{name: "kcp's own server with its own kubeconfig", mutate: func(s *operator.VirtualWorkspaceSpec) { s.Command = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vw := validVirtualWorkspace()
			tc.mutate(&vw.Spec)
			warnings := VirtualWorkspaceWarnings(vw)
			if !tc.warns {
				assert.Empty(t, warnings)
				return
			}
			require.Len(t, warnings, 1)
			assert.Contains(t, warnings[0], want)
		})
	}
}
