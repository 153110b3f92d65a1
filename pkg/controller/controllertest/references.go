package controllertest

import (
	"crypto/x509/pkix"
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// Installation is a RootShard and a CacheServer of another namespace (kcp-system/root and
// kcp-system/cache), with real CA key pairs, whose reference Secrets a sync tool copied into
// team-a: what the consumers of a secretRef read.
type Installation struct {
	// Copies are the reference Secrets in team-a, by reference, each under its generated
	// name (root-shard-join, cache-cache-client, ...).
	Copies map[reference.Reference]*corev1.Secret
	// CAs are the RootShard's CAs the copies were made of; CacheCA and CacheClient the
	// CacheServer's CA certificate and the client certificate and key its copy carries.
	CAs         reference.RootShardCAs
	CacheCA     []byte
	CacheClient reference.KeyPair
}

// The installation's addresses, as the copies carry them.
const (
	InstallationRootShardURL = "https://root.kcp-system.example.com:6443"
	InstallationExternalHost = "kcp.example.com"
)

// NewInstallation builds the reference Secrets of kcp-system/root and kcp-system/cache with
// the reference package's builders, from CAs with real keys (each intermediate's tls.crt
// chained to the root CA, as cert-manager writes it), and copies them into team-a.
func NewInstallation(t *testing.T) *Installation {
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "kcp-system"},
		Spec: operatorv1alpha1.RootShardSpec{CommonShardSpec: operatorv1alpha1.CommonShardSpec{ShardBaseURL: InstallationRootShardURL},
			External: operatorv1alpha1.ExternalConfig{Hostname: InstallationExternalHost, Port: 8443}}}
	cas := referencetest.CAs(t)
	built, err := reference.ForRootShard(rs, cas)
	require.NoError(t, err)

	in := &Installation{Copies: map[reference.Reference]*corev1.Secret{}, CAs: cas}
	for _, s := range built {
		in.Copies[reference.Reference(s.Labels[reference.Label])] = Copied(s)
	}
	cacheCA, cacheCAKey := credentialstest.NewCA(t, "cache-ca")
	ca, err := credentials.ParseCA(cacheCA, cacheCAKey)
	require.NoError(t, err)
	client, err := ca.Mint(pkix.Name{CommonName: "cache-client"}, time.Now(), time.Hour)
	require.NoError(t, err)
	in.CacheCA, in.CacheClient = cacheCA, reference.KeyPair{Cert: client.CertPEM, Key: client.KeyPEM}
	cs := cacheserver.CacheServer{CacheServer: &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "kcp-system"}}}
	in.Copies[reference.CacheClient] = Copied(reference.ForCacheServer(cs, cacheCA, in.CacheClient))
	return in
}

// Copied is what a sync tool writes into team-a from a reference Secret the server built:
// its type, its data and the reference label, nothing else of its metadata.
func Copied(s *corev1ac.SecretApplyConfiguration) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: *s.Name, Namespace: "team-a", ResourceVersion: "1",
			Labels: map[string]string{reference.Label: s.Labels[reference.Label]}},
		Type: *s.Type,
		Data: maps.Clone(s.Data),
	}
}

// PutReference writes a copy into team-a, in the host cluster (the fake clientset, which the
// controllers GET only to tell a Secret without the label from none) and as the host's cache
// of copies sees it: the informer selects the Secrets labelled operator.kcp.io/reference, so
// a Secret without the label is not (or no longer) in it.
func (h *Host) PutReference(t *testing.T, s *corev1.Secret) {
	t.Helper()
	h.PutSecret(t, s)
	if _, labelled := s.Labels[reference.Label]; !labelled {
		require.NoError(t, h.Caches[string(controller.ReferenceSecrets)].Delete(s))
		return
	}
	require.NoError(t, h.Caches[string(controller.ReferenceSecrets)].Update(s.DeepCopy()))
}

