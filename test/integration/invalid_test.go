package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// assertInvalid checks that err is a 422 whose causes name every given field path.
func assertInvalid(t *testing.T, err error, paths ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, apierrors.IsInvalid(err), "expected 422 Invalid, got %v", err)
	status, ok := err.(apierrors.APIStatus)
	require.True(t, ok)
	var got []string
	for _, c := range status.Status().Details.Causes {
		got = append(got, c.Field)
	}
	for _, p := range paths {
		assert.Contains(t, got, p, "causes: %v", status.Status().Details.Causes)
	}
}

// TestInvalidObjectsAreRejected sends invalid objects of every kind: each is a 422 naming
// the faulty fields, and nothing is stored.
func TestInvalidObjectsAreRejected(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	type create func(ctx context.Context, c clientset.Interface) (string, error)
	rootShard := func(mutate func(*operatorv1alpha1.RootShard)) create {
		return func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newRootShard("bad")
			mutate(o)
			_, err := c.OperatorV1alpha1().RootShards(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}
	}
	virtualWorkspace := func(mutate func(*operatorv1alpha1.VirtualWorkspace)) create {
		return func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newVirtualWorkspace("bad", "root")
			mutate(o)
			_, err := c.OperatorV1alpha1().VirtualWorkspaces(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}
	}
	kubeconfig := func(mutate func(*operatorv1alpha1.Kubeconfig)) create {
		return func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newKubeconfig("bad", "edge")
			mutate(o)
			_, err := c.OperatorV1alpha1().Kubeconfigs(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}
	}

	for _, tc := range []struct {
		name   string
		create create
		paths  []string
	}{
		{"port out of range", rootShard(func(o *operatorv1alpha1.RootShard) { o.Spec.External.Port = 70000 }),
			[]string{"spec.external.port"}},
		{"name not a DNS label", rootShard(func(o *operatorv1alpha1.RootShard) { o.Name = "Bad_Name" }),
			[]string{"metadata.name"}},
		{"hostname not DNS", rootShard(func(o *operatorv1alpha1.RootShard) { o.Spec.External.Hostname = "not a host" }),
			[]string{"spec.external.hostname"}},
		{"several faults at once", rootShard(func(o *operatorv1alpha1.RootShard) {
			o.Spec.Etcd.Endpoints = []string{"etcd"}
			o.Spec.ShardBaseURL = "http://insecure.example.com"
			o.Spec.Replicas = ptr.To[int32](-1)
		}), []string{"spec.etcd.endpoints[0]", "spec.shardBaseURL", "spec.replicas"}},
		{"etcd endpoints and managed", rootShard(func(o *operatorv1alpha1.RootShard) { o.Spec.Etcd.Managed = &operatorv1alpha1.ManagedEtcd{} }),
			[]string{"spec.etcd.managed"}},
		{"managed etcd of two members", rootShard(func(o *operatorv1alpha1.RootShard) {
			o.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{Replicas: ptr.To[int32](2)}}
		}), []string{"spec.etcd.managed.replicas"}},
		{"both certificate sources", rootShard(func(o *operatorv1alpha1.RootShard) {
			o.Spec.Certificates = &operatorv1alpha1.Certificates{
				IssuerRef:   &operatorv1alpha1.ObjectReference{Name: "ca"},
				CASecretRef: &corev1.LocalObjectReference{Name: "ca"},
			}
		}), []string{"spec.certificates.caSecretRef"}},
		{"unknown certificate template role, ignored but still checked", rootShard(func(o *operatorv1alpha1.RootShard) {
			o.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{"nonsense": {
				Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}}}}
		}), []string{"spec.certificateTemplates[nonsense].spec.dnsNames[0]"}},
		{"shard without root shard", func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newShard("bad", "")
			o.Spec.RootShard.Reference = nil
			_, err := c.OperatorV1alpha1().Shards(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}, []string{"spec.rootShard"}},
		{"shard with a root shard and a join Secret", func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newShard("bad", "root")
			o.Spec.RootShard.SecretRef = &corev1.LocalObjectReference{Name: "root-shard-join"}
			_, err := c.OperatorV1alpha1().Shards(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}, []string{"spec.rootShard.secretRef"}},
		{"front proxy backend not https", func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newFrontProxy("bad", "root")
			o.Spec.AdditionalPathMappings = []operatorv1alpha1.PathMappingEntry{{Path: "/services/x", Backend: "http://x"}}
			_, err := c.OperatorV1alpha1().FrontProxies(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}, []string{"spec.additionalPathMappings[0].backend"}},
		{"cache server replicas without etcd", func(ctx context.Context, c clientset.Interface) (string, error) {
			o := newCacheServer("bad")
			o.Spec.Replicas = ptr.To[int32](3)
			_, err := c.OperatorV1alpha1().CacheServers(namespace).Create(ctx, o, metav1.CreateOptions{})
			return o.Name, err
		}, []string{"spec.replicas"}},
		{"kubeconfig without target", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) { o.Spec.Target = operatorv1alpha1.KubeconfigTarget{} }),
			[]string{"spec.target"}},
		{"kubeconfig with two targets", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) {
			o.Spec.Target.ShardRef = &corev1.LocalObjectReference{Name: "s"}
		}), []string{"spec.target.frontProxyRef"}},
		{"kubeconfig validity too short", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) {
			o.Spec.Validity = metav1.Duration{Duration: 5 * time.Minute}
		}), []string{"spec.validity"}},
		{"kubeconfig workspace path", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) { o.Spec.TargetWorkspace = "root:Team_A" }),
			[]string{"spec.targetWorkspace"}},
		{"kubeconfig authorization without roles", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) {
			o.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{}
		}), []string{"spec.authorization.clusterRoleBindings.clusterRoles"}},
		{"kubeconfig authorization role faults", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) {
			o.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{
				ClusterRoles: []string{"a/b", "view", "view"},
			}}
		}), []string{"spec.authorization.clusterRoleBindings.clusterRoles[0]", "spec.authorization.clusterRoleBindings.clusterRoles[2]"}},
		{"kubeconfig deprecated cluster beside targetWorkspace", kubeconfig(func(o *operatorv1alpha1.Kubeconfig) {
			o.Spec.TargetWorkspace = "root:team-a"
			o.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{
				Cluster: "root:team-b", ClusterRoles: []string{"view"},
			}}
		}), []string{"spec.authorization.clusterRoleBindings.cluster"}},
		{"kcpVirtualWorkspace no VirtualWorkspace's name", rootShard(func(o *operatorv1alpha1.RootShard) {
			o.Spec.KcpVirtualWorkspace = &corev1.LocalObjectReference{Name: strings.Repeat("v", 46)}
		}), []string{"spec.kcpVirtualWorkspace.name"}},
		{"virtual-workspaces template on a root shard, ignored but still checked", rootShard(func(o *operatorv1alpha1.RootShard) {
			o.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{"virtual-workspaces": {
				Spec: &operatorv1alpha1.CertificateSpecTemplate{IPAddresses: []string{"not-an-ip"}}}}
		}), []string{"spec.certificateTemplates[virtual-workspaces].spec.ipAddresses[0]"}},
		{"virtual workspace without target", virtualWorkspace(func(o *operatorv1alpha1.VirtualWorkspace) {
			o.Spec.Target = operatorv1alpha1.VirtualWorkspaceTarget{}
		}), []string{"spec.target"}},
		{"virtual workspace with two targets", virtualWorkspace(func(o *operatorv1alpha1.VirtualWorkspace) {
			o.Spec.Target.ShardRef = &corev1.LocalObjectReference{Name: "shard-1"}
		}), []string{"spec.target.shardRef"}},
		{"virtual workspace name too long for its Service", virtualWorkspace(func(o *operatorv1alpha1.VirtualWorkspace) {
			o.Name = strings.Repeat("v", 46)
		}), []string{"metadata.name"}},
		{"virtual workspace without hostname", virtualWorkspace(func(o *operatorv1alpha1.VirtualWorkspace) { o.Spec.External.Hostname = "" }),
			[]string{"spec.external.hostname"}},
		{"virtual workspace init container faults", virtualWorkspace(func(o *operatorv1alpha1.VirtualWorkspace) {
			o.Spec.InitContainers = []operatorv1alpha1.VirtualWorkspaceInitContainer{
				{Name: "virtual-workspaces", Command: []string{""}},
				{Name: "init", VolumeMounts: []corev1.VolumeMount{{Name: "nowhere", MountPath: "/etc/kcp-virtual-workspaces/tls"}}},
			}
		}), []string{"spec.initContainers[0].name", "spec.initContainers[0].command[0]", "spec.initContainers[1].volumeMounts[0].mountPath"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, err := tc.create(t.Context(), s.client)
			assertInvalid(t, err, tc.paths...)
			assert.NotContains(t, storedNames(t, s.client), name, "nothing may be stored")
		})
	}
}

// storedNames lists the names of every stored object of every kind in the test namespace.
func storedNames(t *testing.T, c clientset.Interface) []string {
	t.Helper()
	return storedNamesIn(t, c, namespace)
}

// storedNamesIn lists the names of every stored object of every kind in ns.
func storedNamesIn(t *testing.T, c clientset.Interface, ns string) []string {
	t.Helper()
	ctx, ops := t.Context(), c.OperatorV1alpha1()
	var out []string
	rs, err := ops.RootShards(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, rs)...)
	sh, err := ops.Shards(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, sh)...)
	fp, err := ops.FrontProxies(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, fp)...)
	cs, err := ops.CacheServers(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, cs)...)
	kc, err := ops.Kubeconfigs(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, kc)...)
	vw, err := ops.VirtualWorkspaces(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, vw)...)
	ln, err := ops.Links(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out = append(out, names(t, ln)...)
	return out
}
