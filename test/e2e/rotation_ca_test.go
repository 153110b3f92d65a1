package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/test/framework"
)

// rotate asks the rotation subresource of resource/name in ns for phase of authorities, as
// an admin does with kubectl create --raw.
func rotate(t *testing.T, ns, resource, name, phase string, authorities ...string) (stdout, stderr string, err error) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"apiVersion": "operator.kcp.io/v1alpha1", "kind": "CARotation",
		"spec": map[string]any{"phase": phase, "authorities": authorities}})
	require.NoError(t, err)
	path := "/apis/operator.kcp.io/v1alpha1/namespaces/" + ns + "/" + resource + "/" + name + "/rotation"
	s := stackOf(t)
	return s.KubectlWith(t.Context(), s.AdminKubeconfig, "create", "--raw", path, "-f", writeManifest(t, string(body)))
}

// rotations are the status.rotations of the RootShard name, by authority.
func rotations(t *testing.T, ns, name string) map[string]operatorv1alpha1.CARotationState {
	out, err := stackOf(t).Kubectl(t.Context(), "get", "rootshard", name, "-n", ns, "-o", "json")
	if err != nil {
		return nil
	}
	var rs operatorv1alpha1.RootShard
	if json.Unmarshal([]byte(out), &rs) != nil {
		return nil
	}
	m := map[string]operatorv1alpha1.CARotationState{}
	for _, r := range rs.Status.Rotations {
		m[r.Authority] = r
	}
	return m
}

// waitForRotation waits until every authority's rotation of the RootShard name is in phase.
func waitForRotation(t *testing.T, ns, name string, phase operatorv1alpha1.CARotationPhase, authorities ...string) {
	t.Helper()
	var got map[string]operatorv1alpha1.CARotationState
	if !assert.Eventually(t, func() bool {
		got = rotations(t, ns, name)
		for _, a := range authorities {
			if got[a].Phase != phase {
				return false
			}
		}
		return true
	}, 6*time.Minute, 2*time.Second) {
		t.Fatalf("the rotations of %v of rootshard %s/%s never became %s: %+v; conditions: %s", authorities, ns, name, phase, got,
			kubectl(t, "get", "rootshard", name, "-n", ns, "-o", "jsonpath={.status.conditions}"))
	}
}

// probe is one request of a prober.
type probe struct {
	at  time.Time
	err error
}

// prober asks a stand-in who its credential is, in a loop, with a new TLS connection each
// time, so that each request is verified by both sides against what they trust right then.
type prober struct {
	name, user string
	cert       tls.Certificate
	mu         sync.Mutex
	roots      *x509.CertPool
	probes     []probe
}

// newProber is a prober with the credential and the CA bundle of a minted kubeconfig.
func newProber(t *testing.T, name string, kubeconfig []byte) *prober {
	cfg, err := clientcmd.Load(kubeconfig)
	require.NoError(t, err)
	ctx := cfg.Contexts[cfg.CurrentContext]
	auth, cluster := cfg.AuthInfos[ctx.AuthInfo], cfg.Clusters[ctx.Cluster]
	cert, err := tls.X509KeyPair(auth.ClientCertificateData, auth.ClientKeyData)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	p := &prober{name: name, user: leaf.Subject.CommonName, cert: cert}
	p.setCA(t, cluster.CertificateAuthorityData)
	return p
}

// setCA replaces the bundle the prober verifies the stand-in by, as a client refreshes its
// kubeconfig's certificate-authority-data.
func (p *prober) setCA(t *testing.T, bundle []byte) {
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(bundle))
	p.mu.Lock()
	p.roots = pool
	p.mu.Unlock()
}

