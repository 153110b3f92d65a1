package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/test/framework"
)

// TestManifestRBACIsSufficientAndMinimal runs the server as the manifests' ServiceAccount,
// with their RBAC and the Deployment's arguments: it serves, realizes a RootShard and mints.
// Then it takes single rules away, and each one's absence breaks a named behaviour.
func TestManifestRBACIsSufficientAndMinimal(t *testing.T) {
	parallel(t, alone)
	port, args := asTheManifestsServiceAccount(t, "kcp-setups-sa", "manifest-rbac-server")
	serverRBACIsSufficientAndMinimal(t, "manifest-rbac", port, args, nil)
}

// serverRBACIsSufficientAndMinimal runs the server with args on port, as the ServiceAccount
// kcp-setups/kcp-setups with whatever RBAC an installation gave it (the manifests', the
// chart's): it serves, realizes a RootShard, mints and prunes. Then it takes single rules of
// the ClusterRole kcp-setups:apiserver and the Role kcp-setups:leader-election away, and each
// one's absence breaks a named behaviour. Its namespaces are named after prefix.
//
// With namespacedRole (a namespaced install), the server's rights on the setups' objects are
// a Role and RoleBinding that namespacedRole applies in a namespace: every namespace the test
// uses is made first, with them, and served (--watch-namespaces); the rules of that Role are
// taken away one by one in the namespace at work, as the ClusterRole's are.
func serverRBACIsSufficientAndMinimal(t *testing.T, prefix string, port int, args []string, namespacedRole func(t *testing.T, ns string)) {
	ctx := t.Context()
	// The server's namespace, where its ServiceAccount kcp-setups and its Lease are and after
	// which its roles and bindings are named: its --leader-elect-resource-namespace.
	var serverNS string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--leader-elect-resource-namespace="); ok {
			serverNS = v
		}
	}
	require.NotEmpty(t, serverNS, "the server's arguments name its namespace")
	workRole := serverNS + ":apiserver"
	user := "system:serviceaccount:" + serverNS + ":kcp-setups"
	// workRoleIn is the role with the rights on the setups' objects in namespace ns.
	workRoleIn := func(ns string) string {
		if namespacedRole != nil {
			return ns + "/" + workRole
		}
		return workRole
	}
	// The roles whose rules go one by one; the namespaced one is named with * for the
	// namespace at work.
	roles := []string{workRole, serverNS + "/" + serverNS + ":leader-election"}
	workNamespace := func(role string, i int) string { return fmt.Sprintf("%s-%d-%d", prefix, len(role), i) }
	useNamespace := namespace
	if namespacedRole != nil {
		first := namespace(t, prefix)
		namespacedRole(t, first)
		roles = append(roles, "*/"+workRole)
		served := []string{first, prefix + "-adopt", prefix + "-cm"}
		for _, role := range roles {
			for i := range rulesOf(t, strings.Replace(role, "*", first, 1)) {
				served = append(served, workNamespace(role, i))
			}
		}
		for _, name := range served[1:] {
			namespace(t, name)
			namespacedRole(t, name)
		}
		args = append(slices.Clone(args), "--watch-namespaces="+strings.Join(served, ","))
		useNamespace = func(t *testing.T, name string) string {
			require.Contains(t, served, name, "a namespace the server serves")
			return name
		}
	}
	// A storage prefix of its own: the stack's server, which keeps serving the tests that run
	// meanwhile, neither sees nor realizes this server's setups.
	args = append(slices.Clone(args), "--etcd-prefix=/kcp-setups-"+prefix)

	start := func(name string) (*framework.ServerProcess, clientset.Interface) {
		t.Helper()
		srv, err := stack.StartServerProcess(ctx, name, port, args)
		require.NoError(t, err)
		t.Cleanup(srv.Stop)
		return srv, clientset.NewForConfigOrDie(srv.Config())
	}
	srv, ops := start("kcp-setups-" + prefix)
	ns := useNamespace(t, prefix)
	_, err := ops.OperatorV1alpha1().RootShards(ns).Create(ctx, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	var last string
	if !assert.Eventually(t, func() bool {
		rs, err := ops.OperatorV1alpha1().RootShards(ns).Get(ctx, "root", metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false
		}
		last = fmt.Sprintf("%s %+v", rs.Status.Phase, rs.Status.Conditions)
		return rs.Status.Phase == operatorv1alpha1.PhaseRunning
	}, 3*time.Minute, time.Second, "the RootShard is realized and Running") {
		t.Fatalf("last: %s\nthe server's log:\n%s", last, tail(srv.Log()))
	}
	var minted *operatorv1alpha1.KubeconfigRequest
	require.Eventually(t, func() bool {
		minted, err = ops.OperatorV1alpha1().RootShards(ns).CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{}, metav1.CreateOptions{})
		return err == nil
	}, time.Minute, time.Second, "minting: %v", err)
	assert.NotEmpty(t, minted.Status.Kubeconfig)

	// Rotating the root CA: its intermediates are issued again under the new root, through
	// their Certificates' status, under these rules.
	rotateRoot := rotateTheRootCA(t, ops, ns)
	if !assert.Eventually(t, func() bool {
		return rotateRoot() == operatorv1alpha1.CARotationCompleted
	}, 4*time.Minute, time.Second, "the root CA rotates through Start and Complete") {
		t.Logf("the server's log:\n%s", tail(srv.Log()))
	}

	// Pruning: a VirtualWorkspace that comes to name its own kubeconfig loses the generated
	// identity, Certificate and key Secret, under these rules.
	prune := pruneAnIdentity(t, ops, ns)
	require.Eventually(t, func() bool {
		prune()
		return virtualWorkspaceSwitched(t, ops, ns)
	}, 3*time.Minute, time.Second, "the VirtualWorkspace is realized with its generated identity, then names its own kubeconfig")
	if !assert.Eventually(t, func() bool {
		_, err := stack.Kubectl(ctx, "get", "certificate", vwClientCertificate, "-n", ns)
		return err != nil
	}, 2*time.Minute, time.Second, "the generated identity %s is pruned", vwClientCertificate) {
		t.Logf("the server's log:\n%s", tail(srv.Log()))
	}
	// Taking over kcp-operator's objects: its Deployment is replaced, its leftovers go.
	adoptIn := useNamespace(t, prefix+"-adopt")
	adopt := adoptFromKcpOperator(t, ops, adoptIn)
	if !assert.Eventually(t, func() bool {
		adopt()
		out, _ := stack.Kubectl(ctx, "get", "configmap/root-leftover", "issuer/root-leftover", "-n", adoptIn, "--ignore-not-found", "-o", "name")
		managedBy, _ := stack.Kubectl(ctx, "get", "deployment/root-kcp", "-n", adoptIn, "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}")
		return strings.TrimSpace(out) == "" && strings.TrimSpace(managedBy) == "kcp-setups"
	}, 3*time.Minute, time.Second, "kcp-operator's Deployment is taken over and its leftovers removed") {
		t.Logf("the server's log:\n%s", tail(srv.Log()))
	}
	srv.Stop()

	// Without a rule, something named breaks: the server says what it may not do.
	forbidden := func(verb, resource, group string) string {
		return fmt.Sprintf(`User "%s" cannot %s resource "%s" in API group "%s"`, user, verb, resource, group)
	}
	for _, tc := range []struct {
		name     string
		role     string // a ClusterRole, or namespace/Role
		resource string // the rule that goes names it
		check    func(t *testing.T, srv *framework.ServerProcess, ops clientset.Interface)
	}{{
		name: "secrets", role: workRoleIn(ns), resource: "secrets",
		check: func(t *testing.T, srv *framework.ServerProcess, ops clientset.Interface) {
			waitForLog(t, srv, nil, forbidden("list", "secrets", ""))
			// Right after a start the client CA of the delegated authentication may still be
			// loading; then the answer is the mint's own.
			var err error
			assert.Eventually(t, func() bool {
				_, err = ops.OperatorV1alpha1().RootShards(ns).CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{}, metav1.CreateOptions{})
				return apierrors.IsServiceUnavailable(err)
			}, 30*time.Second, time.Second, "minting cannot read the CAs: %v", err)
		},
	}, {
		name: "cert-manager", role: workRoleIn(prefix + "-cm"), resource: "certificates",
		check: func(t *testing.T, srv *framework.ServerProcess, ops clientset.Interface) {
			other := useNamespace(t, prefix+"-cm")
			_, err := ops.OperatorV1alpha1().CacheServers(other).Create(ctx, &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}, metav1.CreateOptions{})
			require.NoError(t, err)
			waitForLog(t, srv, nil, forbidden("list", "certificates", "cert-manager.io"))
			cs, err := ops.OperatorV1alpha1().CacheServers(other).Get(ctx, "cache", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Empty(t, cs.Finalizers, "the controllers never start without their caches, so nothing is reconciled")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			restore := withoutRules(t, tc.role, func(_ int, r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, tc.resource) })
			defer restore()
			srv, ops := start("kcp-setups-" + prefix + "-without-" + tc.name)
			defer srv.Stop()
			tc.check(t, srv, ops)
		})
	}

	// And every rule is needed: without any one of them, the server, at work on a new setup,
	// says what it may not do. The Lease goes first, so that creating it is needed too.
	for _, role := range roles {
		for i, rule := range rulesOf(t, strings.Replace(role, "*", ns, 1)) {
			t.Run(fmt.Sprintf("%s/%d/%s", role, i, strings.Join(rule.Resources, ",")), func(t *testing.T) {
				work := useNamespace(t, workNamespace(role, i))
				restore := withoutRules(t, strings.Replace(role, "*", work, 1), func(j int, _ rbacv1.PolicyRule) bool { return j == i })
				defer restore()
				err := stack.Kube.CoordinationV1().Leases(serverNS).Delete(ctx, "kcp-setups-controllers", metav1.DeleteOptions{})
				require.True(t, err == nil || apierrors.IsNotFound(err), "%v", err)
				// Without some rules the server never becomes ready: it is not waited for.
				srv, err := stack.LaunchServerProcess(fmt.Sprintf("kcp-setups-%s-without-%d-%d", prefix, len(role), i), port, args)
				require.NoError(t, err)
				defer srv.Stop()
				ops := clientset.NewForConfigOrDie(srv.Config())
				var wants []string
				for _, verb := range rule.Verbs {
					for _, resource := range rule.Resources {
						wants = append(wants, fmt.Sprintf(`User "%s" cannot %s resource "%s"`, user, verb, resource))
					}
				}
				created := false
				exercise := func() {
					if !created {
						_, err := ops.OperatorV1alpha1().CacheServers(work).Create(ctx, &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}, metav1.CreateOptions{})
						created = err == nil
					}
				}
				if slices.Equal(rule.Verbs, []string{"delete"}) && slices.Equal(rule.Resources, []string{"certificates"}) {
					// Only pruning deletes one Certificate: an identity the spec stopped needing.
					exercise = pruneAnIdentity(t, ops, work)
				}
				if slices.Equal(rule.Verbs, []string{"delete"}) && (slices.Equal(rule.Resources, []string{"deployments"}) ||
					slices.Equal(rule.Resources, []string{"configmaps"}) || slices.Equal(rule.Resources, []string{"issuers"})) {
					// Only taking over kcp-operator's objects replaces a Deployment and removes
					// its leftover ConfigMaps and Issuers.
					exercise = adoptFromKcpOperator(t, ops, work)
				}
				if slices.Equal(rule.Resources, []string{"certificates/status"}) {
					// Only a rotation of the root CA has cert-manager issue the intermediates
					// again, with their keys, by marking them Issuing.
					// The RootShard is realized and Available, then its workloads roll onto
					// both roots, before the intermediates are issued again: it takes longer.
					rotate := rotateTheRootCA(t, ops, work)
					waitForLogWithin(t, srv, 4*time.Minute, func() { rotate() }, wants...)
					return
				}
				if slices.Contains(rule.Resources, "persistentvolumeclaims") {
					// Only the deletion of a managed etcd's owner that asks for its volumes to
					// go uses them: create one, and delete it once the controllers hold it; its
					// members' certificates come first, which takes longer too.
					waitForLogWithin(t, srv, 5*time.Minute, deleteWithItsEtcdVolumes(t, ops, work), wants...)
					return
				}
				waitForLog(t, srv, exercise, wants...)
			})
		}
	}
}

