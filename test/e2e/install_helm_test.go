package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

const (
	chartDir            = "../../charts/kcp-setups"
	monitoringDir       = "../../artifacts/monitoring"
	namespacedDeployDir = "../../artifacts/deploy-namespaced"
	linkDeployDir       = "../../artifacts/deploy-link"
)

// helm runs the stack's helm as the admin and fails the test on error.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := stack.Helm(t.Context(), args...)
	require.NoError(t, err, "helm %s: %s", strings.Join(args, " "), out)
	return out
}

// objectsOf parses a multi-document YAML stream into its objects, keyed by
// apiVersion/kind/namespace/name.
func objectsOf(t *testing.T, stream string) map[string]map[string]any {
	t.Helper()
	objects := map[string]map[string]any{}
	decoder := yaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	for {
		var obj map[string]any
		err := decoder.Decode(&obj)
		if err == io.EOF {
			return objects
		}
		require.NoError(t, err)
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		key := fmt.Sprintf("%s/%s/%v/%v", obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])
		require.NotContains(t, objects, key, "one object twice")
		objects[key] = obj
	}
}

// TestChartTemplateEqualsKustomize renders the chart with its default values and compares
// it, object by object and field by field, with what `kubectl apply -k artifacts/deploy`
// installs; with monitoring on, it adds exactly artifacts/monitoring's objects. The chart is
// lint clean, and its schema refuses what it must.
func TestChartTemplateEqualsKustomize(t *testing.T) {
	parallel(t, alone)
	out := helm(t, "lint", "--strict", chartDir)
	assert.Contains(t, out, "0 chart(s) failed")

	chart := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups"))
	kustomize := objectsOf(t, kubectl(t, "kustomize", deployDir))
	// The release's namespace is Helm's (`helm install -n kcp-setups --create-namespace`): a
	// chart that made it would fail to install into it.
	require.Contains(t, kustomize, "v1/Namespace/<nil>/kcp-setups")
	delete(kustomize, "v1/Namespace/<nil>/kcp-setups")
	for key, want := range kustomize {
		assert.Equal(t, want, chart[key], "%s", key)
	}
	for key := range chart {
		assert.Contains(t, kustomize, key, "the chart renders %s, which the kustomize install does not", key)
	}

	monitored := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups",
		"--set", "monitoring.serviceMonitor.enabled=true", "--set", "monitoring.prometheusRule.enabled=true"))
	monitoring := objectsOf(t, kubectl(t, "kustomize", monitoringDir))
	require.Len(t, monitoring, 3, "a ServiceMonitor, its metrics-reader ClusterRole and a PrometheusRule")
	for key, want := range monitoring {
		assert.Equal(t, want, monitored[key], "%s", key)
	}
	assert.Len(t, monitored, len(chart)+len(monitoring))

	// External etcd: no etcd of the chart's, the server on the given endpoints and Secret.
	external := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups",
		"--set", "etcd.bundled.enabled=false", "--set", "etcd.external.endpoints={https://etcd-a:2379,https://etcd-b:2379}",
		"--set", "etcd.external.clientSecret=my-etcd-client"))
	for key := range external {
		assert.NotContains(t, key, "/etcd", "no bundled etcd object")
	}
	deployment := external["apps/v1/Deployment/kcp-setups/kcp-setups"]
	rendered, err := sigsyaml.Marshal(deployment)
	require.NoError(t, err)
	assert.Contains(t, string(rendered), "--etcd-servers=https://etcd-a:2379,https://etcd-b:2379")
	assert.Contains(t, string(rendered), "secretName: my-etcd-client")

	// Without the self-service roles, or without their aggregation into the built-in ones.
	withoutRoles := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups", "--set", "selfServiceRoles.enabled=false"))
	assert.Len(t, withoutRoles, len(chart)-7)
	for _, role := range []string{"kcp-setups-view", "kcp-setups-edit", "kcp-setups-kubeconfig", "kcp-setups-rotation", "kcp-setups-backup", "kcp-setups-trust", "kcp-setups-link"} {
		assert.NotContains(t, withoutRoles, "rbac.authorization.k8s.io/v1/ClusterRole/<nil>/"+role)
	}
	unaggregated, err := stack.Helm(t.Context(), "template", "kcp-setups", chartDir, "--namespace", "kcp-setups", "--set", "selfServiceRoles.aggregate=false")
	require.NoError(t, err, unaggregated)
	assert.NotContains(t, unaggregated, "aggregate-to-")
	assert.Contains(t, unaggregated, "name: kcp-setups-edit")

	// One replica without leader election: no Lease, and no rules for one.
	single := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups", "--set", "replicas=1", "--set", "leaderElection.enabled=false"))
	assert.NotContains(t, single, "rbac.authorization.k8s.io/v1/Role/kcp-setups/kcp-setups:leader-election")
	rendered, err = sigsyaml.Marshal(single["apps/v1/Deployment/kcp-setups/kcp-setups"])
	require.NoError(t, err)
	assert.Contains(t, string(rendered), "--leader-elect=false")
	assert.NotContains(t, string(rendered), "--leader-elect-resource-name")

	// A namespaced install: what `kubectl apply -k artifacts/deploy-namespaced` installs,
	// object by object; with two namespaces, a Role and its binding in each, and the
	// ClusterRole without any rule on a namespaced resource.
	namespaced := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups", "--set", "watchNamespaces={kcp}"))
	namespacedKustomize := objectsOf(t, kubectl(t, "kustomize", namespacedDeployDir))
	delete(namespacedKustomize, "v1/Namespace/<nil>/kcp-setups")
	for key, want := range namespacedKustomize {
		assert.Equal(t, want, namespaced[key], "%s", key)
	}
	for key := range namespaced {
		assert.Contains(t, namespacedKustomize, key, "the namespaced chart renders %s, which the namespaced kustomize install does not", key)
	}
	two := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups", "--set", "watchNamespaces={team-a,team-b}"))
	assert.Len(t, two, len(chart)+4, "a Role and a RoleBinding in each namespace")
	for _, ns := range []string{"team-a", "team-b"} {
		role := two["rbac.authorization.k8s.io/v1/Role/"+ns+"/kcp-setups:apiserver"]
		require.NotNil(t, role, ns)
		assert.Equal(t, chart["rbac.authorization.k8s.io/v1/ClusterRole/<nil>/kcp-setups:apiserver"]["rules"].([]any)[3:], role["rules"],
			"the Role has the ClusterRole's rules on namespaced resources")
		assert.NotNil(t, two["rbac.authorization.k8s.io/v1/RoleBinding/"+ns+"/kcp-setups:apiserver"], ns)
	}
	rendered, err = sigsyaml.Marshal(two["rbac.authorization.k8s.io/v1/ClusterRole/<nil>/kcp-setups:apiserver"])
	require.NoError(t, err)
	for _, resource := range []string{"secrets", "persistentvolumeclaims", "deployments", "statefulsets", "certificates", "configmaps", "services", "events"} {
		assert.NotContains(t, string(rendered), "- "+resource+"\n", "the ClusterRole names no namespaced resource")
	}
	rendered, err = sigsyaml.Marshal(two["apps/v1/Deployment/kcp-setups/kcp-setups"])
	require.NoError(t, err)
	assert.Contains(t, string(rendered), "--watch-namespaces=team-a,team-b")

	// The link listener: what `kubectl apply -k artifacts/deploy-link` installs, object by
	// object.
	linked := objectsOf(t, helm(t, "template", "kcp-setups", chartDir, "--namespace", "kcp-setups",
		"--set", "link.enabled=true", "--set", "link.advertiseURL=https://links.example.com"))
	linkedKustomize := objectsOf(t, kubectl(t, "kustomize", linkDeployDir))
	delete(linkedKustomize, "v1/Namespace/<nil>/kcp-setups")
	for key, want := range linkedKustomize {
		assert.Equal(t, want, linked[key], "%s", key)
	}
	for key := range linked {
		assert.Contains(t, linkedKustomize, key, "the chart with the link listener renders %s, which artifacts/deploy-link does not", key)
	}
	assert.Contains(t, linked, "v1/Service/kcp-setups/kcp-setups-link")
	assert.NotContains(t, chart, "v1/Service/kcp-setups/kcp-setups-link", "no listener by default")

	// What the schema and the templates refuse.
	for _, tc := range []struct{ set, says string }{
		{"watchNamespaces={Team_A}", "watchNamespaces"},
		{"replicas=0", "replicas"},
		{"replicas=two", "replicas"},
		{"etcd.bundled.enabled=false", "etcd.external.endpoints is required"},
		{"leaderElection.enabled=false", "needs replicas=1"},
		{"monitoring.serviceMonitor.enabled=yes", "enabled"},
		{"unknownValue=1", "unknownValue"},
		{"link.enabled=true", "link.advertiseURL is required"},
		{"link.advertiseURL=http://links.example.com", "advertiseURL"},
	} {
		out, err := stack.Helm(t.Context(), "template", "kcp-setups", chartDir, "--namespace", "kcp-setups", "--set", tc.set)
		if assert.Error(t, err, "--set %s renders", tc.set) {
			assert.Contains(t, out, tc.says, "--set %s", tc.set)
		}
	}
}