func (p *prober) once(ctx context.Context, url string) error {
	p.mu.Lock()
	roots := p.roots
	p.mu.Unlock()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost", Certificates: []tls.Certificate{p.cert}, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var review struct {
		Status struct {
			UserInfo struct {
				Username string `json:"username"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &review) != nil {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, body)
	}
	if review.Status.UserInfo.Username != p.user {
		return fmt.Errorf("authenticated as %q, not %q", review.Status.UserInfo.Username, p.user)
	}
	return nil
}

// run probes until ctx ends.
func (p *prober) run(ctx context.Context, url string, wg *sync.WaitGroup) {
	defer wg.Done()
	for ctx.Err() == nil {
		err := p.once(ctx, url)
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		p.probes = append(p.probes, probe{at: time.Now(), err: err})
		p.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

// results counts the probes, the failed ones before until (all when until is zero), and the
// last probe's error.
func (p *prober) results(until time.Time) (total, ok, failedBefore int, firstFailure, last error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.probes {
		total++
		if pr.err == nil {
			ok++
			continue
		}
		if until.IsZero() || pr.at.Before(until) {
			failedBefore++
			if firstFailure == nil {
				firstFailure = fmt.Errorf("at %s: %w", pr.at.Format(time.RFC3339Nano), pr.err)
			}
		}
	}
	if len(p.probes) > 0 {
		last = p.probes[len(p.probes)-1].err
	}
	return total, ok, failedBefore, firstFailure, last
}

// mounter refreshes a stand-in's files from the realized Secrets that read returns, as the
// kubelet refreshes a kcp pod's mounts, and remembers when it first wrote a client CA bundle
// that no longer trusts revoked.
type mounter struct {
	mu        sync.Mutex
	revokedAt time.Time
	writes    int
}

// rootShardMounts reads the serving certificate and client CA bundle of the RootShard name.
func rootShardMounts(t *testing.T, s *framework.Stack, ns, name string) func() framework.StandInOptions {
	return func() framework.StandInOptions {
		return framework.StandInOptions{
			ServingCert: readSecret(t, s, ns, name+"-server", "tls.crt"), ServingKey: readSecret(t, s, ns, name+"-server", "tls.key"),
			ClientCA: readSecret(t, s, ns, name+"-merged-client-ca", "tls.crt"),
		}
	}
}

func (m *mounter) run(ctx context.Context, standIn *framework.StandIn, read func() framework.StandInOptions, revoked *x509.Certificate, wg *sync.WaitGroup) {
	defer wg.Done()
	var last framework.StandInOptions
	for ctx.Err() == nil {
		o := read()
		changed := !bytes.Equal(o.ServingCert, last.ServingCert) || !bytes.Equal(o.ServingKey, last.ServingKey) || !bytes.Equal(o.ClientCA, last.ClientCA)
		if changed && len(o.ServingCert) > 0 && len(o.ClientCA) > 0 && standIn.Refresh(o) == nil {
			last = o
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(o.ClientCA)
			_, err := revoked.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			m.mu.Lock()
			m.writes++
			if err != nil && m.revokedAt.IsZero() {
				m.revokedAt = time.Now()
			}
			m.mu.Unlock()
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (m *mounter) revoked() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revokedAt
}

// TestRotationWithoutFailures rotates a RootShard's server, client and front-proxy-client
// CAs through Start and Complete while two clients call a stand-in serving the realized
// certificates in a loop: one with a credential minted before Start, one with a credential
// minted once the rotation was Prepared, both with their kubeconfig's CA bundle refreshed
// during Prepared. Neither request fails until Complete drops the old CAs; then the
// credential minted before Start is refused, and the other keeps working.
func TestRotationWithoutFailures(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "carotation")
	givenRootShard(t, ns, until("CertificatesReady", "Available"))

	var before kubeconfigResponse
	var stderr string
	var err error
	require.Eventually(t, func() bool {
		before, stderr, err = mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
		return err == nil
	}, time.Minute, time.Second, "mint: %s", stderr)
	revoked, _ := clientCertOf(t, []byte(before.Status.Kubeconfig))

	o := rootShardPKI(t, ns, "root")
	o.Name = ns
	standIn, err := stack.StartStandIn(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	m := &mounter{}
	wg.Add(1)
	go m.run(ctx, standIn, rootShardMounts(t, stack, ns, "root"), revoked, &wg)
	oldClient := newProber(t, "minted before Start", []byte(before.Status.Kubeconfig))
	wg.Add(1)
	go oldClient.run(ctx, standIn.URL, &wg)
	require.Eventually(t, func() bool { _, ok, _, _, _ := oldClient.results(time.Time{}); return ok >= 5 }, time.Minute, 200*time.Millisecond,
		"the credential minted before Start works before it")

	authorities := []string{"server", "client", "front-proxy-client"}
	out, stderr, err := rotate(t, ns, "rootshards", "root", "Start", authorities...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, `"phase":"Preparing"`)
	// Completing at once is refused while the new CAs are not trusted everywhere.
	if _, stderr, err := rotate(t, ns, "rootshards", "root", "Complete", "server"); err != nil {
		assert.Contains(t, stderr, "is Preparing", "a 409 that says why")
	}
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, authorities...)
	waitFor(t, ns, "rootshard/root", "CARotation")
	assert.Equal(t, "WaitingForComplete", kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CARotation")].reason}`))

	// Prepared: the clients pick up the bundle with both server CAs, and a credential minted
	// now comes from the new front-proxy-client CA.
	bundle := readSecret(t, stack, ns, "root-merged-ca-bundle", "tls.crt")
	require.Len(t, certsIn(bundle), 2, "the server CA bundle carries the old and the new CA")
	oldClient.setCA(t, bundle)
	var after kubeconfigResponse
	after, stderr, err = mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
	require.NoError(t, err, stderr)
	minted, _ := clientCertOf(t, []byte(after.Status.Kubeconfig))
	newCA := secretCert(t, ns, "root-front-proxy-client-ca-next")
	require.NoError(t, minted.CheckSignatureFrom(newCA), "a credential minted once Prepared comes from the new CA")
	newClient := newProber(t, "minted after Start", []byte(after.Status.Kubeconfig))
	wg.Add(1)
	go newClient.run(ctx, standIn.URL, &wg)
	require.Eventually(t, func() bool { _, ok, _, _, _ := newClient.results(time.Time{}); return ok >= 5 }, time.Minute, 200*time.Millisecond,
		"the credential minted after Start works")

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", authorities...)
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, authorities...)

	// After Complete: the stand-in, once it trusts only the new client CAs, refuses the
	// credential minted before Start; the other works on.
	require.Eventually(t, func() bool { return !m.revoked().IsZero() }, 2*time.Minute, time.Second,
		"the client CA bundle drops the old front-proxy-client CA")
	require.Eventually(t, func() bool {
		_, _, _, _, last := oldClient.results(time.Time{})
		return last != nil
	}, 2*time.Minute, 500*time.Millisecond, "the credential minted before Start is refused after Complete")
	newTotal, _, _, _, _ := newClient.results(time.Time{})
	require.Eventually(t, func() bool {
		total, _, _, _, last := newClient.results(time.Time{})
		return total > newTotal+5 && last == nil
	}, time.Minute, 200*time.Millisecond, "the credential minted after Start works after Complete")
	cancel()
	wg.Wait()

	total, ok, failed, first, _ := oldClient.results(m.revoked())
	t.Logf("minted before Start: %d requests, %d answered", total, ok)
	assert.Zero(t, failed, "the credential minted before Start failed before Complete dropped its CA: %v", first)
	total, ok, failed, first, _ = newClient.results(time.Time{})
	t.Logf("minted after Start: %d requests, %d answered", total, ok)
	assert.Zero(t, failed, "the credential minted after Start failed: %v", first)

	// The old slots are gone; the serving certificate comes from the new server CA.
	for _, ca := range []string{"root-server-ca", "root-client-ca", "root-front-proxy-client-ca"} {
		assert.Eventually(t, func() bool {
			out, err := stack.Kubectl(t.Context(), "get", "secret,certificate", "-n", ns, "--field-selector", "metadata.name="+ca, "-o", "name")
			return err == nil && strings.TrimSpace(out) == ""
		}, time.Minute, time.Second, "the old CA %s is deleted, its Certificate first", ca)
	}
	serving := certsIn(readSecret(t, stack, ns, "root-server", "tls.crt"))
	require.NotEmpty(t, serving)
	assert.NoError(t, serving[0].CheckSignatureFrom(secretCert(t, ns, "root-server-ca-next")), "the serving certificate comes from the new server CA")
	assert.Len(t, certsIn(readSecret(t, stack, ns, "root-merged-ca-bundle", "tls.crt")), 1, "the server CA bundle carries the new CA alone")
	assert.Empty(t, kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CARotation")].reason}`))
}