// PutSecret writes s into the host cluster (the fake clientset's tracker, so that it is no
// write of the controllers') and nowhere else: what a user created, which no cache of the
// controllers selects.
func (h *Host) PutSecret(t *testing.T, s *corev1.Secret) {
	t.Helper()
	gvr := corev1.SchemeGroupVersion.WithResource("secrets")
	if _, err := h.Kube.Tracker().Get(gvr, s.Namespace, s.Name); apierrors.IsNotFound(err) {
		require.NoError(t, h.Kube.Tracker().Add(s.DeepCopy()))
		return
	}
	require.NoError(t, h.Kube.Tracker().Update(gvr, s.DeepCopy(), s.Namespace))
}

// LocalCAs are the local CA Secrets, each behind an Issuer of the same name, that the
// consumer owner of kind writes from its copy of r.
func LocalCAs(kind, owner string, r reference.Reference) []string {
	var names []string
	for _, ca := range r.KeyPairs() {
		names = append(names, pki.CAName(reference.JoinedName(kind, owner), ca))
	}
	return names
}

// AssertJoined checks what the consumer owner of kind wrote from its copy of r: each local
// CA Secret (kubernetes.io/tls, the copy's key pair) behind a CA Issuer of its name, and the
// CA bundles, all owned by the consumer; and that every Certificate of the host is issued by
// a local CA.
func (in *Installation) AssertJoined(t *testing.T, h *Host, kind, owner string, r reference.Reference) {
	t.Helper()
	copyData := in.Copies[r].Data
	owned := func(labels map[string]string, what string) {
		assert.Equal(t, owner, labels[pki.OwnerLabel(kind)], "%s is owned by %s %s", what, kind, owner)
	}
	for _, ca := range r.KeyPairs() {
		name := pki.CAName(reference.JoinedName(kind, owner), ca)
		secret := h.Secret(t, "team-a", name)
		assert.Equal(t, corev1.SecretTypeTLS, secret.Type, name)
		owned(secret.Labels, name)
		assert.Equal(t, copyData[reference.CertKey(ca)], secret.Data[corev1.TLSCertKey], name)
		assert.Equal(t, copyData[reference.KeyKey(ca)], secret.Data[corev1.TLSPrivateKeyKey], name)

		obj, exists, err := h.Caches["issuers"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		require.True(t, exists, "no Issuer %s", name)
		issuer := obj.(*cmv1.Issuer)
		require.NotNil(t, issuer.Spec.CA, name)
		assert.Equal(t, name, issuer.Spec.CA.SecretName)
		owned(issuer.Labels, "Issuer "+name)
	}
	prefix := reference.JoinedName(kind, owner)
	bundles := map[string]string{"-merged-client-ca": reference.ClientCABundleKey, "-merged-ca-bundle": reference.ServerCABundleKey}
	for _, ca := range []pki.CA{pki.ServerCA, pki.RequestHeaderClientCA} {
		if slices.Contains(r.KeyPairs(), ca) {
			bundles[strings.TrimPrefix(pki.CAName(prefix, ca), prefix)+pki.TrustSuffix] = reference.TrustKey(ca)
		}
	}
	if r == reference.ShardJoin {
		bundles["-ca"] = reference.RootCAKey
	}
	for suffix, key := range bundles {
		secret := h.Secret(t, "team-a", prefix+suffix)
		assert.Equal(t, copyData[key], secret.Data[corev1.TLSCertKey], prefix+suffix)
		assert.NotContains(t, secret.Data, corev1.TLSPrivateKeyKey, "%s: certificates alone", prefix+suffix)
		owned(secret.Labels, prefix+suffix)
	}

	certs := h.Caches["certificates"].List()
	require.NotEmpty(t, certs)
	for _, o := range certs {
		c := o.(*cmv1.Certificate)
		assert.Equal(t, "Issuer", c.Spec.IssuerRef.Kind, c.Name)
		assert.Contains(t, LocalCAs(kind, owner, r), c.Spec.IssuerRef.Name, "Certificate %s is issued by a local CA", c.Name)
	}
}

// LocalTrust are the trust bundles <ca>-trust the consumer owner of kind writes from its copy
// of r, which its pods mount where they trust a CA (pki.TrustSecretOf).
func LocalTrust(kind, owner string, r reference.Reference) []string {
	var names []string
	for _, ca := range []pki.CA{pki.ServerCA, pki.RequestHeaderClientCA} {
		if slices.Contains(r.KeyPairs(), ca) {
			names = append(names, pki.CAName(reference.JoinedName(kind, owner), ca)+pki.TrustSuffix)
		}
	}
	return names
}

// AssertTrustMounted checks that no pod of d mounts a local CA Secret of the consumer owner
// of kind (its key pair is the local Issuer's alone), and that the pods trust the local CAs
// through their trust bundles (LocalTrust), each volume projecting tls.crt alone.
func AssertTrustMounted(t *testing.T, d *appsv1.Deployment, kind, owner string, r reference.Reference) {
	t.Helper()
	keyPairs := LocalCAs(kind, owner, r)
	for _, name := range workloadSecrets(d) {
		assert.NotContains(t, keyPairs, name, "the pods mount the key pair Secret %s", name)
	}
	assertOnlyCertsMounted(t, d, LocalTrust(kind, owner, r))
}

// workloadSecrets are the Secrets the pods of d mount, as volumes or projected.
func workloadSecrets(d *appsv1.Deployment) []string {
	var out []string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					out = append(out, src.Secret.Name)
				}
			}
		}
	}
	return out
}

