package virtualworkspace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

func TestBuilders(t *testing.T) {
	for name, v := range fixtures() {
		t.Run(name, func(t *testing.T) {
			var objects []any
			for _, c := range v.Certificates() {
				objects = append(objects, c)
			}
			kubeconfigs, err := v.Kubeconfigs()
			require.NoError(t, err)
			for _, k := range kubeconfigs {
				objects = append(objects, k)
			}
			if v.Spec.ClientCABundleRef != nil {
				objects = append(objects, v.MergedClientCA([]byte("TARGET-CLIENT-CA\n"), []byte("EXTRA-CLIENT-CA")))
			}
			d := v.Deployment(nil, "hash")
			objects = append(objects, v.Service(), d)
			if pdb := workload.DisruptionBudget(d); pdb != nil {
				objects = append(objects, pdb)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func has(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// TestFlagsByVersion checks each of kcp's version gates of its virtual-workspaces command
// from both sides, and that a third-party server gets none of kcp's own flags.
func TestFlagsByVersion(t *testing.T) {
	tests := []struct {
		tag                             string
		shardExternalURL, externalAdmin bool
		jsonLogs                        bool
	}{
		{tag: "v0.30.0", shardExternalURL: true},
		{tag: "v0.30.3", shardExternalURL: true},
		{tag: "v0.31.0", jsonLogs: true},
		{tag: "v0.31.1", jsonLogs: true},
		{tag: "v0.31.2", externalAdmin: true, jsonLogs: true},
		{tag: "v0.32.3", externalAdmin: true, jsonLogs: true},
		{tag: "main", externalAdmin: true, jsonLogs: true},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			v := minimal()
			v.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tt.tag}
			args := v.Args()
			assert.Equal(t, tt.shardExternalURL, has(args, "--shard-external-url"))
			if tt.shardExternalURL {
				assert.Contains(t, args, "--shard-external-url=https://kcp.example.com:443", "the installation's external URL")
			}
			assert.Equal(t, tt.externalAdmin, has(args, "--external-logical-cluster-admin-kubeconfig"))
			assert.Equal(t, tt.externalAdmin, v.HasExternalAdmin())
			assert.Equal(t, tt.jsonLogs, has(args, "--logging-format"))
			assert.Contains(t, args, "--secure-port=6443", "kcp's server listens on 6444 by default")

			v.Spec.Command = []string{"/my-vw"}
			third := v.Args()
			for _, flag := range []string{"--shard-external-url", "--external-logical-cluster-admin-kubeconfig", "--logging-format", "--cache-kubeconfig"} {
				assert.False(t, has(third, flag), "a third-party server gets no %s", flag)
			}
			assert.False(t, v.HasExternalAdmin())
		})
	}
}

// TestAuthenticationKubeconfigIsTheKubeconfig: the delegated authentication must not fall
// back to the in-cluster configuration, which the pods have no token for.
func TestAuthenticationKubeconfigIsTheKubeconfig(t *testing.T) {
	for name, v := range fixtures() {
		args := v.Args()
		assert.Contains(t, args, "--kubeconfig=/etc/kcp-virtual-workspaces/kubeconfig/kubeconfig", name)
		assert.Contains(t, args, "--authentication-kubeconfig=/etc/kcp-virtual-workspaces/kubeconfig/kubeconfig", name)
	}
}

func TestExtraArgsComeLastAsWritten(t *testing.T) {
	for name, v := range map[string]VirtualWorkspace{"kcp": minimal(), "third-party": thirdParty()} {
		extra := []string{"--cache-kubeconfig", "/etc/kcp-virtual-workspaces/cache-kubeconfig/kubeconfig", "-v=6"}
		v.Spec.ExtraArgs = extra
		args := v.Args()
		require.Greater(t, len(args), len(extra))
		assert.Equal(t, extra, args[len(args)-len(extra):], name)
	}
}

// volumesOf indexes a Deployment's pod volumes by name.
func volumesOf(d *appsv1ac.DeploymentApplyConfiguration) map[string]corev1ac.VolumeApplyConfiguration {
	out := map[string]corev1ac.VolumeApplyConfiguration{}
	for _, vol := range d.Spec.Template.Spec.Volumes {
		out[*vol.Name] = vol
	}
	return out
}

// secretOf is the Secret a volume mounts, empty for another source.
func secretOf(vol corev1ac.VolumeApplyConfiguration) string {
	if vol.Secret == nil || vol.Secret.SecretName == nil {
		return ""
	}
	return *vol.Secret.SecretName
}

// mountedSecrets are the Secrets a container mounts.
func mountedSecrets(c corev1ac.ContainerApplyConfiguration, volumes map[string]corev1ac.VolumeApplyConfiguration) []string {
	var out []string
	for _, m := range c.VolumeMounts {
		if s := secretOf(volumes[*m.Name]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestNoKeyWhereItDoesNotBelong: no CA key enters the pod, and no init container gets the
// serving certificate's key or the external admin's.
func TestNoKeyWhereItDoesNotBelong(t *testing.T) {
	for name, v := range fixtures() {
		t.Run(name, func(t *testing.T) {
			d := v.Deployment(nil, "hash")
			volumes := volumesOf(d)
			cas := 0
			for _, vol := range volumes {
				secret := secretOf(vol)
				// The RootShard's CAs (<rs>-<role>-ca) and the CA bundles (…-merged-…).
				if strings.HasSuffix(secret, "-ca") || strings.Contains(secret, "-merged-") {
					cas++
					require.Len(t, vol.Secret.Items, 1, "%s: a CA is mounted without its key", secret)
					assert.Equal(t, "tls.crt", *vol.Secret.Items[0].Key, secret)
				}
			}
			assert.GreaterOrEqual(t, cas, 3, "the server, client and request-header CAs")
			for _, ic := range d.Spec.Template.Spec.InitContainers {
				secrets := mountedSecrets(ic, volumes)
				assert.NotContains(t, secrets, v.ServerName(), "%s: an init container never gets the serving key", *ic.Name)
				assert.NotContains(t, secrets, v.ExternalAdminName(), "%s: nor the external admin's", *ic.Name)
			}
		})
	}
}

// TestUsersKubeconfigReplacesTheClientIdentity: a user who brings a least-privilege
// identity gets no admin key in the server's container: neither the client certificate nor
// the external admin, which are then not even issued unless an init container needs the
// client identity.
func TestUsersKubeconfigReplacesTheClientIdentity(t *testing.T) {
	v := minimal()
	own := mountedSecrets(v.Deployment(nil, "h").Spec.Template.Spec.Containers[0], volumesOf(v.Deployment(nil, "h")))
	assert.Contains(t, own, "vw-virtual-workspace-client")
	assert.Contains(t, own, "vw-virtual-workspace-kubeconfig")
	assert.Contains(t, own, "vw-virtual-workspace-external-admin")

	v.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "least-privilege"}
	d := v.Deployment(nil, "h")
	secrets := mountedSecrets(d.Spec.Template.Spec.Containers[0], volumesOf(d))
	assert.Contains(t, secrets, "least-privilege")
	for _, s := range []string{"vw-virtual-workspace-client", "vw-virtual-workspace-kubeconfig",
		"vw-virtual-workspace-external-admin", "vw-virtual-workspace-external-admin-kubeconfig"} {
		assert.NotContains(t, secrets, s)
		assert.NotContains(t, waitedSecrets(v), s)
	}
	assert.Contains(t, v.UsersSecrets(), "least-privilege")
	assert.False(t, has(v.Args(), "--external-logical-cluster-admin-kubeconfig"))
	var names []string
	for _, c := range v.Certificates() {
		names = append(names, *c.Name)
	}
	assert.Equal(t, []string{"vw-virtual-workspace-server"}, names, "no identity is issued that no container uses")
	kubeconfigs, err := v.Kubeconfigs()
	require.NoError(t, err)
	assert.Empty(t, kubeconfigs)
	volume := volumesOf(d)["kcp-server-kubeconfig"]
	require.Len(t, volume.Secret.Items, 1)
	assert.Equal(t, "kubeconfig", *volume.Secret.Items[0].Key, "the user's kubeconfig alone")

	// An init container without a kubeconfig of its own uses the server's client identity.
	v.Spec.InitContainers = []operatorv1alpha1.VirtualWorkspaceInitContainer{{Name: "init"}}
	d = v.Deployment(nil, "h")
	volumes := volumesOf(d)
	assert.NotContains(t, mountedSecrets(d.Spec.Template.Spec.Containers[0], volumes), "vw-virtual-workspace-client")
	assert.Contains(t, mountedSecrets(d.Spec.Template.Spec.InitContainers[0], volumes), "vw-virtual-workspace-client")
	assert.Len(t, v.Certificates(), 2, "the client certificate, for the init container; still no external admin")
}

// TestInitContainerKubeconfig: each init container finds a kubeconfig at the same path, its
// own or the server's client kubeconfig, whose files it gets too.
func TestInitContainerKubeconfig(t *testing.T) {
	v := thirdParty()
	d := v.Deployment(nil, "h")
	volumes := volumesOf(d)
	inits := d.Spec.Template.Spec.InitContainers
	require.Len(t, inits, 2)
	at := func(c corev1ac.ContainerApplyConfiguration, dir string) string {
		for _, m := range c.VolumeMounts {
			if *m.MountPath == dir {
				return secretOf(volumes[*m.Name])
			}
		}
		return ""
	}
	assert.Equal(t, "bootstrap-kubeconfig", at(inits[0], "/etc/kcp/init-kubeconfig"))
	assert.Empty(t, at(inits[0], clientDir), "its own kubeconfig: not the server's client key")
	assert.Equal(t, "access-virtual-workspace-kubeconfig", at(inits[1], "/etc/kcp/init-kubeconfig"))
	assert.Equal(t, "access-virtual-workspace-client", at(inits[1], clientDir), "the files the server's kubeconfig names")
	assert.Equal(t, "root-server-ca", at(inits[1], caServerDir))
	assert.Equal(t, "ghcr.io/example/init:v1", *inits[0].Image)
	assert.Equal(t, "ghcr.io/kcp-dev/contrib-access-virtual-workspace:latest", *inits[1].Image, "the server's image")
	assert.Equal(t, "/access-vw", d.Spec.Template.Spec.Containers[0].Command[0])
	assert.Contains(t, v.UsersSecrets(), "bootstrap-kubeconfig")
	assert.Contains(t, v.UsersSecrets(), "seed")
}

func TestUsersSecrets(t *testing.T) {
	assert.Equal(t, []string{"extra-ca", "extra-client-ca", "extra-secret", "vw-kubeconfig"}, loaded().UsersSecrets(), "the projected Secret too")
	assert.Equal(t, []string{"bootstrap-kubeconfig", "seed"}, thirdParty().UsersSecrets())
	assert.Empty(t, minimal().UsersSecrets())
	for name, v := range fixtures() {
		for _, s := range v.UsersSecrets() {
			assert.NotContains(t, waitedSecrets(v), s, "%s: the Deployment does not wait for the user's %s", name, s)
		}
	}
}

func TestMountedSecrets(t *testing.T) {
	assert.Equal(t, []string{
		"root-merged-client-ca", "root-requestheader-client-ca", "root-server-ca",
		"vw-virtual-workspace-client", "vw-virtual-workspace-external-admin", "vw-virtual-workspace-external-admin-kubeconfig",
		"vw-virtual-workspace-kubeconfig", "vw-virtual-workspace-server",
	}, waitedSecrets(minimal()))
	assert.Equal(t, []string{
		"cache-kubeconfig", "loaded-virtual-workspace-merged-client-ca", "loaded-virtual-workspace-server",
		"root-requestheader-client-ca", "root-server-ca",
	}, waitedSecrets(loaded()), "its own client CA bundle, the cache server's kubeconfig")
}

// TestCache: the cache server's kubeconfig where the target has one; none for a root shard,
// whose embedded cache kcp reaches through --kubeconfig; the root shard's through a
// kubeconfig of the server's own for a Shard without one, where the client identity is in
// the container.
func TestCache(t *testing.T) {
	flag := "--cache-kubeconfig=/etc/kcp-virtual-workspaces/cache-kubeconfig/kubeconfig"
	l := loaded()
	assert.Contains(t, l.Args(), flag)
	assert.Contains(t, waitedSecrets(l), "cache-kubeconfig")

	m := minimal()
	assert.False(t, has(m.Args(), "--cache-kubeconfig"), "the root shard is its own cache")

	s := minimal()
	s.Target = onShard(object("vw"), shardOf(rootShard()), rootShard()).Target
	assert.Contains(t, s.Args(), flag)
	assert.Contains(t, waitedSecrets(s), "vw-virtual-workspace-cache-kubeconfig")
	kubeconfigs, err := s.Kubeconfigs()
	require.NoError(t, err)
	require.Len(t, kubeconfigs, 3)
	cfg, err := clientcmd.Load(kubeconfigs[2].Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	assert.Equal(t, rootshard.Server(rootShard()).BaseURL(), cfg.Clusters[kcp.ShardBaseContext].Server, "the root shard's embedded cache")
	assert.Equal(t, clientDir+"/tls.key", cfg.AuthInfos["vw-virtual-workspace"].ClientKey)

	s.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "least-privilege"}
	assert.False(t, has(s.Args(), "--cache-kubeconfig"), "no client identity in the container, no kubeconfig that needs it")
	assert.NotContains(t, waitedSecrets(s), "vw-virtual-workspace-cache-kubeconfig")

	third := thirdParty()
	assert.False(t, has(third.Args(), "--cache-kubeconfig"))
	d := third.Deployment(nil, "h")
	volumes := volumesOf(d)
	assert.Contains(t, mountedSecrets(d.Spec.Template.Spec.Containers[0], volumes), "access-virtual-workspace-cache-kubeconfig",
		"mounted, for extraArgs to name")
	assert.NotContains(t, mountedSecrets(d.Spec.Template.Spec.InitContainers[0], volumes), "access-virtual-workspace-cache-kubeconfig",
		"not where the client certificate it names is absent")
}

// TestImageFollowsTheTarget: without an image of its own, the server runs its target's kcp
// release, with the target's pull secrets.
func TestImageFollowsTheTarget(t *testing.T) {
	v := oldKcp()
	v.Target.Spec.Image.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	d := v.Deployment(nil, "h")
	assert.Equal(t, "ghcr.io/kcp-dev/kcp:v0.30.0", *d.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, "v0.30.0", v.Version().String())
	assert.Equal(t, "pull", *d.Spec.Template.Spec.ImagePullSecrets[0].Name)
	assert.Equal(t, "v0.32.3", loaded().Version().String(), "its own image wins")
	assert.Equal(t, "latest", thirdParty().Version().String())
}

func TestDeploymentReplicasAndRollout(t *testing.T) {
	v := minimal()
	assert.EqualValues(t, 2, *v.Deployment(nil, "h").Spec.Replicas, "a new Deployment starts with 2")
	scaled := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5)}}
	assert.EqualValues(t, 5, *v.Deployment(scaled, "h").Spec.Replicas, "an unset spec keeps what an HPA chose")
	assert.EqualValues(t, 3, *loaded().Deployment(scaled, "h").Spec.Replicas, "a set spec wins")
	assert.NotEqual(t, v.Deployment(nil, "a").Spec.Template.Annotations, v.Deployment(nil, "b").Spec.Template.Annotations)
}

// TestPodVolumesOnce: a volume the server and an init container share is in the pod once,
// and the init containers' pull secrets join the pod's once.
func TestPodVolumesOnce(t *testing.T) {
	v := thirdParty()
	v.Spec.InitContainers[1].Image = &operatorv1alpha1.ImageSpec{Repository: "ghcr.io/example/wait",
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "init-pull"}}}
	d := v.Deployment(nil, "h")
	seen := map[string]int{}
	for _, vol := range d.Spec.Template.Spec.Volumes {
		seen[*vol.Name]++
	}
	for name, n := range seen {
		assert.Equal(t, 1, n, name)
	}
	assert.Contains(t, seen, "scratch")
	assert.Contains(t, seen, "seed")
	var pulls []string
	for _, ref := range d.Spec.Template.Spec.ImagePullSecrets {
		pulls = append(pulls, *ref.Name)
	}
	assert.Equal(t, []string{"init-pull"}, pulls)
}

// TestReservedVolumeNames: should a user's volume take one of our names past validation, ours
// stays, and no init container mount reaches it.
func TestReservedVolumeNames(t *testing.T) {
	v := thirdParty()
	v.Spec.ExtraVolumes = append(v.Spec.ExtraVolumes, corev1.Volume{Name: "kcp-server",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	v.Spec.InitContainers[0].VolumeMounts = append(v.Spec.InitContainers[0].VolumeMounts,
		corev1.VolumeMount{Name: "kcp-server", MountPath: "/var/steal"})
	d := v.Deployment(nil, "h")
	assert.Equal(t, "access-virtual-workspace-server", secretOf(volumesOf(d)["kcp-server"]))
	for _, m := range d.Spec.Template.Spec.InitContainers[0].VolumeMounts {
		assert.NotEqual(t, "kcp-server", *m.Name)
	}
}

// waitedSecrets are the Secrets of v's mounts that its Deployment waits for.
func waitedSecrets(v VirtualWorkspace) []string {
	return workload.Secrets(v.Mounts(), workload.WaitedSecret)
}