// TestRotationSurvivesARestart kills the server right after Start, while the rotation of a
// RootShard's client CA prepares, starts it again, and completes the rotation.
func TestRotationSurvivesARestart(t *testing.T) {
	s := onFaultStack(t)
	ns := namespace(t, "carestart")
	givenRootShard(t, ns, until("CertificatesReady", "Available"))
	oldCA := secretCert(t, ns, "root-client-ca")

	_, stderr, err := rotate(t, ns, "rootshards", "root", "Start", "client")
	require.NoError(t, err, stderr)
	s.KillServer()
	require.NoError(t, s.StartServer(t.Context()))
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, "client")
	// Complete before Prepared was refused; now it is taken.
	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", "client")
	require.NoError(t, err, stderr)
	s.KillServer()
	require.NoError(t, s.StartServer(t.Context()))
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, "client")

	newCA := secretCert(t, ns, "root-client-ca-next")
	assert.False(t, newCA.Equal(oldCA))
	require.Eventually(t, func() bool {
		bundle := certsIn(readSecret(t, s, ns, "root-merged-client-ca", "tls.crt"))
		for _, c := range bundle {
			if c.Equal(oldCA) {
				return false
			}
		}
		return len(bundle) == 2 // the new client CA and the front-proxy-client CA
	}, 2*time.Minute, time.Second, "the merged client CA drops the old client CA")
	leaf := certsIn(readSecret(t, s, ns, "root-client", "tls.crt"))
	require.NotEmpty(t, leaf)
	assert.NoError(t, leaf[0].CheckSignatureFrom(newCA), "the client leaf comes from the new CA")
	waitFor(t, ns, "rootshard/root", "Available")
	var rs operatorv1alpha1.RootShard
	require.NoError(t, json.Unmarshal([]byte(kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "json")), &rs))
	require.Len(t, rs.Status.Rotations, 1)
	st := rs.Status.Rotations[0]
	for name, ts := range map[string]*metav1.Time{"initiation": st.LastInitiationTime, "prepared": st.LastPreparedTime,
		"completion triggered": st.LastCompletionTriggeredTime, "completion": st.LastCompletionTime} {
		assert.NotNil(t, ts, "the %s time is recorded", name)
	}
}

