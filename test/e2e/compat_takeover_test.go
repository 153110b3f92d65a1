package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kcpOperatorCAs are the CAs kcp-operator makes for a RootShard root, by its names
// (internal/resources: GetRootShardCAName): the root CA from the user's issuer, and the
// intermediates it signs.
var kcpOperatorCAs = []string{"root-ca", "root-server-ca", "root-client-ca", "root-front-proxy-client-ca",
	"root-requestheader-client-ca", "root-service-account-ca"}

// kcpOperatorLabels are the labels kcp-operator puts on what it makes for instance in the
// role component (internal/resources: getResourceLabels).
func kcpOperatorLabels(instance, component string) string {
	return fmt.Sprintf(`{app.kubernetes.io/managed-by: kcp-operator, app.kubernetes.io/name: kcp, app.kubernetes.io/instance: %s, app.kubernetes.io/component: %s}`,
		instance, component)
}

// kcpOperatorCertificate is a Certificate as kcp-operator writes it, with its Secret's label.
func kcpOperatorCertificate(name, issuer, issuerKind, instance, component, secretLabels, extra string) string {
	return fmt.Sprintf(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: %[1]s
  labels: %[5]s
spec:
  commonName: %[1]s
  secretName: %[1]s
  secretTemplate: {labels: %[6]s}
  duration: 87600h
  renewBefore: 720h
  privateKey: {algorithm: RSA, size: 4096}
  issuerRef: {name: %[2]s, kind: %[3]s, group: cert-manager.io}
%[7]s---
`, name, issuer, issuerKind, instance, kcpOperatorLabels(instance, component), secretLabels, extra)
}

// kcpOperatorSetup is what kcp-operator has made for a RootShard root (its CAs, their
// Issuers, its serving certificate, Deployment and Service, a kubeconfig Secret of its own),
// a Shard shard-1 and a FrontProxy fp (their serving certificates, Deployments and
// Services), with a user's self-signed Issuer behind the root CA. owner is the metadata that
// follows the labels of the Deployments and Services kcp-operator made for an instance (its
// v0.9 owner references), "" for none.
func kcpOperatorSetup(owner func(instance string) string) string {
	var b strings.Builder
	b.WriteString("apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: selfsigned}\nspec: {selfSigned: {}}\n---\n")
	rsSecret := "{operator.kcp.io/rootshard: root}"
	for i, ca := range kcpOperatorCAs {
		issuer, kind := "root-ca", "Issuer"
		if i == 0 {
			issuer = "selfsigned"
		}
		b.WriteString(kcpOperatorCertificate(ca, issuer, kind, "root", "rootshard", rsSecret, "  isCA: true\n"))
		fmt.Fprintf(&b, "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: %s, labels: %s}\nspec: {ca: {secretName: %s}}\n---\n",
			ca, kcpOperatorLabels("root", "rootshard"), ca)
	}
	b.WriteString(kcpOperatorCertificate("root-server", "root-server-ca", "Issuer", "root", "rootshard", rsSecret,
		"  dnsNames: [localhost, root-kcp]\n  usages: [server auth]\n"))
	b.WriteString(kcpOperatorCertificate("shard-1-server", "root-server-ca", "Issuer", "shard-1", "shard",
		"{operator.kcp.io/rootshard: root, operator.kcp.io/shard: shard-1}", "  dnsNames: [shard-1-shard-kcp]\n  usages: [server auth]\n"))
	b.WriteString(kcpOperatorCertificate("root-fp-server", "root-server-ca", "Issuer", "fp", "front-proxy",
		"{operator.kcp.io/rootshard: root, operator.kcp.io/front-proxy: fp}", "  dnsNames: [fp-front-proxy]\n  usages: [server auth]\n"))
	for _, w := range []struct{ name, instance, component string }{
		{"root-kcp", "root", "rootshard"}, {"shard-1-shard-kcp", "shard-1", "shard"}, {"fp-front-proxy", "fp", "front-proxy"},
	} {
		labels := kcpOperatorLabels(w.instance, w.component)
		fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, labels: %[2]s%[3]s}
spec:
  selector: {matchLabels: %[2]s}
  template:
    metadata: {labels: %[2]s}
    spec: {containers: [{name: kcp, image: ghcr.io/kcp-dev/kcp:v0.28.0}]}
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, labels: %[2]s%[3]s}
spec:
  selector: %[2]s
  ports: [{name: https, port: 6443}]
---
`, w.name, labels, owner(w.instance))
	}
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: root-legacy-kubeconfig, labels: %s}\nstringData: {kubeconfig: kcp-operator's}\n---\n",
		kcpOperatorLabels("root", "rootshard"))
	// A credential someone holds, issued by kcp-operator's client CA.
	b.WriteString(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: legacy-admin}
