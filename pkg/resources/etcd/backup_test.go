package etcd

import (
	"encoding/json"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

func backupCluster(b *operatorv1alpha1.EtcdBackup) *Cluster {
	return &Cluster{Kind: "rootshard", OwnerName: "root", Base: "root", Namespace: "kcp", ClusterDomain: "cluster.local",
		RootShard: "root", OwnerUID: "uid-1", AgentImage: "ghcr.io/kcp-setups/apiserver:v1",
		Spec: &operatorv1alpha1.ManagedEtcd{Backup: b}}
}

func argsOf(c *corev1ac.ContainerApplyConfiguration) string { return strings.Join(c.Args, " ") }

// TestAgentWithAVolumeStore: the agent mounts its claim, its certificate and the client
// trust alone, runs as the members do, and reaches every member.
func TestAgentWithAVolumeStore(t *testing.T) {
	c := backupCluster(&operatorv1alpha1.EtcdBackup{Retention: ptrTo[int32](3)})
	d := c.AgentDeployment(c.AgentImage, "hash")
	pod := d.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	agent := pod.Containers[0]
	assert.Equal(t, []string{AgentCommand}, agent.Command)
	args := argsOf(&agent)
	for _, want := range []string{"etcd-agent serve", "--snapshot-dir=/var/lib/etcd-snapshots", "--retention=3", "--base=root",
		"--trusted-ca-file=/etc/etcd/tls/client-trust/tls.crt",
		"--endpoints=https://root-etcd-0.root-etcd-peers.kcp.svc.cluster.local:2379,https://root-etcd-1.root-etcd-peers.kcp.svc.cluster.local:2379"} {
		assert.Contains(t, args, want)
	}
	assert.False(t, *pod.AutomountServiceAccountToken)
	assert.Equal(t, nonRootID, *pod.SecurityContext.RunAsUser, "the etcd pods' identity, which alone reads the snapshots")
	claim := c.SnapshotClaim()
	require.NotNil(t, claim)
	assert.Equal(t, "root-etcd-snapshots", *claim.Name)
	assert.Equal(t, "uid-1", claim.Labels["operator.kcp.io/owner-uid"])
	assert.Empty(t, claim.OwnerReferences, "the snapshots outlive their owner")
	assert.Equal(t, "root-etcd-snapshots", c.VolumeClaimNames()[len(c.VolumeClaimNames())-1],
		"the owner's deletion with delete-etcd-volumes deletes the snapshot claim with the members'")
	assert.Equal(t, c.ClaimNames(), c.VolumeClaimNames()[:len(c.ClaimNames())])
	assert.Equal(t, []string{"root-etcd-backup", "root-etcd-client-trust"}, workload.Secrets(c.AgentMounts(), workload.WaitedSecret))
	assert.Contains(t, c.Leaves(), c.AgentLeaf())
	assert.Nil(t, c.S3CABundle())
}

// TestAgentWithAnS3Store: the credentials Secret is mounted, never put in the args; the
// prefix defaults to the namespace and base; the CA bundle comes from a ConfigMap.
func TestAgentWithAnS3Store(t *testing.T) {
	s3 := &operatorv1alpha1.S3SnapshotStore{Endpoint: "https://s3.example.com", Bucket: "b",
		CredentialsSecretRef: corev1.LocalObjectReference{Name: "creds"}, CABundle: []byte("PEM")}
	c := backupCluster(&operatorv1alpha1.EtcdBackup{Store: operatorv1alpha1.EtcdSnapshotStore{S3: s3}})
	agent := c.AgentDeployment(c.AgentImage, "hash").Spec.Template.Spec.Containers[0]
	args := argsOf(&agent)
	for _, want := range []string{"--s3-endpoint=https://s3.example.com", "--s3-bucket=b", "--s3-prefix=kcp/root/", "--s3-region=us-east-1",
		"--s3-credentials-dir=/etc/etcd-backup/s3", "--s3-ca-file=/etc/etcd-backup/s3-ca/ca.crt", "--retention=7"} {
		assert.Contains(t, args, want)
	}
	assert.NotContains(t, args, "snapshot-dir")
	assert.Nil(t, c.SnapshotClaim())
	assert.Equal(t, []string{"root-etcd-backup", "root-etcd-client-trust"}, workload.Secrets(c.AgentMounts(), workload.WaitedSecret))
	assert.Equal(t, []string{"creds"}, workload.Secrets(c.AgentMounts(), workload.UsersSecret), "the user's, held to get on it")
	require.NotNil(t, c.S3CABundle())
	assert.Equal(t, "PEM", c.S3CABundle().Data["ca.crt"])
}

// TestRestoreInitContainer: while a restore applies, every member restores before etcd
// starts, with its own name and the cluster's; without it, the members have no init
// container.
func TestRestoreInitContainer(t *testing.T) {
	c := backupCluster(nil)
	assert.Empty(t, c.StatefulSet("h").Spec.Template.Spec.InitContainers)

	c.Restoring = &Restoring{Snapshot: "old-20261128-101500", SourceURL: "https://old-etcd-backup.kcp.svc.cluster.local:2390"}
	pod := c.StatefulSet("h").Spec.Template.Spec
	require.Len(t, pod.InitContainers, 1)
	restore := pod.InitContainers[0]
	assert.Equal(t, c.AgentImage, *restore.Image)
	args := argsOf(&restore)
	for _, want := range []string{"etcd-agent restore", "--snapshot=old-20261128-101500", "--data-dir=/var/lib/etcd/data", "--name=$(POD_NAME)",
		"--initial-advertise-peer-urls=https://$(POD_NAME).root-etcd-peers.kcp.svc.cluster.local:2380",
		"--initial-cluster-token=kcp.root-etcd", "--source=https://old-etcd-backup.kcp.svc.cluster.local:2390",
		"--cert-file=/etc/etcd/tls/server/tls.crt"} {
		assert.Contains(t, args, want)
	}
	// The member's own flags and the restore's agree on the cluster.
	etcdArgs := strings.Join(c.Args(), " ")
	for _, a := range restore.Args {
		if strings.HasPrefix(a, "--initial-cluster=") || strings.HasPrefix(a, "--initial-cluster-token=") {
			assert.Contains(t, etcdArgs, a)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestRestoringSnapshot reads, from a StatefulSet as the host has it, the snapshot its
// restore init container restores, and nothing from one without.
func TestRestoringSnapshot(t *testing.T) {
	asStored := func(c *Cluster) *appsv1.StatefulSet {
		raw, err := json.Marshal(c.StatefulSet("h"))
		require.NoError(t, err)
		var sts appsv1.StatefulSet
		require.NoError(t, json.Unmarshal(raw, &sts))
		return &sts
	}
	c := backupCluster(nil)
	_, ok := RestoringSnapshot(asStored(c))
	assert.False(t, ok)
	_, ok = RestoringSnapshot(nil)
	assert.False(t, ok)

	c.Restoring = c.OwnRestore("root-20261128-101500")
	assert.Equal(t, c.AgentURL(), c.Restoring.SourceURL, "the own store is served by the own agent")
	name, ok := RestoringSnapshot(asStored(c))
	assert.True(t, ok)
	assert.Equal(t, "root-20261128-101500", name)
}

// TestRestoreFromAnotherSetup: a new setup's members read another setup's snapshot from that
// setup's agent with a client certificate of their own, issued by the source RootShard's etcd
// client CA (which alone the source agent trusts), and trust the agent by that CA alone; the
// StatefulSet waits for that certificate, and a StatefulSet as the host has it gives back the
// restore it was created with.
func TestRestoreFromAnotherSetup(t *testing.T) {
	source := &Cluster{Kind: "rootshard", OwnerName: "source", Base: "source", Namespace: "kcp", ClusterDomain: "cluster.local",
		RootShard: "source", Spec: &operatorv1alpha1.ManagedEtcd{Backup: &operatorv1alpha1.EtcdBackup{}}}
	c := &Cluster{Kind: "shard", OwnerName: "copy", Base: "copy-shard", Namespace: "kcp", ClusterDomain: "cluster.local",
		RootShard: "root", OwnerUID: "uid-2", AgentImage: "ghcr.io/kcp-setups/apiserver:v1", Spec: &operatorv1alpha1.ManagedEtcd{}}
	c.Restoring = c.RestoreFrom(source, "source-20261129-010000")

	cert := c.Restoring.Certificate
	require.NotNil(t, cert)
	assert.Equal(t, "copy-shard-etcd-restore-client", *cert.Name)
	assert.Equal(t, "kcp", *cert.Namespace)
	assert.Equal(t, "source-etcd-client-ca", *cert.Spec.IssuerRef.Name, "the source RootShard's etcd client CA, which its agent trusts")
	assert.Equal(t, "Issuer", *cert.Spec.IssuerRef.Kind)
	assert.Equal(t, "copy-shard-etcd-restore-client", *cert.Spec.SecretName)
	assert.Equal(t, "copy", cert.Labels["operator.kcp.io/shard"], "the restoring object's, which the server marks with its UID")
	assert.Contains(t, cert.Spec.Usages, cmv1.UsageClientAuth)
	assert.NotContains(t, cert.Spec.Usages, cmv1.UsageServerAuth)
	assert.Contains(t, c.MountedSecrets(), "copy-shard-etcd-restore-client", "the StatefulSet waits for it")
	for _, leaf := range c.Leaves() {
		assert.NotEqual(t, "source-etcd-client-ca", leaf.Issuer, "the setup's own certificates stay of its own CAs: %s", leaf.Name)
	}

	pod := c.StatefulSet("h").Spec.Template.Spec
	require.Len(t, pod.InitContainers, 1)
	restore := pod.InitContainers[0]
	args := argsOf(&restore)
	for _, want := range []string{"--snapshot=source-20261129-010000", "--source=https://source-etcd-backup.kcp.svc.cluster.local:2390",
		"--cert-file=/etc/etcd/tls/restore-client/tls.crt", "--key-file=/etc/etcd/tls/restore-client/tls.key",
		"--trusted-ca-file=/etc/etcd/tls/source-trust/tls.crt", "--initial-cluster-token=kcp.copy-shard-etcd"} {
		assert.Contains(t, args, want)
	}
	assert.NotContains(t, args, "/etc/etcd/tls/server/", "the members' serving certificate is of another CA than the source agent trusts")
	secrets := map[string]string{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secrets[*v.Name] = *v.Secret.SecretName
		}
	}
	assert.Equal(t, "copy-shard-etcd-restore-client", secrets["restore-client"])
	assert.Equal(t, "source-etcd-client-trust", secrets["source-trust"], "the source's etcd client CA alone, not the root the namespace's RootShards share")
	assert.Contains(t, c.MountedSecrets(), "source-etcd-client-trust")

	raw, err := json.Marshal(c.StatefulSet("h"))
	require.NoError(t, err)
	var sts appsv1.StatefulSet
	require.NoError(t, json.Unmarshal(raw, &sts))
	got := RestoringOf(&sts)
	require.NotNil(t, got)
	assert.Equal(t, Restoring{Snapshot: "source-20261129-010000", SourceURL: source.AgentURL(), ClientSecret: "copy-shard-etcd-restore-client",
		SourceTrust: "source-etcd-client-trust"}, *got,
		"the template's restore, without the certificate (which exists by then)")
	c.Restoring = got
	assert.Equal(t, c.StatefulSet("h").Spec.Template.Spec.InitContainers, pod.InitContainers, "rebuilt from it, the template is unchanged")
}