// assertOnlyCertsMounted checks that every volume of d that mounts one of the Secrets cas
// projects its tls.crt alone, so that no CA key enters a pod, and that at least one does.
func assertOnlyCertsMounted(t *testing.T, d *appsv1.Deployment, cas []string) {
	t.Helper()
	mounted := 0
	for _, v := range d.Spec.Template.Spec.Volumes {
		var names []string
		var items [][]corev1.KeyToPath
		if v.Secret != nil {
			names, items = append(names, v.Secret.SecretName), append(items, v.Secret.Items)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					names, items = append(names, src.Secret.Name), append(items, src.Secret.Items)
				}
			}
		}
		for i, name := range names {
			if !slices.Contains(cas, name) {
				continue
			}
			mounted++
			assert.Equal(t, []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey}}, items[i],
				"volume %s mounts the CA Secret %s: tls.crt alone", v.Name, name)
		}
	}
	assert.NotZero(t, mounted, "the pods trust the local CAs' certificates")
}

// keyMaterial are the installation's private keys: as PEM, as base64 of the PEM, and each
// line of their base64 body, and the PEM header's words.
func (in *Installation) keyMaterial() []string {
	var keys [][]byte
	for _, kp := range in.CAs.KeyPairs {
		keys = append(keys, kp.Key)
	}
	keys = append(keys, in.CacheClient.Key)
	out := []string{"PRIVATE KEY"}
	for _, k := range keys {
		out = append(out, string(k), base64.StdEncoding.EncodeToString(k))
		for _, line := range strings.Split(string(k), "\n") {
			if len(line) > 16 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// AssertNoKeyMaterial checks that no private key of the installation is in the conditions'
// messages or in the Events.
func (in *Installation) AssertNoKeyMaterial(t *testing.T, conditions []metav1.Condition, events []string) {
	t.Helper()
	said := slices.Clone(events)
	for _, c := range conditions {
		said = append(said, c.Message)
	}
	for _, key := range in.keyMaterial() {
		for _, s := range said {
			assert.NotContains(t, s, key)
		}
	}
}

// Events drains the Events recorded so far.
func Events(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// AssertCacheKubeconfig checks that the root shard or shard owner of kind wrote name, a
// kubeconfig toward the cache server of the installation's cache-client copy (its URL, CA
// and client certificate), and that its Deployment mounts it and passes --cache-kubeconfig.
func (in *Installation) AssertCacheKubeconfig(t *testing.T, h *Host, kind, owner, name string) {
	t.Helper()
	secret := h.Secret(t, "team-a", name)
	assert.Equal(t, owner, secret.Labels[pki.OwnerLabel(kind)], "%s is owned by %s %s", name, kind, owner)
	cfg, err := clientcmd.Load(secret.Data["kubeconfig"])
	require.NoError(t, err)
	cluster, user := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster], cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	require.NotNil(t, cluster)
	require.NotNil(t, user)
	copyData := in.Copies[reference.CacheClient].Data
	assert.Equal(t, string(copyData[reference.CacheURLKey]), cluster.Server)
	assert.Equal(t, in.CacheCA, cluster.CertificateAuthorityData)
	assert.Equal(t, in.CacheClient.Cert, user.ClientCertificateData)
	assert.Equal(t, in.CacheClient.Key, user.ClientKeyData)

	// The kcp server's Deployment: a RootShard's internal front proxy has its own.
	var deployments []*appsv1.Deployment
	for _, o := range h.Caches["deployments"].List() {
		if d := o.(*appsv1.Deployment); strings.HasSuffix(d.Name, "-kcp") {
			deployments = append(deployments, d)
		}
	}
	require.Len(t, deployments, 1, "the kcp server's Deployments")
	pod := deployments[0].Spec.Template.Spec
	assert.True(t, slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == name }),
		"the pods mount %s", name)
	var args []string
	for _, c := range pod.Containers {
		args = append(args, c.Args...)
	}
	assert.True(t, slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--cache-kubeconfig=") }), "args: %v", args)
}

// CopyAs is the installation's copy of r under another name, such as a copy of another kind
// of reference Secret under the name a consumer expects.
func (in *Installation) CopyAs(r reference.Reference, name string) *corev1.Secret {
	s := in.Copies[r].DeepCopy()
	s.Name = name
	return s
}

// AssertReferenceInvalid checks that conditions say ReferenceValid=False for reason, naming
// the Secret team-a/secret.
func AssertReferenceInvalid(t *testing.T, conditions []metav1.Condition, reason, secret string) {
	t.Helper()
	ref := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionReferenceValid)
	require.NotNil(t, ref, "conditions: %+v", conditions)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, reason, ref.Reason)
	assert.Contains(t, ref.Message, "team-a/"+secret)
}

