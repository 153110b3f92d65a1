package localstack

import (
	"crypto/x509"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// restoringCluster is the managed etcd of the Shard owner in ns, restoring snapshot from
// the RootShard root's agent.
func restoringCluster(ns, owner string, replicas int32, snapshot string) *etcd.Cluster {
	c := backupCluster(ns, "shard", owner, owner+"-shard", replicas)
	c.Spec.Backup = nil
	c.Restoring = &etcd.Restoring{Snapshot: snapshot, SourceURL: backupCluster(ns, "rootshard", "root", "root", 1).AgentURL()}
	return c
}

func TestPlanEtcdMembersMapsTheRestoreInitContainer(t *testing.T) {
	cas := newEtcdCAs(t)
	root := backupCluster("ns1", "rootshard", "root", "root", 1)
	agent, _, err := plannedAgent(t, root, cas.secrets(t, root), nil, nil)
	require.NoError(t, err)
	east := restoringCluster("ns1", "east", 3, "root-20261129-000000")
	secrets := cas.secrets(t, east)
	env := etcdMembersEnv{dir: t.TempDir(), agentBin: "/bin/kcp-setups-apiserver", with: EtcdMembersWith{Agents: []*EtcdAgent{agent}}}
	m, err := planEtcdMembers(env, typed[appsv1.StatefulSet](t, east.StatefulSet("hash")), secrets, countingPorts(30000))
	require.NoError(t, err)

	for i, mem := range m.Members() {
		require.Len(t, m.members[i].inits, 1, mem.Name)
		init := m.members[i].inits[0]
		assert.Equal(t, "restore", init.name)
		assert.Equal(t, "/bin/kcp-setups-apiserver", init.bin)
		assert.Equal(t, []string{"POD_NAME=" + mem.Name}, init.env)
		assert.Equal(t, []string{"etcd-agent", "restore"}, init.args[:2])
		args := strings.Join(init.args, " ")
		for _, gone := range []string{".svc", "$(", "/etc/etcd", "/var/lib/etcd"} {
			assert.NotContains(t, args, gone, "every address and path is mapped")
		}
		assert.Equal(t, "root-20261129-000000", flagValue(init.args, "snapshot"))
		assert.Equal(t, agent.URL, flagValue(init.args, "source"), "the agent's Service leads to the agent")
		// What the restore writes into the data, the member runs with.
		for _, same := range []string{"data-dir", "name", "initial-advertise-peer-urls", "initial-cluster", "initial-cluster-token"} {
			assert.Equal(t, flagValue(mem.Args, same), flagValue(init.args, same), "--%s of %s", same, mem.Name)
		}
		assert.NotEmpty(t, flagValue(init.args, "data-dir"))
		for flagName, want := range map[string][]byte{
			"cert-file":       secrets["east-shard-etcd-server"].Data["tls.crt"],
			"key-file":        secrets["east-shard-etcd-server"].Data["tls.key"],
			"trusted-ca-file": secrets["root-etcd-client-trust"].Data["tls.crt"],
		} {
			got, err := os.ReadFile(flagValue(init.args, flagName))
			require.NoError(t, err, flagName)
			assert.Equal(t, want, got, flagName)
		}
	}
	assert.Equal(t, "https://localhost:"+strconv.Itoa(agent.Ports[2390]), agent.URL)
}

func TestPlanEtcdMembersRefusesARestoreItCannotMap(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(c *corev1.Container, with *EtcdMembersWith)
		want   string
	}{
		"no agent run for the source": {
			func(_ *corev1.Container, with *EtcdMembersWith) { with.Agents = nil },
			"no backup agent the harness runs",
		},
		"another agent's port": {
			func(c *corev1.Container, _ *EtcdMembersWith) {
				c.Args = append(withoutFlag(c.Args, "source"), "--source=https://root-etcd-backup.ns1.svc:9443")
			},
			"where the agent does not listen",
		},
		"a peer URL of no member": {
			func(c *corev1.Container, _ *EtcdMembersWith) {
				c.Args = append(withoutFlag(c.Args, "initial-cluster"), "--initial-cluster=x=https://other.ns1.svc:2380")
			},
			"no member of east-shard-etcd",
		},
		"the serve": {
			func(c *corev1.Container, _ *EtcdMembersWith) { c.Args = []string{"etcd-agent", "serve", "--base=x"} },
			"not the restore",
		},
		"another init container": {
			func(c *corev1.Container, _ *EtcdMembersWith) { c.Command = []string{"sh", "-c", "true"} },
			"is not kcp-setups-apiserver",
		},
		"a data directory outside every mount": {
			func(c *corev1.Container, _ *EtcdMembersWith) {
				c.Args = append(withoutFlag(c.Args, "data-dir"), "--data-dir=/tmp/data")
			},
			"outside every volume",
		},
	} {
		t.Run(name, func(t *testing.T) {
			cas := newEtcdCAs(t)
			root := backupCluster("ns1", "rootshard", "root", "root", 1)
			agent, _, err := plannedAgent(t, root, cas.secrets(t, root), nil, nil)
			require.NoError(t, err)
			east := restoringCluster("ns1", "east", 1, "root-20261129-000000")
			sts := typed[appsv1.StatefulSet](t, east.StatefulSet("hash"))
			with := EtcdMembersWith{Agents: []*EtcdAgent{agent}}
			tc.change(&sts.Spec.Template.Spec.InitContainers[0], &with)
			_, err = planEtcdMembers(etcdMembersEnv{dir: t.TempDir(), with: with}, sts, cas.secrets(t, east), countingPorts(30000))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "init container restore")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestPlanEtcdMembersMapsARestoreFromAnotherSetup: the members of a new RootShard (copy, of
// its own CAs) restoring from another RootShard's store (restore.from) run their init
// container against that RootShard's agent, with the restore client certificate (of the
// source's etcd client CA) and the source's client trust as mounted.
func TestPlanEtcdMembersMapsARestoreFromAnotherSetup(t *testing.T) {
	source := newEtcdCAs(t)
	root := backupCluster("ns1", "rootshard", "root", "root", 1)
	rootSecrets := source.secrets(t, root)
	agent, _, err := plannedAgent(t, root, rootSecrets, nil, nil)
	require.NoError(t, err)

	own, err := NewEtcdCAs(t.TempDir(), "copy")
	require.NoError(t, err)
	cp := backupCluster("ns1", "rootshard", "copy", "copy", 1)
	cp.RootShard, cp.Spec.Backup = "copy", nil
	cp.Restoring = cp.RestoreFrom(root, "root-20261129-000000")
	secrets, err := own.Secrets(cp)
	require.NoError(t, err)
	kp, err := source.Client.Issue(t.TempDir(), "restore-client", CertSpec{CommonName: "copy-etcd-restore", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
	secrets["copy-etcd-restore-client"] = &corev1.Secret{Data: map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM, "ca.crt": source.Client.CertPEM}}
	secrets["root-etcd-client-trust"] = rootSecrets["root-etcd-client-trust"]

	env := etcdMembersEnv{dir: t.TempDir(), agentBin: "/bin/kcp-setups-apiserver", with: EtcdMembersWith{Agents: []*EtcdAgent{agent}}}
	m, err := planEtcdMembers(env, typed[appsv1.StatefulSet](t, cp.StatefulSet("hash")), secrets, countingPorts(30000))
	require.NoError(t, err)
	require.Len(t, m.members[0].inits, 1)
	init := m.members[0].inits[0]
	assert.Equal(t, agent.URL, flagValue(init.args, "source"), "the source's agent, by its Service")
	for flagName, want := range map[string][]byte{
		"cert-file":       kp.CertPEM,
		"key-file":        kp.KeyPEM,
		"trusted-ca-file": source.Client.CertPEM,
	} {
		got, err := os.ReadFile(flagValue(init.args, flagName))
		require.NoError(t, err, flagName)
		assert.Equal(t, want, got, flagName)
	}
	assert.NotEqual(t, own.Client.CertPEM, source.Client.CertPEM, "the new setup's CA is its own")
}
