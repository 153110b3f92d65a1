package localstack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcp-setups/apiserver/cmd/apiserver/app"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// typed is an apply configuration of the builders as the object the cluster would hold.
func typed[T any](t *testing.T, applyConfiguration any) *T {
	t.Helper()
	data, err := json.Marshal(applyConfiguration)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(data, &out))
	return &out
}

// backupCluster is a managed etcd of the RootShard root in namespace ns as the builders
// describe it: base (root, or <shard>-shard), replicas members, a backup to a volume.
func backupCluster(ns, kind, owner, base string, replicas int32) *etcd.Cluster {
	return &etcd.Cluster{Kind: kind, OwnerName: owner, Base: base, Namespace: ns, ClusterDomain: "cluster.local", RootShard: "root",
		AgentImage: "registry.example.com/kcp-setups-apiserver:v1",
		Spec: &operatorv1alpha1.ManagedEtcd{Replicas: ptr.To(replicas),
			Backup: &operatorv1alpha1.EtcdBackup{Retention: ptr.To[int32](2), Store: operatorv1alpha1.EtcdSnapshotStore{Volume: &operatorv1alpha1.EtcdSnapshotVolume{}}}}}
}

// etcdCAs are the RootShard root's etcd CAs, made for the test.
type etcdCAs struct{ *EtcdCAs }

func newEtcdCAs(t *testing.T) etcdCAs {
	t.Helper()
	cas, err := NewEtcdCAs(t.TempDir(), "root")
	require.NoError(t, err)
	return etcdCAs{cas}
}

// secrets are the Secrets of c (EtcdCAs.Secrets).
func (cas etcdCAs) secrets(t *testing.T, c *etcd.Cluster) map[string]*corev1.Secret {
	t.Helper()
	out, err := cas.Secrets(c)
	require.NoError(t, err)
	return out
}

// countingPorts hands out ports counting up from first, so that every mapped port is told
// apart.
func countingPorts(first int) func() (int, error) {
	next := first
	return func() (int, error) {
		next++
		return next, nil
	}
}

// plannedAgent plans the builders' agent of c against its planned members.
func plannedAgent(t *testing.T, c *etcd.Cluster, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap,
	change func(dep *appsv1.Deployment),
) (*EtcdAgent, *EtcdMembers, error) {
	t.Helper()
	members, err := planEtcdMembers(etcdMembersEnv{dir: t.TempDir()}, typed[appsv1.StatefulSet](t, c.StatefulSet("hash")), secrets, countingPorts(30000))
	require.NoError(t, err)
	dep := typed[appsv1.Deployment](t, c.AgentDeployment("image", "hash"))
	if change != nil {
		change(dep)
	}
	a, _, err := planEtcdAgent(etcdAgentEnv{dir: t.TempDir(), claimsDir: t.TempDir(), bin: "kcp-setups-apiserver"}, dep, secrets, configMaps, members.memberAddress, countingPorts(40000))
	return a, members, err
}

func TestPlanEtcdAgentMapsTheBuildersAgent(t *testing.T) {
	cas := newEtcdCAs(t)
	c := backupCluster("ns1", "rootshard", "root", "root", 3)
	secrets := cas.secrets(t, c)
	a, members, err := plannedAgent(t, c, secrets, nil, nil)
	require.NoError(t, err)

	args := strings.Join(a.Args, " ")
	for _, gone := range []string{"0.0.0.0", ".svc", "$(", "/etc/etcd", "/var/lib/etcd-snapshots", ":2390"} {
		assert.NotContains(t, args, gone, "every address and path is mapped")
	}
	assert.Equal(t, []string{"etcd-agent", "serve"}, a.Args[:2])
	assert.Equal(t, map[int]int{2390: 40001}, a.Ports)
	assert.Equal(t, "https://localhost:40001", a.URL)
	assert.Equal(t, "127.0.0.1:40001", flagValue(a.Args, "listen-address"))
	assert.Equal(t, strings.Join(members.ClientURLs(), ","), flagValue(a.Args, "endpoints"), "each member's own client port")
	assert.Equal(t, "root", flagValue(a.Args, "base"), "what is no address stays")
	assert.Equal(t, "2", flagValue(a.Args, "retention"))
	assert.Equal(t, "root-etcd-backup", a.Service)
	assert.Equal(t, c.AgentSelectorLabels(), a.selector)

	require.Contains(t, a.Claims, c.SnapshotClaimName())
	assert.Equal(t, a.Claims[c.SnapshotClaimName()], flagValue(a.Args, "snapshot-dir"), "the store is the claim's directory")
	assert.DirExists(t, flagValue(a.Args, "snapshot-dir"))
	for flagName, want := range map[string][]byte{
		"cert-file":       secrets["root-etcd-backup"].Data["tls.crt"],
		"key-file":        secrets["root-etcd-backup"].Data["tls.key"],
		"trusted-ca-file": secrets["root-etcd-client-trust"].Data["tls.crt"],
	} {
		got, err := os.ReadFile(flagValue(a.Args, flagName))
		require.NoError(t, err, flagName)
		assert.Equal(t, want, got, flagName)
	}
}