// Unlabelled is s without the reference label, as a user who copied it by hand may leave
// it: a Secret the cache of copies does not hold.
func Unlabelled(s *corev1.Secret) *corev1.Secret {
	s = s.DeepCopy()
	delete(s.Labels, reference.Label)
	return s
}

// AssertReferenceNotLabelled checks that conditions say ReferenceValid=False because the
// Secret team-a/secret is there without the reference label, with the command that labels it
// as a copy of r, and that Available waits for it.
func AssertReferenceNotLabelled(t *testing.T, conditions []metav1.Condition, secret string, r reference.Reference) {
	t.Helper()
	AssertReferenceInvalid(t, conditions, operatorv1alpha1.ReasonReferenceSecretNotLabelled, secret)
	ref := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, "Secret team-a/"+secret+" exists but is not labelled operator.kcp.io/reference, and the server reads only labelled copies: "+
		"kubectl label secret "+secret+" -n team-a operator.kcp.io/reference="+string(r), ref.Message)
	if available := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionAvailable); assert.NotNil(t, available) {
		assert.Equal(t, metav1.ConditionFalse, available.Status)
	}
}

// AssertKubeconfigServer checks that every cluster of the kubeconfig in secret is at url.
func AssertKubeconfigServer(t *testing.T, secret *corev1.Secret, url string) {
	t.Helper()
	cfg, err := clientcmd.Load(secret.Data["kubeconfig"])
	require.NoError(t, err)
	require.NotEmpty(t, cfg.Clusters)
	for _, cluster := range cfg.Clusters {
		assert.Equal(t, url, cluster.Server, secret.Name)
	}
}