// chartDeploymentArgs are the arguments of the server's container in the release's manifest.
func chartDeploymentArgs(t *testing.T, release, namespace string) []string {
	t.Helper()
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(helm(t, "get", "manifest", release, "-n", namespace))), 4096)
	for {
		var d appsv1.Deployment
		require.NoError(t, decoder.Decode(&d), "no Deployment in the release")
		if d.Kind == "Deployment" && d.Name == "kcp-setups" {
			return d.Spec.Template.Spec.Containers[0].Args
		}
	}
}

// TestHelmChart installs the chart into the local stack, upgrades it with a changed value,
// runs the server as the release's ServiceAccount with the release's arguments and RBAC
// (rule by rule, as TestManifestRBACIsSufficientAndMinimal does for the manifests), and
// uninstalls it. The release's APIService stays off: the stack's own server holds
// operator.kcp.io for every other test, and the chart's would send the group to kwok's pods,
// which run nothing; TestChartTemplateEqualsKustomize checks the APIService the chart renders.
func TestHelmChart(t *testing.T) {
	parallel(t, ownRoles)
	ctx := t.Context()
	const release, ns = "kcp-setups", "kcp-setups"
	// Cluster-scoped objects another test applied with kubectl would not be Helm's to own:
	// they go meanwhile, and the self-service roles come back afterwards.
	_, err := stack.Kube.RbacV1().ClusterRoles().Get(ctx, "kcp-setups-edit", metav1.GetOptions{})
	rolesApplied := err == nil
	kubectl(t, "delete", "-f", deployDir+"/roles.yaml", "--ignore-not-found")
	kubectl(t, "delete", "-f", deployDir+"/rbac.yaml", "--ignore-not-found")
	t.Cleanup(func() {
		_, _ = stack.Helm(context.Background(), "uninstall", release, "-n", ns, "--ignore-not-found")
		_, _ = stack.Kubectl(context.Background(), "delete", "pvc", "-n", ns, "-l", "app.kubernetes.io/name=etcd", "--ignore-not-found")
		if rolesApplied {
			_, _ = stack.Kubectl(context.Background(), "apply", "-f", deployDir+"/roles.yaml")
		}
	})

	out := helm(t, "install", release, chartDir, "-n", ns, "--create-namespace", "--set", "apiService.enabled=false")
	assert.Contains(t, out, "STATUS: deployed")
	// The release's objects are real: cert-manager issues its PKI, kwok runs its pods.
	for _, cert := range []string{"kcp-setups-serving", "etcd-member", "etcd-client"} {
		kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "certificate/"+cert, "--timeout=2m")
	}
	kubectl(t, "rollout", "status", "-n", ns, "deployment/kcp-setups", "--timeout=3m")
	d, err := stack.Kube.AppsV1().Deployments(ns).Get(ctx, "kcp-setups", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	assert.Equal(t, "Helm", d.Labels["app.kubernetes.io/managed-by"], "Helm marks what it owns")
	sts, err := stack.Kube.AppsV1().StatefulSets(ns).Get(ctx, "etcd", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(3), *sts.Spec.Replicas)

	// An upgrade with a changed value rolls the Deployment with it.
	out = helm(t, "upgrade", release, chartDir, "-n", ns, "--reuse-values", "--set", "replicas=3", "--set", "server.maxKubeconfigExpiration=12h")
	assert.Contains(t, out, "STATUS: deployed")
	assert.Contains(t, out, "REVISION: 2")
	d, err = stack.Kube.AppsV1().Deployments(ns).Get(ctx, "kcp-setups", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(3), *d.Spec.Replicas)
	assert.Contains(t, d.Spec.Template.Spec.Containers[0].Args, "--max-kubeconfig-expiration=12h")
	kubectl(t, "rollout", "status", "-n", ns, "deployment/kcp-setups", "--timeout=3m")
	args := chartDeploymentArgs(t, release, ns)
	assert.Contains(t, args, "--max-kubeconfig-expiration=12h")

	// The release's server, as its ServiceAccount with its RBAC and arguments.
	t.Run("rbac", func(t *testing.T) {
		token := strings.TrimSpace(kubectl(t, "create", "token", "kcp-setups", "-n", ns, "--duration=2h"))
		kubeconfig, err := stack.TokenKubeconfig("kcp-setups-chart-sa", token)
		require.NoError(t, err)
		port, err := stack.FreePort()
		require.NoError(t, err)
		serverRBACIsSufficientAndMinimal(t, "chart-rbac", port, localArgs(t, args, port, kubeconfig), nil)
	})

	out = helm(t, "uninstall", release, "-n", ns)
	assert.Contains(t, out, "uninstalled")
	for _, gone := range []func() error{
		func() error {
			_, err := stack.Kube.AppsV1().Deployments(ns).Get(ctx, "kcp-setups", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := stack.Kube.RbacV1().ClusterRoles().Get(ctx, "kcp-setups:apiserver", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := stack.Kube.RbacV1().ClusterRoles().Get(ctx, "kcp-setups-edit", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := stack.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "kcp-setups", metav1.GetOptions{})
			return err
		},
	} {
		assert.Eventually(t, func() bool { return apierrors.IsNotFound(gone()) }, time.Minute, time.Second)
	}
	certs := kubectl(t, "get", "certificates", "-n", ns, "-o", "name")
	assert.NotContains(t, certs, "kcp-setups-serving", "the release's certificates go with it")
}
