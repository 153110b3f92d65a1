package kubeconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
)

// fakeKcp is a kcp for unit tests: hostcluster.Kcp whose configs name a workspace, and an RBAC
// client per workspace over a fake clientset. What is written to it, and deletions in the
// host cluster, go to one log, in order.
type fakeKcp struct {
	t          *testing.T
	workspaces map[string]*kubefake.Clientset
	// notReady makes RootShardProxy return a *kcpclient.NotReadyError.
	notReady bool
	// fail is what every request to kcp fails with, while set.
	fail error
	// asked are the RootShard and workspace of every config built through its internal
	// front proxy: "root root".
	asked []string
	log   []string
}

// withKcp gives the fixture's controller a fake kcp.
func withKcp(t *testing.T, f *fixture) *fakeKcp {
	k := &fakeKcp{t: t, workspaces: map[string]*kubefake.Clientset{}}
	f.Host.Kcp = k
	f.c.rbacFor = k.rbacFor
	f.Host.Kube.PrependReactor("delete-collection", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		k.log = append(k.log, "host delete-collection "+a.GetResource().Resource)
		return false, nil, nil
	})
	return k
}

func (k *fakeKcp) RootShardProxy(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	k.asked = append(k.asked, rs.Name+" "+workspace)
	if k.notReady {
		return nil, &kcpclient.NotReadyError{Reason: "Secret team-a/root-kcp-operator is not issued yet"}
	}
	return &rest.Config{Host: "https://" + rs.Name + "-proxy.team-a.svc.cluster.local:6443/clusters/" + workspace}, nil
}

func (k *fakeKcp) RootShard(*operatorv1alpha1.RootShard, string) (*rest.Config, error) {
	k.t.Fatal("a Kubeconfig's bindings are written through its RootShard's internal front proxy, which reaches every shard")
	return nil, nil
}

func (k *fakeKcp) Shard(*operatorv1alpha1.Shard, *operatorv1alpha1.RootShard, string) (*rest.Config, error) {
	k.t.Fatal("a Kubeconfig's bindings are written through its RootShard's internal front proxy")
	return nil, nil
}

func (k *fakeKcp) Etcd(kcpclient.Endpoint, string) (*rest.Config, error) {
	k.t.Fatal("a Kubeconfig's controller never asks etcd")
	return nil, nil
}

func (k *fakeKcp) rbacFor(cfg *rest.Config) (rbacv1client.RbacV1Interface, error) {
	_, ws, ok := strings.Cut(cfg.Host, "/clusters/")
	require.True(k.t, ok, "the config names a workspace: %s", cfg.Host)
	return k.workspace(ws).RbacV1(), nil
}

// workspace is the fake clientset of a workspace, made on first use.
func (k *fakeKcp) workspace(ws string) *kubefake.Clientset {
	if c, ok := k.workspaces[ws]; ok {
		return c
	}
	c := kubefake.NewClientset()
	c.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if k.fail != nil {
			return true, nil, k.fail
		}
		if isWrite(a) {
			k.log = append(k.log, "kcp "+ws+" "+a.GetVerb()+" "+actionName(a))
		}
		return false, nil, nil
	})
	k.workspaces[ws] = c
	return c
}

// writes are the writes to kcp so far: "root delete <name>".
func (k *fakeKcp) writes() []string {
	var out []string
	for _, l := range k.log {
		if rest, ok := strings.CutPrefix(l, "kcp "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// bindings are the ClusterRoleBindings in a workspace, by name.
func (k *fakeKcp) bindings(t *testing.T, ws string) map[string]rbacv1.ClusterRoleBinding {
	list, err := k.workspace(ws).RbacV1().ClusterRoleBindings().List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]rbacv1.ClusterRoleBinding{}
	for _, b := range list.Items {
		out[b.Name] = b
	}
	return out
}

func isWrite(a clienttesting.Action) bool {
	v := a.GetVerb()
	return v != "get" && v != "list" && v != "watch"
}

func actionName(a clienttesting.Action) string {
	switch a := a.(type) {
	case clienttesting.DeleteAction:
		return a.GetName()
	case clienttesting.PatchAction:
		return a.GetName()
	case clienttesting.CreateAction:
		if m, ok := a.GetObject().(metav1.Object); ok {
			return m.GetName()
		}
	}
	return ""
}

// authorizing is a Kubeconfig ci toward the FrontProxy edge that binds roles.
func authorizing(roles ...string) *operatorv1alpha1.Kubeconfig {
	kc := kubeconfigFor("ci", toFrontProxy("edge"))
	kc.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{
		ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{ClusterRoles: roles}}
	return kc
}

// provisioned is a fixture whose Kubeconfig ci binds roles in root through a fake kcp, with
// its certificate issued and its Secret written, converged.
func provisioned(t *testing.T, roles ...string) (*fixture, *fakeKcp, *operatorv1alpha1.Kubeconfig) {
	f := newFixture(t, authorizing(roles...), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
	k := withKcp(t, f)
	got := f.sync(t, "ci")
	f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
	for range 2 {
		got = f.sync(t, "ci")
	}
	require.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	return f, k, got
}

// update stores a changed Kubeconfig, as an update through the API would, a generation on.
func (f *fixture) update(t *testing.T, kc *operatorv1alpha1.Kubeconfig) {
	t.Helper()
	kc.Generation++
	require.NoError(t, f.Caches.Kubeconfigs.Update(kc))
	require.NoError(t, f.Ours.Tracker().Update(operatorv1alpha1.SchemeGroupVersion.WithResource("kubeconfigs"), kc, "team-a"))
}

// syncFailing syncs a Kubeconfig that must fail, and lets its cache catch up with what was
// written all the same.
func (f *fixture) syncFailing(t *testing.T, name string) (*operatorv1alpha1.Kubeconfig, error) {
	t.Helper()
	err := f.c.SyncKey(t.Context(), "team-a/"+name)
	require.Error(t, err)
	got, gerr := f.Ours.OperatorV1alpha1().Kubeconfigs("team-a").Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, gerr)
	require.NoError(t, f.Caches.Kubeconfigs.Update(got))
	return got, err
}

// events drains the Events recorded so far.
func (f *fixture) events() []string { return controllertest.Events(f.Events) }

func bindingName(role string) string {
	return kubeconfig.BindingName(authorizing(), role)
}
