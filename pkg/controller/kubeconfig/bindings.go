package kubeconfig

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
)

// RBACFor builds the RBAC client of one kcp workspace from the config hostcluster.Kcp returns
// for it. It is a seam for unit tests, which have no kcp.
type RBACFor func(cfg *rest.Config) (rbacv1client.RbacV1Interface, error)

// newRBAC is the RBACFor of a real kcp.
func newRBAC(cfg *rest.Config) (rbacv1client.RbacV1Interface, error) {
	return rbacv1client.NewForConfig(cfg)
}

// workspaceBindings are a Kubeconfig's ClusterRoleBindings in one kcp workspace.
type workspaceBindings struct {
	kc        *operatorv1alpha1.Kubeconfig
	workspace string
	crbs      rbacv1client.ClusterRoleBindingInterface
}

// bindingsIn returns the ClusterRoleBindings of kc in workspace of rs's kcp, as the server's
// own identity, through rs's internal front proxy: the workspace may be on any shard of rs.
// A *kcpclient.NotReadyError says that identity is not issued yet.
func (c *Controller) bindingsIn(kc *operatorv1alpha1.Kubeconfig, rs *operatorv1alpha1.RootShard, workspace string) (workspaceBindings, error) {
	if c.Host.Kcp == nil {
		return workspaceBindings{}, errNoKcpClients
	}
	cfg, err := c.Host.Kcp.RootShardProxy(rs, workspace)
	if err != nil {
		return workspaceBindings{}, err
	}
	rbacFor := c.rbacFor
	if rbacFor == nil {
		rbacFor = newRBAC
	}
	client, err := rbacFor(cfg)
	if err != nil {
		return workspaceBindings{}, fmt.Errorf("building a client for workspace %s: %w", workspace, err)
	}
	return workspaceBindings{kc: kc, workspace: workspace, crbs: client.ClusterRoleBindings()}, nil
}

// errNoKcpClients says the server was started without clients for kcp.
var errNoKcpClients = fmt.Errorf("this server has no client for kcp")

// ensure makes the workspace hold exactly the bindings Bindings builds for the Kubeconfig:
// each is read first and written only when it differs, and those of roles the spec no longer
// names are deleted. It returns how many bindings it wrote and deleted.
func (w workspaceBindings) ensure(ctx context.Context) (written, deleted int, err error) {
	want := kubeconfig.Bindings(w.kc)
	names := make([]string, 0, len(want))
	for _, b := range want {
		names = append(names, *b.Name)
		wrote, err := w.apply(ctx, b)
		if err != nil {
			return written, deleted, err
		}
		written += wrote
	}
	deleted, err = w.prune(ctx, names)
	return written, deleted, err
}

// apply writes one binding unless it is already as wanted. A roleRef cannot change in
// place, so a binding of that name toward another role (someone edited it) is replaced.
func (w workspaceBindings) apply(ctx context.Context, b *rbacv1ac.ClusterRoleBindingApplyConfiguration) (int, error) {
	existing, err := w.crbs.Get(ctx, *b.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return 0, fmt.Errorf("reading the ClusterRoleBinding %s in workspace %s: %w", *b.Name, w.workspace, err)
	case upToDate(existing, b):
		return 0, nil
	case existing.RoleRef.Name != *b.RoleRef.Name || existing.RoleRef.Kind != *b.RoleRef.Kind:
		if err := w.crbs.Delete(ctx, existing.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("replacing the ClusterRoleBinding %s in workspace %s: %w", *b.Name, w.workspace, err)
		}
	}
	if _, err := w.crbs.Apply(ctx, b, hostcluster.ApplyOptions); err != nil {
		return 0, fmt.Errorf("applying the ClusterRoleBinding %s in workspace %s: %w", *b.Name, w.workspace, err)
	}
	return 1, nil
}

// prune deletes the Kubeconfig's bindings whose names are not in keep, and returns how many.
func (w workspaceBindings) prune(ctx context.Context, keep []string) (int, error) {
	list, err := w.crbs.List(ctx, metav1.ListOptions{LabelSelector: kubeconfig.BindingSelector(w.kc)})
	if err != nil {
		return 0, fmt.Errorf("listing the ClusterRoleBindings in workspace %s: %w", w.workspace, err)
	}
	deleted := 0
	for _, crb := range list.Items {
		if slices.Contains(keep, crb.Name) {
			continue
		}
		err := w.crbs.Delete(ctx, crb.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting the ClusterRoleBinding %s in workspace %s: %w", crb.Name, w.workspace, err)
		}
		deleted++
	}
	return deleted, nil
}

// removeAll deletes every binding of the Kubeconfig in the workspace, and returns how many.
func (w workspaceBindings) removeAll(ctx context.Context) (int, error) {
	return w.prune(ctx, nil)
}

// upToDate reports whether an existing binding has what b sets: its labels and annotations
// (others may add theirs), its roleRef and exactly its subjects.
func upToDate(existing *rbacv1.ClusterRoleBinding, b *rbacv1ac.ClusterRoleBindingApplyConfiguration) bool {
	for k, v := range b.Labels {
		if existing.Labels[k] != v {
			return false
		}
	}
	for k, v := range b.Annotations {
		if existing.Annotations[k] != v {
			return false
		}
	}
	want := rbacv1.RoleRef{APIGroup: *b.RoleRef.APIGroup, Kind: *b.RoleRef.Kind, Name: *b.RoleRef.Name}
	if existing.RoleRef != want {
		return false
	}
	subjects := make([]rbacv1.Subject, 0, len(b.Subjects))
	for _, s := range b.Subjects {
		subjects = append(subjects, rbacv1.Subject{APIGroup: deref(s.APIGroup), Kind: deref(s.Kind), Name: deref(s.Name), Namespace: deref(s.Namespace)})
	}
	return apiequality.Semantic.DeepEqual(existing.Subjects, subjects) || (len(existing.Subjects) == 0 && len(subjects) == 0)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