spec:
  commonName: legacy-admin
  subject: {organizations: ["system:kcp:admin"]}
  secretName: legacy-admin
  usages: [client auth]
  issuerRef: {name: root-client-ca, kind: Issuer, group: cert-manager.io}
`)
	return b.String()
}

// kcpOperatorManifests are the RootShard, Shard and FrontProxy the kcp-operator setup was
// made from, as its users write them.
const kcpOperatorManifests = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root
spec:
  external: {hostname: kcp.example.com, port: 6443}
  certificates:
    issuerRef: {name: selfsigned, kind: Issuer, group: cert-manager.io}
  cache: {}
  etcd: {endpoints: ["https://etcd.example.com:2379"]}
---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: shard-1
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
---
apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: fp
spec:
  rootShard: {ref: {name: root}}
  external: {hostname: kcp.example.com, port: 443}
`

// TestTakeOverFromKcpOperator: a running kcp-operator setup, its objects orphaned, is taken
// over by the same manifests with the adopt annotation. Without it nothing of kcp-operator's
// is touched (NameConflict); with it, the setup runs on kcp-operator's CA keys, byte for
// byte, so that a client certificate kcp-operator's client CA issued is accepted by a shard
// serving the realized certificates, through the CA bundle its holder had; kcp-operator's
// Deployments are replaced, and what nothing took over is removed.
func TestTakeOverFromKcpOperator(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "takeover-kcp-operator")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, kcpOperatorSetup(func(string) string { return "" })))
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "certificate", "--all", "--timeout=3m")
	keys := map[string]string{}
	for _, ca := range kcpOperatorCAs {
		keys[ca] = keyDigest(t, ns, ca)
	}
	oldRootCA := readSecret(t, stack, ns, "root-ca", "tls.crt")
	legacyCert, legacyKey := readSecret(t, stack, ns, "legacy-admin", "tls.crt"), readSecret(t, stack, ns, "legacy-admin", "tls.key")
	kcpOperators := []string{"deployment/root-kcp", "service/root-kcp", "certificate/root-ca", "issuer/root-ca", "secret/root-ca", "secret/root-legacy-kubeconfig"}
	state := func() string {
		args := append([]string{"get", "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.uid}/{.metadata.generation}/{.metadata.labels} {end}"}, kcpOperators...)
		return kubectl(t, args...)
	}
	before := state()
	oldDeployment := kubectl(t, "get", "deployment/root-kcp", "-n", ns, "-o", "jsonpath={.metadata.uid}")

	// The same manifests without the annotation: nothing of kcp-operator's is touched.
	manifests := writeManifest(t, kcpOperatorManifests)
	kubectl(t, "apply", "-n", ns, "-f", manifests)
	waitForReason(t, ns, "rootshard/root", "Synced", "False", "NameConflict")
	assert.Contains(t, conditionMessage(t, stack, ns, "rootshard/root", "Synced"), "not by kcp-setups")
	assert.Equal(t, before, state(), "without the annotation nothing of kcp-operator's is written")

	// The annotation is refused on objects created without it: a takeover happens only
	// while an object created with it is first realized.
	_, stderr, err := stack.KubectlWith(t.Context(), stack.AdminKubeconfig, "annotate", "-n", ns, "rootshard/root", "operator.kcp.io/adopt=kcp-operator")
	require.Error(t, err)
	assert.Contains(t, stderr, `The RootShard "root" is invalid`)
	assert.Contains(t, stderr, "metadata.annotations[operator.kcp.io/adopt]")
	assert.Contains(t, stderr, "may be set only when the object is created")
	// The same manifests, created again with the annotation.
	kubectl(t, "delete", "-n", ns, "-f", manifests, "--wait")
	assert.Equal(t, before, state(), "deleting the objects that took nothing over touches nothing of kcp-operator's")
	adopting := strings.ReplaceAll(kcpOperatorManifests, "\nspec:\n", "\n  annotations: {operator.kcp.io/adopt: kcp-operator}\nspec:\n")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, adopting))
	for _, o := range []string{"rootshard/root", "shard/shard-1", "frontproxy/fp"} {
		if _, err := stack.Kubectl(t.Context(), "wait", "-n", ns, "--for=condition=Available", o, "--timeout=3m"); err != nil {
			t.Fatalf("%s is not Available: %s", o, kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.conditions}"))
		}
	}
	for _, ca := range kcpOperatorCAs {
		assert.Equal(t, keys[ca], keyDigest(t, ns, ca), "%s keeps kcp-operator's key, byte for byte", ca)
		assert.Equal(t, "kcp-setups", kubectl(t, "get", "secret/"+ca, "-n", ns, "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}"), ca)
	}
	assert.NotEqual(t, oldDeployment, kubectl(t, "get", "deployment/root-kcp", "-n", ns, "-o", "jsonpath={.metadata.uid}"),
		"kcp-operator's Deployment is replaced: its selector cannot change")
	require.Eventually(t, func() bool {
		_, err := stack.Kubectl(t.Context(), "get", "secret/root-legacy-kubeconfig", "-n", ns)
		return err != nil
	}, time.Minute, time.Second, "what kcp-operator made and nothing took over goes")
	for _, o := range []string{"rootshard/root", "shard/shard-1", "frontproxy/fp"} {
		kubectl(t, "wait", "-n", ns, "--for=condition=TakenOver", o, "--timeout=1m")
	}
	assert.Equal(t, "legacy-admin", kubectl(t, "get", "certificate/legacy-admin", "-n", ns, "-o", "jsonpath={.metadata.name}"),
		"a certificate nobody made for the setup stays")

	// The credential of before, with the CA bundle its holder had, against a shard serving
	// the realized certificates.
	standIn, err := stack.StartStandIn(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: standIn.URL, TLSClientConfig: rest.TLSClientConfig{
		ServerName: "localhost", CAData: oldRootCA, CertData: legacyCert, KeyData: legacyKey}})
	require.NoError(t, err)
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err, "kcp-operator's client certificate, through the bundle of before")
	assert.Equal(t, "legacy-admin", review.Status.UserInfo.Username)
}

