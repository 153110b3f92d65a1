//go:build e2e

package localstack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// fakeForwards are the ClusterPortForwards applied to a fake dynamic client (whose tracker
// does not create by apply), by name.
type fakeForwards struct {
	mu     sync.Mutex
	byName map[string]*unstructured.Unstructured
}

func (f *fakeForwards) client() *dynamicfake.FakeDynamicClient {
	f.byName = map[string]*unstructured.Unstructured{}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{ClusterPortForwardResource: "ClusterPortForwardList"})
	c.PrependReactor("patch", "clusterportforwards", func(action k8stesting.Action) (bool, runtime.Object, error) {
		patch := action.(k8stesting.PatchAction)
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(patch.GetPatch(), &obj.Object); err != nil {
			return true, nil, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.byName[patch.GetName()] = obj
		return true, obj, nil
	})
	c.PrependReactor("delete", "clusterportforwards", func(action k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.byName, action.(k8stesting.DeleteAction).GetName())
		return true, nil, nil
	})
	return c
}

// target is the loopback port the forward name leads port to, 0 when there is none.
func (f *fakeForwards) target(name string, port int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	obj := f.byName[name]
	if obj == nil {
		return 0
	}
	forwards, _, _ := unstructured.NestedSlice(obj.Object, "spec", "forwards")
	for _, fw := range forwards {
		m := fw.(map[string]any)
		ports, _, _ := unstructured.NestedSlice(m, "ports")
		if len(ports) == 1 && fmt.Sprint(ports[0]) == fmt.Sprint(port) {
			p, _, _ := unstructured.NestedFieldNoCopy(m, "target", "port")
			var out int64
			_, _ = fmt.Sscan(fmt.Sprint(p), &out)
			return out
		}
	}
	return 0
}

