package localstack

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// planFixture plans the members of a fixture with ports counting up from 30000, so that
// every mapped port is told apart.
func planFixture(t *testing.T, f *EtcdFixture) (*EtcdMembers, error) {
	t.Helper()
	next := 30000
	return planEtcdMembers(etcdMembersEnv{dir: t.TempDir()}, f.StatefulSet, f.Secrets, func() (int, error) {
		next++
		return next, nil
	})
}

func newFixture(t *testing.T) *EtcdFixture {
	t.Helper()
	f, err := NewEtcdFixture(t.TempDir(), "ns1", "root", 3)
	require.NoError(t, err)
	return f
}

func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func TestPlanEtcdMembersMapsTheDesignsMembersToLoopback(t *testing.T) {
	f := newFixture(t)
	m, err := planFixture(t, f)
	require.NoError(t, err)
	members := m.Members()
	require.Len(t, members, 3)

	for i, mem := range members {
		assert.Equal(t, []string{"root-etcd-0", "root-etcd-1", "root-etcd-2"}[i], mem.Name)
		assert.Len(t, mem.Ports, 3, "client, peer and metrics port of %s", mem.Name)
		args := strings.Join(mem.Args, " ")
		for _, gone := range []string{"0.0.0.0", ".svc", "$(", "/etc/etcd", "/var/lib/etcd"} {
			assert.NotContains(t, args, gone, "every address and path is mapped")
		}
		assert.Equal(t, mem.Name, flagValue(mem.Args, "name"))
		assert.Equal(t, "https://127.0.0.1:"+strconv.Itoa(mem.Ports[2380]), flagValue(mem.Args, "listen-peer-urls"))
		assert.Equal(t, "https://127.0.0.1:"+strconv.Itoa(mem.Ports[2379]), flagValue(mem.Args, "listen-client-urls"))
		assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(mem.Ports[2381]), flagValue(mem.Args, "listen-metrics-urls"))
		assert.Equal(t, mem.ClientURL, flagValue(mem.Args, "advertise-client-urls"))
		assert.Equal(t, mem.PeerURL, flagValue(mem.Args, "initial-advertise-peer-urls"))
		assert.Equal(t, "ns1.root-etcd", flagValue(mem.Args, "initial-cluster-token"), "what is no address stays")
		assert.Equal(t, "true", flagValue(mem.Args, "client-cert-auth"))

		// Every member names the same cluster, each member at its own peer port.
		var initial []string
		for _, other := range members {
			initial = append(initial, other.Name+"="+other.PeerURL)
		}
		assert.Equal(t, strings.Join(initial, ","), flagValue(mem.Args, "initial-cluster"))

		// The mounted Secrets are where the args say, the data dir is the member's own.
		dataDir := flagValue(mem.Args, "data-dir")
		assert.Equal(t, "data", filepath.Base(dataDir))
		assert.DirExists(t, filepath.Dir(dataDir))
		assert.Contains(t, dataDir, mem.Name)
		for flagName, want := range map[string][]byte{
			"cert-file":            f.Secrets["root-etcd-server"].Data["tls.crt"],
			"key-file":             f.Secrets["root-etcd-server"].Data["tls.key"],
			"trusted-ca-file":      f.Secrets["root-etcd-server"].Data["ca.crt"],
			"peer-cert-file":       f.Secrets["root-etcd-peer"].Data["tls.crt"],
			"peer-trusted-ca-file": f.Secrets["root-etcd-peer"].Data["ca.crt"],
		} {
			got, err := os.ReadFile(flagValue(mem.Args, flagName))
			require.NoError(t, err, flagName)
			assert.Equal(t, want, got, flagName)
		}
	}
	assert.NotEqual(t, members[0].Ports[2380], members[1].Ports[2380], "a port per member")
}