// adoptFromKcpOperator returns a step that, called again and again, makes what kcp-operator
// would have made for a RootShard root in namespace (its Deployment, and a ConfigMap and an
// Issuer that nothing takes over), then a RootShard root that adopts them: the controllers
// replace the Deployment and, once the RootShard is Available, remove the other two.
func adoptFromKcpOperator(t *testing.T, ops clientset.Interface, namespace string) func() {
	made, adopting := false, false
	labels := map[string]string{"app.kubernetes.io/managed-by": "kcp-operator", "app.kubernetes.io/name": "kcp",
		"app.kubernetes.io/instance": "root", "app.kubernetes.io/component": "rootshard"}
	return func() {
		ctx := t.Context()
		switch {
		case !made:
			_, err := stack.Kubectl(ctx, "apply", "-n", namespace, "-f", writeManifest(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: root-kcp, labels: %[1]s}
spec:
  selector: {matchLabels: %[1]s}
  template:
    metadata: {labels: %[1]s}
    spec: {containers: [{name: kcp, image: ghcr.io/kcp-dev/kcp:v0.28.0}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: root-leftover, labels: %[1]s}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: root-leftover, labels: %[1]s}
spec: {selfSigned: {}}
`, flowMap(labels))))
			made = err == nil
		case !adopting:
			_, err := ops.OperatorV1alpha1().RootShards(namespace).Create(ctx, &operatorv1alpha1.RootShard{
				ObjectMeta: metav1.ObjectMeta{Name: "root", Annotations: map[string]string{operatorv1alpha1.AnnotationAdopt: operatorv1alpha1.AdoptKcpOperator}},
				Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
					CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}}, metav1.CreateOptions{})
			adopting = err == nil || apierrors.IsAlreadyExists(err)
		}
	}
}

// rotateTheRootCA returns a step that, called again and again, creates a RootShard root in
// namespace unless it is there, asks its root CA's rotation to Start, then to Complete once
// Prepared. It returns the rotation's phase as last seen.
func rotateTheRootCA(t *testing.T, ops clientset.Interface, namespace string) func() operatorv1alpha1.CARotationPhase {
	made, started, completing := false, false, false
	rootShards := ops.OperatorV1alpha1().RootShards(namespace)
	ask := func(phase operatorv1alpha1.CARotationRequestPhase) bool {
		_, err := rootShards.Rotate(t.Context(), "root", &operatorv1alpha1.CARotation{
			Spec: operatorv1alpha1.CARotationSpec{Phase: phase, Authorities: []string{"root"}}}, metav1.CreateOptions{})
		return err == nil
	}
	return func() operatorv1alpha1.CARotationPhase {
		ctx := t.Context()
		if !made {
			_, err := rootShards.Create(ctx, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"},
				Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
					CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}}, metav1.CreateOptions{})
			made = err == nil || apierrors.IsAlreadyExists(err)
			return ""
		}
		if !started {
			started = ask(operatorv1alpha1.CARotationStart)
			return ""
		}
		rs, err := rootShards.Get(ctx, "root", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		var phase operatorv1alpha1.CARotationPhase
		for _, r := range rs.Status.Rotations {
			if r.Authority == "root" {
				phase = r.Phase
			}
		}
		if phase == operatorv1alpha1.CARotationPrepared && !completing {
			completing = ask(operatorv1alpha1.CARotationComplete)
		}
		return phase
	}
}

// flowMap is labels as a YAML flow mapping.
func flowMap(labels map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, k+": "+labels[k])
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// deleteWithItsEtcdVolumes returns a step that, called again and again, creates a RootShard
// with a managed etcd and operator.kcp.io/delete-etcd-volumes in namespace, then deletes it
// once the controllers put their finalizer on it.
func deleteWithItsEtcdVolumes(t *testing.T, ops clientset.Interface, namespace string) func() {
	created, deleted := false, false
	return func() {
		rootShards := ops.OperatorV1alpha1().RootShards(namespace)
		switch {
		case !created:
			_, err := rootShards.Create(t.Context(), &operatorv1alpha1.RootShard{
				ObjectMeta: metav1.ObjectMeta{Name: "root", Annotations: map[string]string{operatorv1alpha1.AnnotationDeleteEtcdVolumes: "true"}},
				Spec:       operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"}},
			}, metav1.CreateOptions{})
			created = err == nil
		case !deleted:
			rs, err := rootShards.Get(t.Context(), "root", metav1.GetOptions{})
			if err == nil && len(rs.Finalizers) > 0 {
				deleted = rootShards.Delete(t.Context(), "root", metav1.DeleteOptions{}) == nil
			}
		}
	}
}

// pruneAnIdentity returns a step that, called again and again, creates a RootShard and a
// VirtualWorkspace vw of it with the generated identity in namespace, then, once the
// VirtualWorkspace's Certificates are there, has it name a kubeconfig Secret of its own, so
// that the controllers prune the identity it no longer needs.
func pruneAnIdentity(t *testing.T, ops clientset.Interface, namespace string) func() {
	rootShardMade, vwMade, switched := false, false, false
	return func() {
		ctx := t.Context()
		switch {
		case !rootShardMade:
			_, err := ops.OperatorV1alpha1().RootShards(namespace).Create(ctx, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"},
				Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
					CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}}, metav1.CreateOptions{})
			rootShardMade = err == nil || apierrors.IsAlreadyExists(err)
		case !vwMade:
			_, err := ops.OperatorV1alpha1().VirtualWorkspaces(namespace).Create(ctx, &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Name: "vw"},
				Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}},
					External: operatorv1alpha1.ExternalConfig{Hostname: "vw.example.com"}}}, metav1.CreateOptions{})
			vwMade = err == nil || apierrors.IsAlreadyExists(err)
		case !switched:
			// The generated client identity is applied after the serving certificate.
			if _, err := stack.Kubectl(ctx, "get", "certificate", vwClientCertificate, "-n", namespace); err != nil {
				return
			}
			_, err := stack.Kube.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vw-own-kubeconfig"},
				StringData: map[string]string{"kubeconfig": "placeholder"}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return
			}
			vw, err := ops.OperatorV1alpha1().VirtualWorkspaces(namespace).Get(ctx, "vw", metav1.GetOptions{})
			if err != nil {
				return
			}
			vw.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "vw-own-kubeconfig"}
			_, err = ops.OperatorV1alpha1().VirtualWorkspaces(namespace).Update(ctx, vw, metav1.UpdateOptions{})
			switched = err == nil
		}
	}
}

// vwClientCertificate is the generated client identity of the VirtualWorkspace vw.
const vwClientCertificate = "vw-virtual-workspace-client"

// virtualWorkspaceSwitched says whether the VirtualWorkspace vw of namespace names its own
// kubeconfig.
func virtualWorkspaceSwitched(t *testing.T, ops clientset.Interface, namespace string) bool {
	vw, err := ops.OperatorV1alpha1().VirtualWorkspaces(namespace).Get(t.Context(), "vw", metav1.GetOptions{})
	return err == nil && vw.Spec.KubeconfigSecretRef != nil
}

// rulesOf are the rules of a ClusterRole, or of namespace/Role.
func rulesOf(t *testing.T, role string) []rbacv1.PolicyRule {
	t.Helper()
	if ns, name, namespaced := strings.Cut(role, "/"); namespaced {
		r, err := stack.Kube.RbacV1().Roles(ns).Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		return r.Rules
	}
	r, err := stack.Kube.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{})
	require.NoError(t, err)
	return r.Rules
}

// withoutRules removes the rules of role (a ClusterRole, or namespace/Role) that drop
// selects, and returns what puts them back.
func withoutRules(t *testing.T, role string, drop func(int, rbacv1.PolicyRule) bool) func() {
	t.Helper()
	rbac := stack.Kube.RbacV1()
	set := func(ctx context.Context, rules func([]rbacv1.PolicyRule) []rbacv1.PolicyRule) {
		if ns, name, namespaced := strings.Cut(role, "/"); namespaced {
			r, err := rbac.Roles(ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			r.Rules = rules(r.Rules)
			_, err = rbac.Roles(ns).Update(ctx, r, metav1.UpdateOptions{})
			require.NoError(t, err)
			return
		}
		r, err := rbac.ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		require.NoError(t, err)
		r.Rules = rules(r.Rules)
		_, err = rbac.ClusterRoles().Update(ctx, r, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	before := rulesOf(t, role)
	set(t.Context(), func(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
		var kept []rbacv1.PolicyRule
		for i, r := range rules {
			if !drop(i, r) {
				kept = append(kept, r)
			}
		}
		require.Less(t, len(kept), len(rules), "no rule of %s is dropped", role)
		return kept
	})
	return func() { set(context.Background(), func([]rbacv1.PolicyRule) []rbacv1.PolicyRule { return before }) }
}

// waitForLog waits until the server's log says one of whats, calling meanwhile (when not
// nil) before each look; the quotes klog escapes in an error are read as quotes. The bound is
// generous: an exercise that takes several steps (a takeover, an etcd's deletion) takes more
// than a minute on a loaded machine, and the wait ends as soon as the log says it.
func waitForLog(t *testing.T, srv *framework.ServerProcess, meanwhile func(), whats ...string) {
	t.Helper()
	waitForLogWithin(t, srv, 3*time.Minute, meanwhile, whats...)
}

// waitForLogWithin is waitForLog for a meanwhile that needs up to within to get there.
func waitForLogWithin(t *testing.T, srv *framework.ServerProcess, within time.Duration, meanwhile func(), whats ...string) {
	t.Helper()
	says := func() bool {
		if meanwhile != nil {
			meanwhile()
		}
		log := strings.ReplaceAll(srv.Log(), `\"`, `"`)
		return slices.ContainsFunc(whats, func(what string) bool { return strings.Contains(log, what) })
	}
	if !assert.Eventually(t, says, within, time.Second) {
		t.Fatalf("the server's log never says one of %q:\n%s", whats, tail(srv.Log()))
	}
}

func tail(log string) string {
	lines := strings.Split(log, "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