// kcpOperatorCompiled are kcp-operator v0.9's Compiled* kinds (deploy.operator.kcp.io) that
// own the Deployments and Services it makes for the RootShard root, the Shard shard-1 and the
// FrontProxy fp, by instance.
var kcpOperatorCompiled = []struct{ kind, plural, instance string }{
	{"CompiledRootShard", "compiledrootshards", "root"},
	{"CompiledShard", "compiledshards", "shard-1"},
	{"CompiledFrontProxy", "compiledfrontproxies", "fp"},
}

// compiledCRD is a CustomResourceDefinition of one of kcp-operator v0.9's Compiled* kinds,
// with its names and an open schema: what the takeover meets of it is its objects' UIDs.
func compiledCRD(kind, plural string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.deploy.operator.kcp.io}
spec:
  group: deploy.operator.kcp.io
  names: {kind: %[1]s, listKind: %[1]sList, plural: %[2]s, singular: %[3]s}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
`, kind, plural, strings.ToLower(kind))
}

// TestTakeOverFromKcpOperatorV09: since v0.9 kcp-operator's Deployments and Services are
// owned by its Compiled* objects. While they are, nothing of the setup is taken over
// (NameConflict naming the owner): the garbage collector would delete what was adopted once
// they go, and a Service would come back with another address. The documented procedure
// deletes them with --cascade=orphan, which removes those references, and their CRDs; then
// the takeover goes on, and the Service keeps its address.
func TestTakeOverFromKcpOperatorV09(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "takeover-kcp-operator-v09")
	var crds, objects strings.Builder
	for _, c := range kcpOperatorCompiled {
		crds.WriteString(compiledCRD(c.kind, c.plural))
		fmt.Fprintf(&objects, "apiVersion: deploy.operator.kcp.io/v1alpha1\nkind: %s\nmetadata: {name: %s}\n---\n", c.kind, c.instance)
	}
	kubectl(t, "apply", "-f", writeManifest(t, crds.String()))
	t.Cleanup(func() {
		for _, c := range kcpOperatorCompiled {
			_, _ = stack.Kubectl(t.Context(), "delete", "crd", c.plural+".deploy.operator.kcp.io", "--ignore-not-found")
		}
	})
	for _, c := range kcpOperatorCompiled {
		kubectl(t, "wait", "--for=condition=Established", "crd/"+c.plural+".deploy.operator.kcp.io", "--timeout=1m")
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, objects.String()))
	owners := map[string]string{}
	for _, c := range kcpOperatorCompiled {
		uid := kubectl(t, "get", c.plural+"/"+c.instance, "-n", ns, "-o", "jsonpath={.metadata.uid}")
		owners[c.instance] = fmt.Sprintf(", ownerReferences: [{apiVersion: deploy.operator.kcp.io/v1alpha1, kind: %s, name: %s, uid: %s, controller: true, blockOwnerDeletion: true}]",
			c.kind, c.instance, uid)
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, kcpOperatorSetup(func(instance string) string { return owners[instance] })))
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "certificate", "--all", "--timeout=3m")
	service := func() string {
		return kubectl(t, "get", "service/root-kcp", "-n", ns, "-o", "jsonpath={.metadata.uid} {.spec.clusterIP}")
	}
	before := service()

	adopting := strings.ReplaceAll(kcpOperatorManifests, "\nspec:\n", "\n  annotations: {operator.kcp.io/adopt: kcp-operator}\nspec:\n")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, adopting))
	waitForReason(t, ns, "rootshard/root", "Synced", "False", "NameConflict")
	assert.Contains(t, conditionMessage(t, stack, ns, "rootshard/root", "Synced"), "still owned by kcp-operator's CompiledRootShard root")
	assert.Contains(t, kubectl(t, "get", "service/root-kcp", "-n", ns, "-o", "jsonpath={.metadata.ownerReferences[0].kind}"), "CompiledRootShard",
		"nothing owned by kcp-operator is rewritten")

	// The procedure: kcp-operator's Compiled* objects go with --cascade=orphan, then their CRDs.
	for _, c := range kcpOperatorCompiled {
		kubectl(t, "delete", c.plural, "-n", ns, "--all", "--cascade=orphan", "--wait")
	}
	require.Eventually(t, func() bool {
		out, err := stack.Kubectl(t.Context(), "get", "service/root-kcp", "deployment/shard-1-shard-kcp", "-n", ns, "-o", "jsonpath={.items[*].metadata.ownerReferences}")
		return err == nil && strings.TrimSpace(out) == ""
	}, 3*time.Minute, 2*time.Second, "the garbage collector removes the orphaned objects' owner references")
	for _, c := range kcpOperatorCompiled {
		kubectl(t, "delete", "crd", c.plural+".deploy.operator.kcp.io")
	}

	for _, o := range []string{"rootshard/root", "shard/shard-1", "frontproxy/fp"} {
		if _, err := stack.Kubectl(t.Context(), "wait", "-n", ns, "--for=condition=TakenOver", o, "--timeout=3m"); err != nil {
			t.Fatalf("%s is not taken over: %s", o, kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.conditions}"))
		}
	}
	assert.Equal(t, before, service(), "the Service is taken over, not replaced: it keeps its address")
	assert.Empty(t, kubectl(t, "get", "service/root-kcp", "-n", ns, "-o", "jsonpath={.metadata.ownerReferences}"))
	assert.Equal(t, "kcp-setups", kubectl(t, "get", "service/root-kcp", "-n", ns, "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}"))
}
