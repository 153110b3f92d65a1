package e2e

import (
	"encoding/json"
	"encoding/pem"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// serviceAccountSetup is serviceAccountRotationSetup with a second Shard and a FrontProxy.
const serviceAccountSetup = serviceAccountRotationSetup + `---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: beta
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-beta:2379"]}
  auth:
    serviceAccount: {enabled: true}
---
apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {ref: {name: root}}
  auth:
    serviceAccount: {enabled: true}
`

// TestServiceAccountKeysReachEveryComponent realizes a RootShard, two Shards and a FrontProxy
// with auth.serviceAccount enabled (kcp-operator's manifests, applied with kubectl): each
// Deployment verifies tokens with one --service-account-key-file per shard, each pointing at
// a mounted tls.crt, and no Secret mounted for a CA or another shard's key exposes a private
// key in the keys that are mounted.
func TestServiceAccountKeysReachEveryComponent(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "service-accounts")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, serviceAccountSetup))
	for _, obj := range []string{"rootshard/root", "shard/alpha", "shard/beta", "frontproxy/edge"} {
		waitFor(t, ns, obj, "Available")
	}

	wantSecrets := []string{"alpha-service-account", "beta-service-account", "root-service-account"}
	for _, name := range []string{"root-kcp", "alpha-shard-kcp", "beta-shard-kcp", "edge-front-proxy"} {
		var d appsv1.Deployment
		// The set of keys grows as the shards' Secrets are issued: the Deployments converge.
		require.Eventually(t, func() bool {
			d = deployment(t, ns, name)
			return len(keyFileArgs(d)) == len(wantSecrets)
		}, 2*time.Minute, time.Second, "%s: one --service-account-key-file per shard", name)

		spec := d.Spec.Template.Spec
		var keySecrets []string
		for _, file := range keyFileArgs(d) {
			v := volumeAt(t, spec, path.Dir(file))
			require.NotNil(t, v.Secret, "%s: %s is not from a Secret", name, file)
			assert.Equal(t, "tls.crt", path.Base(file), name)
			if len(v.Secret.Items) > 0 {
				assert.Equal(t, []corev1.KeyToPath{{Key: "tls.crt", Path: "tls.crt"}}, v.Secret.Items, "%s: %s", name, v.Name)
			} else {
				// Only a shard's own key pair is mounted whole: it signs with tls.key.
				assert.Equal(t, "service-account", v.Name, "%s mounts %s whole", name, v.Secret.SecretName)
			}
			keySecrets = append(keySecrets, v.Secret.SecretName)
		}
		slices.Sort(keySecrets)
		assert.Equal(t, wantSecrets, keySecrets, name)
		if name == "edge-front-proxy" {
			assert.Contains(t, spec.Containers[0].Args, "--service-account-lookup=false")
		}

		for _, v := range spec.Volumes {
			if v.Secret == nil || !(strings.HasPrefix(v.Name, "ca-") || strings.HasPrefix(v.Name, "sa-") || strings.HasSuffix(v.Name, "-ca")) {
				continue
			}
			require.NotEmpty(t, v.Secret.Items, "%s: %s mounts all of %s", name, v.Name, v.Secret.SecretName)
			secret := hostSecret(t, ns, v.Secret.SecretName)
			for _, item := range v.Secret.Items {
				assert.Falsef(t, holdsPrivateKey(secret.Data[item.Key]), "%s: %s mounts a private key from %s/%s", name, v.Name, v.Secret.SecretName, item.Key)
			}
		}
	}
}

func deployment(t *testing.T, ns, name string) appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	require.NoError(t, json.Unmarshal([]byte(kubectl(t, "get", "deployment", name, "-n", ns, "-o", "json")), &d))
	return d
}

func hostSecret(t *testing.T, ns, name string) corev1.Secret {
	t.Helper()
	var s corev1.Secret
	require.NoError(t, json.Unmarshal([]byte(kubectl(t, "get", "secret", name, "-n", ns, "-o", "json")), &s))
	return s
}

// keyFileArgs are the files of the --service-account-key-file flags of a Deployment's kcp or
// kcp-front-proxy container.
func keyFileArgs(d appsv1.Deployment) []string {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	var files []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if f, ok := strings.CutPrefix(a, "--service-account-key-file="); ok {
			files = append(files, f)
		}
	}
	return files
}

// volumeAt is the volume mounted at dir in the first container.
func volumeAt(t *testing.T, spec corev1.PodSpec, dir string) corev1.Volume {
	t.Helper()
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name {
				return v
			}
		}
	}
	require.Failf(t, "not mounted", "nothing is mounted at %s", dir)
	return corev1.Volume{}
}

// holdsPrivateKey reports whether data has a PEM block of a private key of any kind.
func holdsPrivateKey(data []byte) bool {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return false
		}
		if strings.Contains(block.Type, "PRIVATE KEY") {
			return true
		}
	}
}