// TestRotationWithThePlugin rotates a RootShard's requestheader-client CA and a CacheServer's
// CA with kubectl kcp-setups rotate, as an admin; an editor of the namespace may not rotate, and
// Complete before Start is a 409 that says why.
func TestRotationWithThePlugin(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "carplugin")
	kubectl(t, "create", "rolebinding", "setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=mallory")
	givenRootShard(t, ns, withObjects(cacheServerManifest("cache")))
	waitFor(t, ns, "cacheserver/cache", "Available")

	mallory, err := stack.UserKubeconfig("mallory")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		out, _, _ := stack.KubectlWith(t.Context(), mallory, "auth", "can-i", "update", "rootshards.operator.kcp.io/root", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the binding reaches the authorizer")
	_, stderr, err := stack.KubectlPlugin(t.Context(), mallory, "rotate", "rootshard/root", "-n", ns, "--phase", "start", "--ca", "client")
	require.Error(t, err)
	assert.Contains(t, stderr, "Error from server (Forbidden)", "editing a spec grants no rotation")
	assert.Contains(t, stderr, "rootshards/rotation")

	_, stderr, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "rotate", "rootshard/root", "-n", ns, "--phase", "complete", "--ca", "requestheader-client")
	require.Error(t, err)
	assert.Contains(t, stderr, "Error from server (Conflict)")
	assert.Contains(t, stderr, "no rotation of the requestheader-client CA was started")

	oldRequestHeader := secretCert(t, ns, "root-requestheader-client-ca")
	out, stderr, err := stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "rotate", "rootshard/root", "-n", ns, "--phase", "start", "--ca", "requestheader-client")
	require.NoError(t, err, stderr)
	assert.Regexp(t, `(?m)^requestheader-client +Preparing +`, out)
	out, stderr, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "rotate", "cacheserver/cache", "-n", ns, "--phase", "start", "--ca", "ca")
	require.NoError(t, err, stderr)
	assert.Regexp(t, `(?m)^ca +Preparing +`, out)

	// The pods trust the request-header CA through its trust bundle, with both CAs.
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, "requestheader-client")
	trust := certsIn(readSecret(t, stack, ns, "root-requestheader-client-ca-trust", "tls.crt"))
	require.Len(t, trust, 2)
	assert.True(t, trust[0].Equal(oldRequestHeader), "slot 0, the old CA, first")
	mounted := kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.template.spec.volumes[*].secret.secretName}")
	assert.Contains(t, mounted, "root-requestheader-client-ca-trust")
	leaf := certsIn(readSecret(t, stack, ns, "root-proxy-requestheader", "tls.crt"))
	require.NotEmpty(t, leaf)
	assert.NoError(t, leaf[0].CheckSignatureFrom(secretCert(t, ns, "root-requestheader-client-ca-next")), "the leaves come from the new CA once Prepared")

	require.Eventually(t, func() bool {
		out := kubectl(t, "get", "cacheserver", "cache", "-n", ns, "-o", "jsonpath={.status.rotations[0].phase}")
		return out == string(operatorv1alpha1.CARotationPrepared)
	}, 6*time.Minute, 2*time.Second, "the CacheServer's CA rotation is Prepared")
	assert.Len(t, certsIn(readSecret(t, stack, ns, "cache-client-ca", "tls.crt")), 2, "the cache server trusts both CAs")

	_, stderr, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "rotate", "rootshard/root", "-n", ns, "--phase", "complete", "--ca", "requestheader-client")
	require.NoError(t, err, stderr)
	_, stderr, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "rotate", "cacheserver/cache", "-n", ns, "--phase", "complete", "--ca", "ca")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, "requestheader-client")
	require.Eventually(t, func() bool {
		out := kubectl(t, "get", "cacheserver", "cache", "-n", ns, "-o", "jsonpath={.status.rotations[0].phase}")
		return out == string(operatorv1alpha1.CARotationCompleted)
	}, 6*time.Minute, 2*time.Second, "the CacheServer's CA rotation is Completed")
	newCache := secretCert(t, ns, "cache-ca-next")
	require.Eventually(t, func() bool {
		bundle := certsIn(readSecret(t, stack, ns, "cache-client-ca", "tls.crt"))
		return len(bundle) == 1 && bundle[0].Equal(newCache)
	}, 2*time.Minute, time.Second, "the cache server trusts the new CA alone")
	serving := certsIn(readSecret(t, stack, ns, "cache-server", "tls.crt"))
	require.NotEmpty(t, serving)
	assert.NoError(t, serving[0].CheckSignatureFrom(newCache), "the cache server serves from the new CA")
	require.Eventually(t, func() bool {
		return len(certsIn(readSecret(t, stack, ns, "root-requestheader-client-ca-trust", "tls.crt"))) == 1
	}, 2*time.Minute, time.Second, "the request-header trust bundle drops the old CA")
	waitFor(t, ns, "rootshard/root", "Available")
	waitFor(t, ns, "cacheserver/cache", "Available")
}