// TestRunnerRunsTheBackupAgent runs the stack's runner against a cluster of the test's (a
// fake clientset: no kube-apiserver, no server) holding what the server realizes for a
// RootShard with a backup to a volume, as the builders make it: the runner runs its member,
// then its backup agent against it, and leads the agent's pod's port to it; a snapshot taken
// through it lands in its claim's directory. An agent that ends is started again; a new pod
// template replaces it. Its
// etcd's StatefulSet created again with the restore init container (a lost volume), the
// runner starts the member with the running agent, which restores the snapshot, and
// replaces the agent against the restored member; the Deployment gone, the agent and its
// forward go.
func TestRunnerRunsTheBackupAgent(t *testing.T) {
	s := processStack(t)
	kube := kubefake.NewClientset()
	var forwards fakeForwards
	s.Kube, s.Dynamic = kube, forwards.client()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	require.NoError(t, s.startEtcdRunner(ctx)) // the stack's Stop stops it
	runnerLog := func() string {
		data, err := os.ReadFile(s.Path("logs", "etcd-members.log"))
		require.NoError(t, err)
		return string(data)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the runner's log:\n%s", runnerLog())
		}
	})

	const ns = "kcp"
	cas := newEtcdCAs(t)
	root := backupCluster(ns, "rootshard", "root", "root", 1)
	secrets := cas.secrets(t, root)
	for _, secret := range secrets {
		_, err := kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	dep := typed[appsv1.Deployment](t, root.AgentDeployment("registry.example.com/kcp-setups-apiserver:v1", "hash"))
	dep.UID = "agent-1"
	_, err := kube.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	sts := typed[appsv1.StatefulSet](t, root.StatefulSet("hash"))
	sts.UID = "etcd-1"
	_, err = kube.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{})
	require.NoError(t, err)
	// The Deployment's pod, as kube-controller-manager and kwok would make it.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: root.AgentName() + "-5d8f7-abcde", Namespace: ns, Labels: root.AgentSelectorLabels()}}
	_, err = kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)

	// running is the runner's agent once its pod leads to it, and its members.
	running := func(members string) (*EtcdAgent, *EtcdMembers) {
		t.Helper()
		var a *EtcdAgent
		var m *EtcdMembers
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			r := s.etcdRunner
			r.mu.Lock()
			cur, mem := r.agents[ns+"/"+root.AgentName()], r.running[ns+"/"+root.Name()]
			r.mu.Unlock()
			if !assert.NotNil(c, mem, "the members run") || !assert.NotNil(c, cur, "the agent runs") {
				return
			}
			assert.NotEqual(c, members, cur.members, "against other members than before")
			assert.Equal(c, int64(cur.agent.Ports[etcd.AgentPort]), forwards.target("etcd-agent-"+ns+"-"+pod.Name, etcd.AgentPort),
				"the agent's pod leads to it")
			a, m = cur.agent, mem.members
		}, 3*time.Minute, 200*time.Millisecond)
		return a, m
	}
	backupAgent, members := running("")
	assert.Equal(t, filepath.Join(s.Dir, "claims", ns, root.SnapshotClaimName()), backupAgent.Claims[root.SnapshotClaimName()])

	kcp := tlsOf(t, secrets[root.ClientSecret()], cas.Client.CertPEM)
	kv := etcdClient(t, members, kcp)
	_, err = kv.Put(ctx, "/registry/before", "in the snapshot")
	require.NoError(t, err)
	client := agent.Client{URL: backupAgent.URL, HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: kcp}}}
	snapshot, err := client.Take(ctx, "")
	require.NoError(t, err, "the agent's log:\n%s", backupAgent.Log())
	stored, err := os.Stat(filepath.Join(backupAgent.Claims[root.SnapshotClaimName()], snapshot.Name))
	require.NoError(t, err, "the volume store is the claim's directory")
	assert.Equal(t, snapshot.Size, stored.Size())
	_, err = kv.Put(ctx, "/registry/after", "not in the snapshot")
	require.NoError(t, err)
	_ = kv.Close()

	// An agent that ends is started again, on its port.
	backupAgent.proc.Kill()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, runnerLog(), ns+"/"+root.AgentName()+": its backup agent runs again\n")
	}, time.Minute, 200*time.Millisecond)
	_, err = client.List(ctx)
	require.NoError(t, err, "the agent answers again")

	// A new pod template (a renewed certificate's Secrets' hash) replaces the agent.
	dep.Spec.Template.Annotations["operator.kcp.io/secrets-hash"] = "renewed"
	_, err = kube.AppsV1().Deployments(ns).Update(ctx, dep, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		r := s.etcdRunner
		r.mu.Lock()
		defer r.mu.Unlock()
		if cur := r.agents[ns+"/"+root.AgentName()]; assert.NotNil(c, cur) {
			assert.NotSame(c, backupAgent, cur.agent, "replaced")
			assert.NotEmpty(c, cur.pods, "forwarded")
			backupAgent = cur.agent
		}
	}, time.Minute, 200*time.Millisecond)
	client.URL = backupAgent.URL
	_, err = client.List(ctx)
	require.NoError(t, err, "the new agent answers")

	// The member's volume is lost: the server creates the StatefulSet again, restoring the
	// snapshot from the agent.
	require.NoError(t, kube.AppsV1().StatefulSets(ns).Delete(ctx, root.Name(), metav1.DeleteOptions{}))
	restoring := backupCluster(ns, "rootshard", "root", "root", 1)
	restoring.Restoring = root.OwnRestore(snapshot.Name)
	sts = typed[appsv1.StatefulSet](t, restoring.StatefulSet("hash"))
	sts.UID = types.UID("etcd-2")
	_, err = kube.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{})
	require.NoError(t, err)
	replaced, restored := running(strings.Join(members.ClientURLs(), ","))
	assert.NotSame(t, backupAgent, replaced)
	assert.Contains(t, runnerLog(), ns+"/"+root.Name()+": starting its members, which restore snapshot "+snapshot.Name+" first")
	kv = etcdClient(t, restored, kcp)
	before, err := kv.Get(ctx, "/registry/before")
	require.NoError(t, err)
	require.Len(t, before.Kvs, 1, "restored from the snapshot")
	after, err := kv.Get(ctx, "/registry/after", clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.Zero(t, after.Count, "a key written after the snapshot is not in it")
	listed, err := (&agent.Client{URL: replaced.URL, HTTP: client.HTTP}).List(ctx)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, snapshot.Name, listed[0].Name, "the replaced agent serves the same store")

	// The Deployment goes: so do the agent and its forward.
	logged := runnerLog()
	require.NoError(t, kube.AppsV1().Deployments(ns).Delete(ctx, root.AgentName(), metav1.DeleteOptions{}))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, strings.TrimPrefix(runnerLog(), logged), ns+"/"+root.AgentName()+": stopped its backup agent\n")
		assert.Zero(c, forwards.target("etcd-agent-"+ns+"-"+pod.Name, etcd.AgentPort), "the forward is gone")
	}, time.Minute, 200*time.Millisecond)
	done, _ := replaced.proc.Exited()
	assert.True(t, done, "the agent's process ended")
}