func TestPlanEtcdMembersFollowsFlagSyntaxAndSecretItems(t *testing.T) {
	f := newFixture(t)
	c := &f.StatefulSet.Spec.Template.Spec.Containers[0]
	// --flag value, single dashes, $$ escaping, a Secret volume with items under other paths.
	c.Args = slices.DeleteFunc(c.Args, func(a string) bool {
		return strings.HasPrefix(a, "--name=") || strings.HasPrefix(a, "--cert-file=") || strings.HasPrefix(a, "--initial-cluster-token=")
	})
	c.Args = append(c.Args, "-name", "$(POD_NAME)", "--cert-file", "/etc/etcd/tls/server/chain/cert.pem", "--initial-cluster-token=$$(POD_NAME)")
	f.StatefulSet.Spec.Template.Spec.Volumes[0].Secret.Items = []corev1.KeyToPath{
		{Key: "tls.crt", Path: "chain/cert.pem"}, {Key: "tls.key", Path: "tls.key"}, {Key: "ca.crt", Path: "ca.crt"},
	}
	m, err := planFixture(t, f)
	require.NoError(t, err)
	args := m.Members()[1].Args
	assert.Equal(t, "root-etcd-1", flagValue(args, "name"))
	assert.Equal(t, "$(POD_NAME)", flagValue(args, "initial-cluster-token"), "$$ is a literal $, as kubelet has it")
	got, err := os.ReadFile(flagValue(args, "cert-file"))
	require.NoError(t, err)
	assert.Equal(t, f.Secrets["root-etcd-server"].Data["tls.crt"], got)
	assert.NoFileExists(t, filepath.Join(filepath.Dir(flagValue(args, "key-file")), "tls.crt"), "only the items are written")
}

func TestPlanEtcdMembersRefusesWhatItDoesNotMap(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(f *EtcdFixture, c *corev1.Container)
		want   string
	}{
		"a path outside every mount": {
			func(_ *EtcdFixture, c *corev1.Container) { c.Args = append(c.Args, "--wal-dir=/wal") },
			"outside every volume",
		},
		"a relative path": {
			func(_ *EtcdFixture, c *corev1.Container) { c.Args = append(c.Args, "--wal-dir=wal") },
			"relative path",
		},
		"a host that is no member": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--advertise-client-urls=https://root-etcd.ns1.svc:2379")
			},
			"no member of root-etcd",
		},
		"a listen address of another member": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--listen-client-urls=https://root-etcd-2.root-etcd-peers.ns1.svc:2379")
			},
			"another member",
		},
		"a member port nobody listens on": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--advertise-client-urls=https://$(POD_NAME).root-etcd-peers.ns1.svc.cluster.local:12379")
			},
			"does not listen",
		},
		"a flag etcd does not know": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--listen-everything=true")
			},
			"etcd would refuse",
		},
		"a boolean flag with its value apart": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--peer-auto-tls", "true")
			},
			`"true" is not a valid flag`,
		},
		"a config file": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--config-file=/etc/etcd/tls/server/ca.crt")
			},
			"past what the harness maps",
		},
		"discovery": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Args = append(c.Args, "--discovery-srv=example.com")
			},
			"past what the harness maps",
		},
		"an ETCD_ variable": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Env = append(c.Env, corev1.EnvVar{Name: "ETCD_LISTEN_CLIENT_URLS", Value: "https://0.0.0.0:2379"})
			},
			"ETCD_LISTEN_CLIENT_URLS",
		},
		"a variable it cannot expand": {
			func(_ *EtcdFixture, c *corev1.Container) {
				c.Env = append(c.Env, corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}})
				c.Args = append(c.Args, "--advertise-client-urls=https://$(POD_IP):2379")
			},
			"$(POD_IP)",
		},
		"a missing Secret": {
			func(f *EtcdFixture, _ *corev1.Container) { delete(f.Secrets, "root-etcd-peer") },
			"Secret root-etcd-peer",
		},
		"another command": {
			func(_ *EtcdFixture, c *corev1.Container) { c.Command = []string{"/bin/sh", "-c", "etcd"} },
			"does not run etcd",
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			tc.change(f, &f.StatefulSet.Spec.Template.Spec.Containers[0])
			_, err := planFixture(t, f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
