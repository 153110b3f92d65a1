package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// TestFeaturesKeepTheirOrder: a component's flags and volumes are its features', each in the
// order the features come, which the goldens and the flag table compare.
func TestFeaturesKeepTheirOrder(t *testing.T) {
	a := Feature{Args: []string{"--a"}, Mounts: []Mount{{Volume: "a", Secret: "sa"}}}
	b := Feature{Args: []string{"--b1", "--b2"}}
	c := Feature{Mounts: []Mount{{Volume: "c", Secret: "sc"}}}
	all := Features(a, b, c)
	assert.Equal(t, []string{"--a", "--b1", "--b2"}, all.Args)
	require.Len(t, all.Mounts, 2)
	assert.Equal(t, []string{"a", "c"}, []string{all.Mounts[0].Volume, all.Mounts[1].Volume})
	assert.Empty(t, Features().Args)
}

// TestMountVolumes: a Secret mount projects only its keys, a ConfigMap mount is of the
// ConfigMap, and every mount is read-only at its directory.
func TestMountVolumes(t *testing.T) {
	ca := Mount{Volume: "ca", Secret: "root-ca", Dir: "/etc/ca", Keys: []string{"tls.crt"}}
	v := ca.AsVolume()
	require.NotNil(t, v.Secret)
	assert.Equal(t, "root-ca", *v.Secret.SecretName)
	require.Len(t, v.Secret.Items, 1, "the CA's key stays out of the pod")
	assert.Equal(t, "tls.crt", *v.Secret.Items[0].Key)
	assert.Equal(t, "tls.crt", *v.Secret.Items[0].Path)

	whole := Mount{Volume: "server", Secret: "server", Dir: "/etc/server"}.AsVolume()
	assert.Empty(t, whole.Secret.Items, "without keys, the whole Secret")

	policy := Mount{Volume: "audit-policy", ConfigMap: "audit", Dir: "/etc/audit"}.AsVolume()
	assert.Nil(t, policy.Secret)
	require.NotNil(t, policy.ConfigMap)
	assert.Equal(t, "audit", *policy.ConfigMap.Name)

	m := ca.AsVolumeMount()
	assert.Equal(t, "ca", *m.Name)
	assert.Equal(t, "/etc/ca", *m.MountPath)
	assert.True(t, *m.ReadOnly)

	pod, c := corev1ac.PodSpec(), corev1ac.Container()
	AddMounts(pod, c, []Mount{ca, {Volume: "audit-policy", ConfigMap: "audit", Dir: "/etc/audit"}})
	assert.Len(t, pod.Volumes, 2)
	assert.Len(t, c.VolumeMounts, 2)
}

// TestSecretsOfMounts: the Secrets a Deployment waits for, those the user provides and all
// mounted ones come from one list of mounts, sorted and once each, ConfigMaps left out.
func TestSecretsOfMounts(t *testing.T) {
	mounts := []Mount{
		{Volume: "server", Secret: "s-server"},
		{Volume: "ca", Secret: "ca"},
		{Volume: "oidc-ca", Secret: "dex-ca", User: true},
		{Volume: "sa-other", Secret: "other-service-account", Optional: true},
		{Volume: "audit-policy", ConfigMap: "audit", User: true},
		{Volume: "again", Secret: "ca"},
	}
	assert.Equal(t, []string{"ca", "dex-ca", "other-service-account", "s-server"}, Secrets(mounts, AnySecret))
	assert.Equal(t, []string{"ca", "s-server"}, Secrets(mounts, WaitedSecret), "neither the user's nor another shard's")
	assert.Equal(t, []string{"dex-ca"}, Secrets(mounts, UsersSecret), "the ConfigMap is no Secret")
	assert.Nil(t, Secrets(nil, AnySecret))
}
