package e2e

import (
	"crypto/x509"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/test/framework"
)

// kubeconfigResponse is the part of a KubeconfigRequest response the tests read.
type kubeconfigResponse struct {
	Spec struct {
		ExpirationSeconds int64 `json:"expirationSeconds"`
	} `json:"spec"`
	Status struct {
		Kubeconfig          string    `json:"kubeconfig"`
		ExpirationTimestamp time.Time `json:"expirationTimestamp"`
		Certificate         struct {
			SHA256Fingerprint string `json:"sha256Fingerprint"`
		} `json:"certificate"`
	} `json:"status"`
}

// mintAs calls the kubeconfig subresource of rootshards/name in ns with kubectl create --raw,
// as the user of kubeconfig, with body.
func mintAs(t *testing.T, kubeconfig, ns, name, body string) (resp kubeconfigResponse, stderr string, err error) {
	t.Helper()
	return mintOn(t, stackOf(t), kubeconfig, ns, "rootshards", name, body)
}

// mintOn calls the kubeconfig subresource of resource/name (rootshards, shards or
// frontproxies) in ns of the stack s with kubectl create --raw, as the user of kubeconfig,
// with body.
func mintOn(t *testing.T, s *framework.Stack, kubeconfig, ns, resource, name, body string) (resp kubeconfigResponse, stderr string, err error) {
	t.Helper()
	path := "/apis/operator.kcp.io/v1alpha1/namespaces/" + ns + "/" + resource + "/" + name + "/kubeconfig"
	stdout, stderr, err := s.KubectlWith(t.Context(), kubeconfig, "create", "--raw", path, "-f", writeManifest(t, body))
	if err != nil {
		return resp, stderr, err
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &resp), stdout)
	return resp, stderr, nil
}

// clientCertOf is the client certificate of a kubeconfig's current context, and the
// kubeconfig written to a file.
func clientCertOf(t *testing.T, kubeconfig []byte) (*x509.Certificate, string) {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	require.NoError(t, err)
	ctx := cfg.Contexts[cfg.CurrentContext]
	require.NotNil(t, ctx)
	path := filepath.Join(t.TempDir(), "minted.kubeconfig")
	require.NoError(t, os.WriteFile(path, kubeconfig, 0o600))
	return parseCert(t, cfg.AuthInfos[ctx.AuthInfo].ClientCertificateData), path
}

// whoami asks the stand-in who the kubeconfig's credential is.
func whoami(t *testing.T, standIn *framework.StandIn, kubeconfig string) (string, error) {
	t.Helper()
	out, stderr, err := stack.KubectlWith(t.Context(), kubeconfig, "--server", standIn.URL, "--tls-server-name", "localhost",
		"auth", "whoami", "-o", `jsonpath={.status.userInfo.username} {.status.userInfo.groups}`)
	if err != nil {
		return stderr, err
	}
	return out, nil
}