func TestPlanEtcdAgentMapsAnS3Store(t *testing.T) {
	cas := newEtcdCAs(t)
	c := backupCluster("ns1", "rootshard", "root", "root", 1)
	c.Spec.Backup.Store = operatorv1alpha1.EtcdSnapshotStore{S3: &operatorv1alpha1.S3SnapshotStore{
		Endpoint: "https://127.0.0.1:9000", Bucket: "snapshots", CredentialsSecretRef: corev1.LocalObjectReference{Name: "s3-creds"},
		CABundle: []byte("a CA bundle")}}
	secrets := cas.secrets(t, c)
	secrets["s3-creds"] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-creds"},
		Data: map[string][]byte{"accessKeyID": []byte("key"), "secretAccessKey": []byte("secret"), "other": []byte("not mounted")}}
	bundle := typed[corev1.ConfigMap](t, c.S3CABundle())
	a, _, err := plannedAgent(t, c, secrets, map[string]*corev1.ConfigMap{bundle.Name: bundle}, nil)
	require.NoError(t, err)

	assert.Empty(t, a.Claims, "no volume store")
	assert.Equal(t, "https://127.0.0.1:9000", flagValue(a.Args, "s3-endpoint"), "an endpoint outside the cluster stays")
	assert.Equal(t, "ns1/root/", flagValue(a.Args, "s3-prefix"))
	ca, err := os.ReadFile(flagValue(a.Args, "s3-ca-file"))
	require.NoError(t, err)
	assert.Equal(t, "a CA bundle", string(ca), "the ConfigMap's key")
	credentials := flagValue(a.Args, "s3-credentials-dir")
	for key, want := range map[string]string{"accessKeyID": "key", "secretAccessKey": "secret"} {
		got, err := os.ReadFile(filepath.Join(credentials, key))
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	assert.NoFileExists(t, filepath.Join(credentials, "other"), "only the items are written")
	assert.NotContains(t, strings.Join(a.Args, " "), "secret", "no credential on the command line")
}

func TestPlanEtcdAgentRefusesWhatItDoesNotMap(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(dep *appsv1.Deployment, c *corev1.Container, secrets map[string]*corev1.Secret)
		want   string
	}{
		"a path outside every mount": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "--s3-ca-file=/etc/ssl/ca.crt")
			},
			"outside every volume",
		},
		"a relative path": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "--cert-file=tls.crt")
			},
			"relative path",
		},
		"an endpoint that is no member": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "--endpoints=https://root-etcd.ns1.svc:2379")
			},
			"no member of ns1/root-etcd",
		},
		"a member port nobody listens on": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "--endpoints=https://root-etcd-0.root-etcd-peers.ns1.svc.cluster.local:12379")
			},
			"does not listen",
		},
		"an endpoint on the agent's own loopback": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "--endpoints=https://127.0.0.1:2379")
			},
			"no member",
		},
		"no listen address": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = withoutFlag(c.Args, "listen-address")
			},
			"no --listen-address",
		},
		"a listen address of another host": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(withoutFlag(c.Args, "listen-address"), "--listen-address=10.0.0.1:2390")
			},
			"not the pod's own address",
		},
		"another port than the Service's": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(withoutFlag(c.Args, "listen-address"), "--listen-address=:8443")
			},
			"does not listen on port 2390",
		},
		"an S3 endpoint in the cluster": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(withoutFlag(c.Args, "snapshot-dir"), "--s3-endpoint=https://minio.storage.svc:9000")
			},
			"a name in the cluster",
		},
		"a flag the agent does not know": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "--config=/etc/etcd-backup/tls/tls.crt")
			},
			"unknown flag --config",
		},
		"a positional argument": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append(c.Args, "now")
			},
			`"now": not a flag`,
		},
		"the restore": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Args = append([]string{"etcd-agent", "restore"}, c.Args[2:]...)
			},
			"unknown flag",
		},
		"another command": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Command = []string{"/bin/sh"}
			},
			"is not kcp-setups-apiserver",
		},
		"a second container": {
			func(dep *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				dep.Spec.Template.Spec.Containers = append(dep.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar"})
			},
			"other containers",
		},
		"environment from envFrom": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}
			},
			"envFrom",
		},
		"a variable of a Secret not given": {
			func(_ *appsv1.Deployment, c *corev1.Container, _ map[string]*corev1.Secret) {
				c.Env = append(c.Env, corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Key: "token"}}})
			},
			"TOKEN is key token of Secret missing",
		},
		"a missing Secret": {
			func(_ *appsv1.Deployment, _ *corev1.Container, secrets map[string]*corev1.Secret) {
				delete(secrets, "root-etcd-backup")
			},
			"Secret root-etcd-backup",
		},
	} {
		t.Run(name, func(t *testing.T) {
			cas := newEtcdCAs(t)
			c := backupCluster("ns1", "rootshard", "root", "root", 1)
			secrets := cas.secrets(t, c)
			_, _, err := plannedAgent(t, c, secrets, nil, func(dep *appsv1.Deployment) {
				tc.change(dep, &dep.Spec.Template.Spec.Containers[0], secrets)
			})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func withoutFlag(args []string, name string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--"+name+"=") {
			out = append(out, a)
		}
	}
	return out
}

// TestAgentFlagKindsAreTheCommands holds the harness's table of the agent's flags to the
// commands themselves: a flag added to `etcd-agent serve` or `restore` fails here until the
// harness says how to map it.
func TestAgentFlagKindsAreTheCommands(t *testing.T) {
	var agent = app.NewCommand()
	for command, kinds := range agentFlagKinds {
		cmd, rest, err := agent.Find([]string{"etcd-agent", command})
		require.NoError(t, err)
		require.Empty(t, rest)
		require.Equal(t, command, cmd.Name())
		var flags []string
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				flags = append(flags, f.Name)
			}
		})
		var mapped []string
		for name := range kinds {
			mapped = append(mapped, name)
		}
		assert.ElementsMatch(t, flags, mapped, "etcd-agent %s", command)
	}
}