// TestRotationOfTheRootCA rotates a RootShard's root CA through Start and Complete: the
// intermediates are issued again under the new root with their keys, so that a credential
// minted before Start still verifies after Complete, and the old root is gone.
func TestRotationOfTheRootCA(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "carootca")
	givenRootShard(t, ns, until("CertificatesReady", "Available"))

	var minted kubeconfigResponse
	var stderr string
	var err error
	require.Eventually(t, func() bool {
		minted, stderr, err = mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
		return err == nil
	}, time.Minute, time.Second, "mint: %s", stderr)
	credential, _ := clientCertOf(t, []byte(minted.Status.Kubeconfig))
	oldRoot := secretCert(t, ns, "root-ca")
	intermediates := []string{"root-server-ca", "root-client-ca", "root-front-proxy-client-ca", "root-requestheader-client-ca",
		"root-service-account-ca", "root-etcd-client-ca", "root-etcd-peer-ca"}
	before := map[string]*x509.Certificate{}
	for _, ca := range intermediates {
		before[ca] = secretCert(t, ns, ca)
		require.NoError(t, before[ca].CheckSignatureFrom(oldRoot), "%s is signed by the root CA", ca)
	}

	out, stderr, err := rotate(t, ns, "rootshards", "root", "Start", "root")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, `"phase":"Preparing"`)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, "root")

	// Prepared: both roots are trusted where the root is, and every intermediate comes from
	// the new root, with its key and subject.
	newRoot := secretCert(t, ns, "root-ca-next")
	require.False(t, newRoot.Equal(oldRoot))
	assert.NotEqual(t, oldRoot.RawSubjectPublicKeyInfo, newRoot.RawSubjectPublicKeyInfo, "the new root has a new key")
	hasBoth := func(data []byte) bool {
		var old, next bool
		for _, c := range certsIn(data) {
			old, next = old || c.Equal(oldRoot), next || c.Equal(newRoot)
		}
		return old && next
	}
	assert.True(t, hasBoth(readSecret(t, stack, ns, "root-ca-trust", "tls.crt")), "the pods' root CA bundle carries both roots")
	assert.True(t, hasBoth(readSecret(t, stack, ns, "root-shard-join", "root-ca.crt")), "the shard-join reference carries both roots")
	assert.Contains(t, kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.template.spec.volumes[*].secret.secretName}"),
		"root-ca-trust")
	for _, ca := range intermediates {
		now := secretCert(t, ns, ca)
		assert.NoError(t, now.CheckSignatureFrom(newRoot), "%s is issued again under the new root", ca)
		assert.Equal(t, before[ca].RawSubjectPublicKeyInfo, now.RawSubjectPublicKeyInfo, "%s keeps its public key", ca)
		assert.Equal(t, before[ca].RawSubject, now.RawSubject, "%s keeps its subject", ca)
	}

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", "root")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, "root")
	// Completed says it is done, not that it will be: no waiting from here on.
	out, err = stack.Kubectl(t.Context(), "get", "secret,certificate", "-n", ns, "--field-selector", "metadata.name=root-ca", "-o", "name")
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(out), "once Completed, the old root CA is deleted")
	for _, c := range certsIn(readSecret(t, stack, ns, "root-ca-trust", "tls.crt")) {
		assert.False(t, c.Equal(oldRoot), "once Completed, the pods' root CA bundle has dropped the old root")
	}
	for _, c := range certsIn(readSecret(t, stack, ns, "root-shard-join", "root-ca.crt")) {
		assert.False(t, c.Equal(oldRoot), "once Completed, the shard-join reference has dropped the old root")
	}

	// After Complete: the credential minted before Start verifies against the client CA
	// bundle, and chains up to the new root through the re-issued front-proxy-client CA.
	_, err = credential.Verify(x509.VerifyOptions{Roots: certPool(t, readSecret(t, stack, ns, "root-merged-client-ca", "tls.crt")),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err, "the credential minted before Start verifies against the client CA bundle after Complete")
	inters := x509.NewCertPool()
	inters.AddCert(secretCert(t, ns, "root-front-proxy-client-ca"))
	_, err = credential.Verify(x509.VerifyOptions{Roots: certPool(t, readSecret(t, stack, ns, "root-ca-trust", "tls.crt")), Intermediates: inters,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err, "the credential minted before Start chains up to the new root")
	serving := certsIn(readSecret(t, stack, ns, "root-server", "tls.crt"))
	require.NotEmpty(t, serving)
	_, err = serving[0].Verify(x509.VerifyOptions{Roots: certPool(t, readSecret(t, stack, ns, "root-merged-ca-bundle", "tls.crt")),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err, "the serving certificate verifies against the server CA bundle")
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
	waitFor(t, ns, "rootshard/root", "Available")
}

// TestJoinedSetupFollowsARotation: a Shard in another namespace joined through a copy of
// the RootShard's shard-join Secret follows a rotation of the server and request-header
// client CAs, which its pods trust, as docs/rotation.md tells a sync tool to: the copy
// refreshed while the rotation is Prepared makes the joined pods trust both CAs; refreshed
// again once it is Completed, the new CA alone.
func TestJoinedSetupFollowsARotation(t *testing.T) {
	parallel(t, alone)
	a, b := namespace(t, "joinrot-a"), namespace(t, "joinrot-b")
	givenRootShard(t, a)
	kubectl(t, "apply", "-n", b, "-f", writeManifest(t, joinedShardManifest("shard-1", "root-shard-join")))
	copyReference(t, stack, a, "root-shard-join", stack, b)
	waitFor(t, b, "shard/shard-1", "Available")

	cas := []struct{ authority, source, trust string }{
		{"server", "root-server-ca", "shard-1-shard-root-server-ca-trust"},
		{"requestheader-client", "root-requestheader-client-ca", "shard-1-shard-root-requestheader-client-ca-trust"},
	}
	mounted := func() string {
		return kubectl(t, "get", "deployments", "-n", b, "-l", "operator.kcp.io/shard=shard-1", "-o",
			"jsonpath={.items[*].spec.template.spec.volumes[*].secret.secretName}")
	}
	// trusted are the CAs of a trust bundle of the joined shard.
	trusted := func(name string) []*x509.Certificate { return certsIn(readSecret(t, stack, b, name, "tls.crt")) }
	old := map[string]*x509.Certificate{}
	for _, ca := range cas {
		old[ca.authority] = secretCert(t, a, ca.source)
		assert.True(t, holdsAll(trusted(ca.trust), old[ca.authority]), "before the rotation, %s holds the %s CA alone", ca.trust, ca.authority)
		assert.Contains(t, strings.Fields(mounted()), ca.trust, "the joined shard's pods trust the %s CA by %s", ca.authority, ca.trust)
	}

	_, stderr, err := rotate(t, a, "rootshards", "root", "Start", "server", "requestheader-client")
	require.NoError(t, err, stderr)
	waitForRotation(t, a, "root", operatorv1alpha1.CARotationPrepared, "server", "requestheader-client")

	// Prepared: the sync tool copies the reference again, and the joined shard trusts both.
	for _, ca := range cas {
		assert.Len(t, certsIn(readSecret(t, stack, a, "root-shard-join", ca.authority+"-ca-trust.crt")), 2,
			"the reference Secret's %s-ca-trust.crt holds both CAs", ca.authority)
	}
	copyReference(t, stack, a, "root-shard-join", stack, b)
	next := map[string]*x509.Certificate{}
	for _, ca := range cas {
		next[ca.authority] = secretCert(t, a, ca.source+"-next")
		require.False(t, next[ca.authority].Equal(old[ca.authority]))
		assert.Eventually(t, func() bool { return holdsAll(trusted(ca.trust), old[ca.authority], next[ca.authority]) }, 2*time.Minute, time.Second,
			"while Prepared, %s holds the old and the new %s CA", ca.trust, ca.authority)
		assert.Contains(t, strings.Fields(mounted()), ca.trust)
	}
	// The request-header CA's Issuer moved to the new CA at Start, the server CA's moves at
	// Complete: the local Issuers sign from what the copy carries.
	assert.Eventually(t, func() bool {
		local := certsIn(readSecret(t, stack, b, "shard-1-shard-root-requestheader-client-ca", "tls.crt"))
		return len(local) > 0 && local[0].Equal(next["requestheader-client"])
	}, 2*time.Minute, time.Second, "the local request-header CA is the new one")
	assert.True(t, secretCert(t, b, "shard-1-shard-root-server-ca").Equal(old["server"]), "the local server CA is the old one until Complete")
	assert.Eventually(t, func() bool { return signedBy(t, b, "shard-1-mounts-proxy", next["requestheader-client"]) }, 2*time.Minute, time.Second,
		"the joined shard's mounts-proxy identity is issued again from the new request-header CA")
	waitFor(t, b, "shard/shard-1", "Available")

	_, stderr, err = rotate(t, a, "rootshards", "root", "Complete", "server", "requestheader-client")
	require.NoError(t, err, stderr)
	waitForRotation(t, a, "root", operatorv1alpha1.CARotationCompleted, "server", "requestheader-client")

	// Completed: once the reference Secret dropped the old CAs (the reconcile after the one
	// that said Completed writes it), copied once more, the joined shard trusts the new CAs
	// alone, and signs from the new server CA.
	for _, ca := range cas {
		require.Eventually(t, func() bool {
			return holdsAll(certsIn(readSecret(t, stack, a, "root-shard-join", ca.authority+"-ca-trust.crt")), next[ca.authority])
		}, 2*time.Minute, time.Second, "the reference Secret's %s-ca-trust.crt holds the new CA alone", ca.authority)
	}
	copyReference(t, stack, a, "root-shard-join", stack, b)
	for _, ca := range cas {
		assert.Eventually(t, func() bool { return holdsAll(trusted(ca.trust), next[ca.authority]) }, 2*time.Minute, time.Second,
			"once Completed, %s holds the new %s CA alone", ca.trust, ca.authority)
		assert.Contains(t, strings.Fields(mounted()), ca.trust)
	}
	assert.Eventually(t, func() bool {
		local := certsIn(readSecret(t, stack, b, "shard-1-shard-root-server-ca", "tls.crt"))
		return len(local) > 0 && local[0].Equal(next["server"])
	}, 2*time.Minute, time.Second, "the local server CA is the new one")
	assert.Eventually(t, func() bool { return signedBy(t, b, "shard-1-server", next["server"]) }, 2*time.Minute, time.Second,
		"the joined shard's serving certificate is issued again from the new server CA")
	waitFor(t, b, "shard/shard-1", "Available")
}

// signedBy reports whether the first certificate of the Secret name in ns is signed by ca;
// false while the Secret is missing, as when a stale leaf is issued again.
func signedBy(t *testing.T, ns, name string, ca *x509.Certificate) bool {
	return signedByOn(t, stack, ns, name, ca)
}