// TestKubeconfigSubresource mints credentials through kube-apiserver's aggregation layer with
// kubectl: RBAC gates it per namespace, the identity is the requester's, the bounds hold, and
// the credential works against a kcp stand-in that serves the RootShard's certificate and
// trusts its client CAs, and nowhere else.
func TestKubeconfigSubresource(t *testing.T) {
	parallel(t, alone)
	ns, other := namespace(t, "mint-a"), namespace(t, "mint-b")
	givenRootShard(t, ns, withObjects(framework.RootShardManifest("elsewhere", "elsewhere.example.com", 6443)), until("CertificatesReady"))
	waitFor(t, ns, "rootshard/elsewhere", "CertificatesReady")

	alice, err := stack.UserKubeconfig("alice", "team-a")
	require.NoError(t, err)
	kubectl(t, "create", "role", "viewer", "-n", ns, "--verb=get,list", "--resource=rootshards.operator.kcp.io")
	kubectl(t, "create", "rolebinding", "alice-views", "-n", ns, "--role=viewer", "--user=alice")
	require.Eventually(t, func() bool {
		_, _, err := stack.KubectlWith(t.Context(), alice, "get", "rootshard", "root", "-n", ns)
		return err == nil
	}, time.Minute, time.Second)
	_, stderr, err := mintAs(t, alice, ns, "root", `{"spec":{}}`)
	require.Error(t, err, "get on rootshards is not enough")
	assert.Contains(t, stderr, `cannot create resource "rootshards/kubeconfig" in API group "operator.kcp.io"`)

	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: minter
rules:
- apiGroups: [operator.kcp.io]
  resources: [rootshards/kubeconfig]
  verbs: [create]
- apiGroups: [operator.kcp.io]
  resources: [kubeconfigs]
  verbs: [get, create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: alice-mints
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: minter}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
`))
	// The merged CA bundle is written just after the CAs are issued.
	var minted kubeconfigResponse
	require.Eventually(t, func() bool {
		minted, stderr, err = mintAs(t, alice, ns, "root", `{"spec":{}}`)
		return err == nil
	}, time.Minute, time.Second, "alice mints once a Role grants create on rootshards/kubeconfig: %s", stderr)
	cert, mintedPath := clientCertOf(t, []byte(minted.Status.Kubeconfig))
	assert.Equal(t, "alice", cert.Subject.CommonName, "the identity is the requester's")
	assert.Equal(t, []string{"team-a"}, cert.Subject.Organization)
	assert.True(t, minted.Status.ExpirationTimestamp.Equal(cert.NotAfter))
	assert.EqualValues(t, 3600, minted.Spec.ExpirationSeconds)

	_, stderr, err = mintAs(t, alice, other, "root", `{"spec":{}}`)
	require.Error(t, err, "the Role is for one namespace")
	assert.Contains(t, stderr, "forbidden")
	_, stderr, err = mintAs(t, alice, ns, "root", `{"spec":{"groups":["system:masters"]}}`)
	require.Error(t, err, "system:masters without impersonate")
	assert.Contains(t, stderr, `impersonate on groups "system:masters"`)

	// Bounds: below the minimum is invalid; above the maximum is shortened, with a warning.
	_, stderr, err = mintAs(t, alice, ns, "root", `{"spec":{"expirationSeconds":300}}`)
	require.Error(t, err)
	assert.Contains(t, stderr, "spec.expirationSeconds")
	long, stderr, err := mintAs(t, alice, ns, "root", `{"spec":{"expirationSeconds":864000}}`)
	require.NoError(t, err)
	assert.Contains(t, stderr, "Warning: spec.expirationSeconds 864000 is above the server's maximum of 86400")
	longCert, _ := clientCertOf(t, []byte(long.Status.Kubeconfig))
	assert.True(t, long.Status.ExpirationTimestamp.Equal(longCert.NotAfter), "status.expirationTimestamp is the certificate's NotAfter")
	assert.WithinDuration(t, time.Now().Add(24*time.Hour), longCert.NotAfter, time.Minute)

	// The credential works: a kcp stand-in with the RootShard's serving certificate and
	// client CAs says who it is.
	standIn, err := stack.StartStandIn(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)
	out, err := whoami(t, standIn, mintedPath)
	require.NoError(t, err, out)
	assert.Equal(t, `alice ["team-a","system:authenticated"]`, out)

	// A credential of another RootShard, minted with the generated Go client, is not accepted.
	ops, err := clientset.NewForConfig(stack.AdminConfig)
	require.NoError(t, err)
	foreign, err := ops.OperatorV1alpha1().RootShards(ns).CreateKubeconfig(t.Context(), "elsewhere",
		&operatorv1alpha1.KubeconfigRequest{Spec: operatorv1alpha1.KubeconfigRequestSpec{Workspace: "root:team-a"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "elsewhere", foreign.Name)
	foreignCert, _ := clientCertOf(t, []byte(foreign.Status.Kubeconfig))
	assert.Equal(t, "admin", foreignCert.Subject.CommonName)
	assert.Contains(t, foreign.Status.Kubeconfig, "/clusters/root:team-a")
	// It trusts its own RootShard's server CA; trusting root's instead gets it as far as
	// authentication.
	cfg, err := clientcmd.Load([]byte(foreign.Status.Kubeconfig))
	require.NoError(t, err)
	for _, cluster := range cfg.Clusters {
		cluster.CertificateAuthorityData = decodeSecret(t, ns, "root-merged-ca-bundle", "tls.crt")
	}
	foreignPath := filepath.Join(t.TempDir(), "foreign.kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, foreignPath))
	out, err = whoami(t, standIn, foreignPath)
	require.Error(t, err)
	assert.Contains(t, out, "Unauthorized")

	// A Kubeconfig object declares the same kind of credential, kept in a Secret.
	_, stderr, err = stack.KubectlWith(t.Context(), alice, "apply", "-n", ns, "-f", writeManifest(t, kubeconfigManifest("sneaky", "system:admin")))
	require.Error(t, err)
	assert.Contains(t, stderr, `impersonate on users "system:admin"`, "alice may create Kubeconfigs, but not for someone else")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, kubeconfigManifest("bob", "bob")))
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "kubeconfig", "bob", "-n", ns, "-o", "jsonpath={.status.phase}")
		return out == "Ready"
	}, 2*time.Minute, time.Second, "the Kubeconfig becomes Ready")
	declared, declaredPath := clientCertOf(t, decodeSecret(t, ns, "bob-kubeconfig", "kubeconfig"))
	assert.Equal(t, "bob", declared.Subject.CommonName)
	expiration := kubectl(t, "get", "kubeconfig", "bob", "-n", ns, "-o", "jsonpath={.status.expirationTimestamp}")
	assert.Equal(t, declared.NotAfter.UTC().Format(time.RFC3339), expiration)
	assert.Equal(t, "RootShard/root", kubectl(t, "get", "kubeconfig", "bob", "-n", ns, "-o", "jsonpath={.status.targetName}"))
	out, err = whoami(t, standIn, declaredPath)
	require.NoError(t, err, out)
	assert.Equal(t, `bob ["team-b","system:authenticated"]`, out)

	kubectl(t, "delete", "kubeconfig", "bob", "-n", ns, "--timeout=2m")
	for _, kind := range []string{"certificates", "secrets"} {
		assert.Empty(t, strings.TrimSpace(kubectl(t, "get", kind, "-n", ns, "-l", "operator.kcp.io/kubeconfig=bob", "-o", "name")),
			"%s of the Kubeconfig left behind", kind)
	}
	_, err = stack.Kubectl(t.Context(), "get", "secret", "bob-kubeconfig", "-n", ns)
	assert.Error(t, err, "the Kubeconfig's Secret is deleted with it")
}

// rootShardPKI is the realized PKI of the RootShard name in ns, for a stand-in or a kcp
// double named after ns.
func rootShardPKI(t *testing.T, ns, name string) framework.StandInOptions {
	t.Helper()
	// The serving certificate is cert-manager's Secret, the bundle that verifies it the
	// server's, written from the server CA's Secret: read them until they agree, as a client
	// of the shard would see them once the setup settled.
	var o framework.StandInOptions
	var err error
	if !assert.Eventually(t, func() bool {
		o = framework.StandInOptions{
			Name:        ns,
			ServingCert: readSecret(t, stack, ns, name+"-server", "tls.crt"), ServingKey: readSecret(t, stack, ns, name+"-server", "tls.key"),
			ClientCA: readSecret(t, stack, ns, name+"-merged-client-ca", "tls.crt"),
			ServerCA: readSecret(t, stack, ns, name+"-merged-ca-bundle", "tls.crt"), ServerName: "localhost",
		}
		err = o.VerifyServing()
		return err == nil && len(o.ServingKey) > 0 && len(o.ClientCA) > 0
	}, 2*time.Minute, time.Second) {
		t.Fatalf("the realized PKI of the RootShard %s/%s: %v", ns, name, err)
	}
	return o
}

// kubeconfigManifest is a Kubeconfig for the RootShard root as username, in group team-b.
func kubeconfigManifest(name, username string) string {
	return strings.NewReplacer("NAME", name, "USER", username).Replace(`apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: NAME
spec:
  target: {rootShardRef: {name: root}}
  username: USER
  groups: [team-b]
  validity: 1h
  secretRef: {name: NAME-kubeconfig}
`)
}
