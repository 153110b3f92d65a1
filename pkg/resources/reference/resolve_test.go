package reference

import (
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// realCAs are a RootShard's CAs as cert-manager writes them, with real keys: each
// intermediate's tls.crt is its own certificate followed by the root CA's.
func realCAs(t *testing.T) RootShardCAs {
	rootCA, _ := credentialstest.NewCA(t, "root-ca")
	cas := RootShardCAs{RootCA: rootCA, KeyPairs: map[pki.CA]KeyPair{}}
	for _, ca := range pki.IntermediateCAs {
		cert, key := credentialstest.NewCA(t, string(ca))
		cas.KeyPairs[ca] = KeyPair{Cert: append(cert, rootCA...), Key: key}
	}
	first := func(ca pki.CA) []byte {
		b, err := pki.FirstCertificate(cas.KeyPairs[ca].Cert)
		require.NoError(t, err)
		return b
	}
	extra, _ := credentialstest.NewCA(t, "users-extra-client-ca")
	cas.Bundles = rootshard.CABundles{ServerCA: first(pki.ServerCA), ClientCA: first(pki.ClientCA),
		FrontProxyClientCA: first(pki.FrontProxyClientCA), ExtraClientCAs: extra}
	return cas
}

// leaf is a client certificate (not a CA) and its key, issued by a fresh CA.
func leaf(t *testing.T, cn string) KeyPair {
	caCert, caKey := credentialstest.NewCA(t, cn+"-issuer")
	ca, err := credentials.ParseCA(caCert, caKey)
	require.NoError(t, err)
	m, err := ca.Mint(pkix.Name{CommonName: cn}, time.Now(), time.Hour)
	require.NoError(t, err)
	return KeyPair{Cert: m.CertPEM, Key: m.KeyPEM}
}

// copied is the Secret a sync tool writes from a builder's output into namespace b: type,
// data and the reference label, plus metadata of its own.
func copied(s *corev1ac.SecretApplyConfiguration) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: *s.Name, Namespace: "b", Labels: map[string]string{Label: s.Labels[Label]},
			Annotations: map[string]string{"sync.example.com/source": "team-a/" + *s.Name}},
		Type: *s.Type,
		Data: maps.Clone(s.Data),
	}
}

// wellFormed are the four reference Secrets, built by the package's builders from real CAs
// and copied into namespace b.
func wellFormed(t *testing.T) map[Reference]*corev1.Secret {
	rs := testRootShard()
	built, err := ForRootShard(rs, realCAs(t))
	require.NoError(t, err)
	out := map[Reference]*corev1.Secret{}
	for i, r := range RootShardReferences {
		out[r] = copied(built[i])
	}
	caCert, _ := credentialstest.NewCA(t, "cache-ca")
	out[CacheClient] = copied(ForCacheServer(testCacheServer(), caCert, leaf(t, "cache-client")))
	return out
}

var allReferences = append(slices.Clone(RootShardReferences), CacheClient)

func TestResolveWellFormed(t *testing.T) {
	secrets := wellFormed(t)
	for _, r := range allReferences {
		t.Run(string(r), func(t *testing.T) {
			s := secrets[r]
			// Sync tools add keys and annotations of their own; Resolve reads r's keys alone,
			// so an extra key grants nothing and is no reason to refuse the copy.
			s.Data["sync.example.com-checksum"] = []byte("not PEM, not a URL")
			res, err := Resolve(s, r)
			require.NoError(t, err)
			assert.Equal(t, r, res.Reference)
			assert.ElementsMatch(t, r.KeyPairs(), slices.Collect(maps.Keys(res.CAs)), "every key pair, and no other")
			for ca, kp := range res.CAs {
				assert.Equal(t, s.Data[CertKey(ca)], kp.PEM.Cert, "%s as received, chain included", ca)
				assert.Equal(t, s.Data[KeyKey(ca)], kp.PEM.Key, ca)
				assert.Equal(t, string(ca), kp.Cert.Subject.CommonName)
				assert.Equal(t, s.Data[TrustKey(ca)], res.Trust[ca].PEM, "%s: the bundle of its live slots as received", ca)
				require.Len(t, res.Trust[ca].Certs, 1, "%s: not rotating, the CA alone", ca)
				assert.True(t, res.Trust[ca].Certs[0].Equal(kp.Cert), ca)
			}
			switch r {
			case CacheClient:
				assert.Equal(t, testCacheServer().URL(), res.CacheURL.String())
				assert.Equal(t, "cache-ca", res.CACert.Certs[0].Subject.CommonName)
				assert.Equal(t, "cache-client", res.Client.Cert.Subject.CommonName)
				assert.Equal(t, s.Data[ClientKeyKey], res.Client.PEM.Key)
				assert.Nil(t, res.RootShardURL)
			default:
				assert.Equal(t, "https://root-kcp.team-a.svc.cluster.local:6443", res.RootShardURL.String())
				assert.Equal(t, "https://kcp.example.com:6443", res.ExternalURL.String())
				assert.Equal(t, s.Data[ServerCABundleKey], res.ServerCABundle.PEM)
				assert.Nil(t, res.CacheURL)
			}
			if r == ShardJoin {
				assert.Equal(t, "https://kcp.internal.example.com:8443", res.ExternalAdminURL.String())
				assert.Equal(t, "root-ca", res.RootCA.Certs[0].Subject.CommonName)
				assert.Len(t, res.ClientCABundle.Certs, 3, "client, front-proxy-client and the extra client CA")
			}
		})
	}
}

// secretPEM is a private key's PEM with recognizable text in it: no message may quote it.
const secretPEM = "-----BEGIN EC PRIVATE KEY-----\nU0VDUkVUS0VZTUFURVJJQUxkb25vdGxlYWs=\n-----END EC PRIVATE KEY-----\n"

// requireInvalid checks that err is a ReferenceSecretInvalid *Error of cause about s that
// says want, and that it quotes none of s's content.
func requireInvalid(t *testing.T, err error, s *corev1.Secret, cause error, want string) {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, e.Reason)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "Secret b/"+s.Name+" "+want, e.Message)
	assert.NotContains(t, e.Message, "-----")
	for k, v := range s.Data {
		for _, line := range strings.Split(string(v), "\n") {
			if len(line) >= 16 {
				assert.NotContains(t, e.Message, line, "the message quotes %s", k)
			}
		}
	}
}

// keysEndingIn are r's keys with the suffix: ".crt" for certificates, ".key" for private keys.
func keysEndingIn(r Reference, suffix string) []string {
	var out []string
	for _, k := range r.Keys() {
		if strings.HasSuffix(k, suffix) {
			out = append(out, k)
		}
	}
	return out
}

// One case per failure, for every key of every kind it applies to.
func TestResolveRefuses(t *testing.T) {
	type failure struct {
		name   string
		break_ func(s *corev1.Secret)
		cause  error
		want   string
	}
	var cases []struct {
		r Reference
		failure
	}
	add := func(r Reference, f failure) {
		cases = append(cases, struct {
			r Reference
			failure
		}{r, f})
	}
	other := leaf(t, "other")
	for _, r := range allReferences {
		for _, k := range r.Keys() {
			add(r, failure{"no " + k, func(s *corev1.Secret) { delete(s.Data, k) }, ErrMissingKey, `has no key "` + k + `"`})
			add(r, failure{"empty " + k, func(s *corev1.Secret) { s.Data[k] = nil }, ErrMissingKey, `has an empty key "` + k + `"`})
		}
		for _, k := range keysEndingIn(r, ".crt") {
			add(r, failure{"no PEM in " + k, func(s *corev1.Secret) { s.Data[k] = []byte("just text, long enough to be seen") }, ErrMalformed, `key "` + k + `" holds no PEM certificate`})
			add(r, failure{"bad DER in " + k, func(s *corev1.Secret) { s.Data[k] = pemOf("CERTIFICATE", "not DER, long enough to be seen") }, ErrMalformed,
				`key "` + k + `": its certificate #1 does not parse`})
			add(r, failure{"bad DER in the chain of " + k, func(s *corev1.Secret) { s.Data[k] = append(s.Data[k], pemOf("CERTIFICATE", "not DER either")...) }, ErrMalformed,
				fmt.Sprintf("key %q: its certificate #%d does not parse", k, 1+strings.Count(string(wellFormedOnce(t)[r].Data[k]), "BEGIN CERTIFICATE"))})
			add(r, failure{"a private key in " + k, func(s *corev1.Secret) { s.Data[k] = append(s.Data[k], secretPEM...) }, ErrMalformed,
				`key "` + k + `" holds a PEM block of type "EC PRIVATE KEY" where only certificates belong`})
			add(r, failure{"text after " + k, func(s *corev1.Secret) { s.Data[k] = append(s.Data[k], "trailing text, long enough"...) }, ErrMalformed,
				`key "` + k + `" holds text after its PEM certificates`})
		}
		for _, k := range keysEndingIn(r, ".key") {
			certKey := strings.TrimSuffix(k, ".key") + ".crt"
			if k == ClientKeyKey {
				certKey = ClientCertKey
			}
			add(r, failure{"PEM text that is no key in " + k, func(s *corev1.Secret) { s.Data[k] = []byte(secretPEM) }, ErrMalformed, `key "` + k + `" holds no private key that parses`})
			add(r, failure{"no PEM in " + k, func(s *corev1.Secret) { s.Data[k] = []byte("U0VDUkVUS0VZTUFURVJJQUxkb25vdGxlYWs=") }, ErrMalformed, `key "` + k + `" holds no private key that parses`})
			add(r, failure{"another key in " + k, func(s *corev1.Secret) { s.Data[k] = other.Key }, ErrKeyMismatch,
				`key "` + k + `" is not the private key of the certificate in "` + certKey + `"`})
		}
		for _, ca := range r.KeyPairs() {
			add(r, failure{"a leaf as " + string(ca), func(s *corev1.Secret) { s.Data[CertKey(ca)], s.Data[KeyKey(ca)] = other.Cert, other.Key }, ErrNotCA,
				`key "` + CertKey(ca) + `" holds a certificate that is not a CA`})
		}
		for _, k := range []string{RootShardURLKey, ExternalURLKey, ExternalAdminURLKey, CacheURLKey} {
			if !slices.Contains(r.Keys(), k) {
				continue
			}
			for _, bad := range []string{"http://kcp.example.com:6443", "kcp.example.com:6443", "https://", "https://user:pass@kcp.example.com", secretPEM} {
				add(r, failure{"no https URL in " + k + ": " + bad, func(s *corev1.Secret) { s.Data[k] = []byte(bad) }, ErrMalformed, `key "` + k + `" holds no https URL`})
			}
		}
	}
	// The trust bundles are optional (copies made before them lack them), but one that is
	// there is checked as a certificate key, and must hold the CA of its key pair.
	for _, r := range RootShardReferences {
		for _, ca := range r.KeyPairs() {
			k, another := TrustKey(ca), pki.ServerCA
			if ca == pki.ServerCA {
				another = pki.ClientCA
			}
			add(r, failure{"empty " + k, func(s *corev1.Secret) { s.Data[k] = nil }, ErrMissingKey, `has an empty key "` + k + `"`})
			add(r, failure{"a private key in " + k, func(s *corev1.Secret) { s.Data[k] = append(s.Data[k], secretPEM...) }, ErrMalformed,
				`key "` + k + `" holds a PEM block of type "EC PRIVATE KEY" where only certificates belong`})
			add(r, failure{"a leaf in " + k, func(s *corev1.Secret) { s.Data[k] = append(s.Data[k], other.Cert...) }, ErrNotCA,
				`key "` + k + `": its certificate #2 is not a CA`})
			add(r, failure{"another CA alone in " + k, func(s *corev1.Secret) {
				first, err := pki.FirstCertificate(wellFormedOnce(t)[ShardJoin].Data[CertKey(another)])
				require.NoError(t, err)
				s.Data[k] = first
			}, ErrMalformed, `key "` + k + `" does not hold the CA of "` + CertKey(ca) + `"`})
		}
	}
	add(ShardJoin, failure{"a leaf as the root CA", func(s *corev1.Secret) { s.Data[RootCAKey] = other.Cert }, ErrNotCA, `key "root-ca.crt" holds a certificate that is not a CA`})
	add(CacheClient, failure{"a leaf as the cache CA", func(s *corev1.Secret) { s.Data[CACertKey] = other.Cert }, ErrNotCA, `key "ca.crt" holds a certificate that is not a CA`})
	for _, typ := range []corev1.SecretType{KubeconfigIssuer.Type(), corev1.SecretTypeOpaque, corev1.SecretTypeTLS, ""} {
		add(ShardJoin, failure{"type " + string(typ), func(s *corev1.Secret) { s.Type = typ }, ErrWrongType,
			`is of type "` + string(typ) + `", not "operator.kcp.io/shard-join"`})
	}

	for _, c := range cases {
		t.Run(string(c.r)+"/"+c.name, func(t *testing.T) {
			s := wellFormedOnce(t)[c.r].DeepCopy()
			c.break_(s)
			res, err := Resolve(s, c.r)
			assert.Nil(t, res)
			requireInvalid(t, err, s, c.cause, c.want)
		})
	}
}

// A kubeconfig-issuer Secret named where a shard-join one is expected is refused by its type,
// before its keys are looked at.
func TestResolveRefusesAnotherKindOfReference(t *testing.T) {
	secrets := wellFormedOnce(t)
	for _, r := range allReferences {
		for _, want := range allReferences {
			if r == want {
				continue
			}
			_, err := Resolve(secrets[r], want)
			requireInvalid(t, err, secrets[r], ErrWrongType, `is of type "`+string(r.Type())+`", not "`+string(want.Type())+`"`)
		}
	}
}

func TestResolveNotFound(t *testing.T) {
	_, err := Resolve(nil, ShardJoin)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotFound, e.Reason)
	assert.ErrorIs(t, err, ErrNotFound)

	e = NotFound("b", "root-shard-join")
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotFound, e.Reason)
	assert.Equal(t, "Secret b/root-shard-join not found", e.Error())
	assert.True(t, errors.Is(e, ErrNotFound))

	_, err = Resolve(wellFormedOnce(t)[ShardJoin], Reference("no-such-reference"))
	require.Error(t, err)
	assert.False(t, errors.As(err, &e), "an unknown reference is the caller's bug, not the Secret's")
}

var wellFormedCache map[Reference]*corev1.Secret

// wellFormedOnce is wellFormed, built once: the refusal cases only read it (through DeepCopy).
func wellFormedOnce(t *testing.T) map[Reference]*corev1.Secret {
	if wellFormedCache == nil {
		wellFormedCache = wellFormed(t)
	}
	return wellFormedCache
}

// A copy of a rotating CA carries both CAs in its trust bundle, the key pair's being one of
// them, whichever the Issuer signs from.
func TestResolveTrustsBothSlotsOfARotatingCA(t *testing.T) {
	cas := realCAs(t)
	next, _ := credentialstest.NewCA(t, "server-next")
	own, err := pki.FirstCertificate(cas.KeyPairs[pki.ServerCA].Cert)
	require.NoError(t, err)
	for _, bundle := range [][]byte{append(slices.Clone(own), next...), append(slices.Clone(next), own...)} {
		cas.Trust = map[pki.CA][]byte{pki.ServerCA: bundle}
		built, err := ForRootShard(testRootShard(), cas)
		require.NoError(t, err)
		for i, r := range []Reference{ShardJoin, FrontProxyJoin} {
			s := copied(built[i])
			assert.Equal(t, bundle, s.Data[TrustKey(pki.ServerCA)], r)
			res, err := Resolve(s, r)
			require.NoError(t, err, r)
			var cns []string
			for _, c := range res.Trust[pki.ServerCA].Certs {
				cns = append(cns, c.Subject.CommonName)
			}
			assert.ElementsMatch(t, []string{"server", "server-next"}, cns, r)
			assert.Len(t, res.Trust[pki.ClientCA].Certs, 1, "%s: a CA that does not rotate is trusted alone", r)
		}
	}
}

// A copy made before the trust bundles existed still resolves: each CA's trust is the CA of
// its key pair alone.
func TestResolveACopyWithoutTrustBundles(t *testing.T) {
	for _, r := range RootShardReferences {
		s := wellFormedOnce(t)[r].DeepCopy()
		for _, k := range r.TrustKeys() {
			require.Contains(t, s.Data, k)
			delete(s.Data, k)
		}
		res, err := Resolve(s, r)
		require.NoError(t, err, r)
		for ca, kp := range res.CAs {
			first, err := pki.FirstCertificate(kp.PEM.Cert)
			require.NoError(t, err)
			assert.Equal(t, string(first), string(res.Trust[ca].PEM), "%s: %s alone", r, ca)
			require.Len(t, res.Trust[ca].Certs, 1)
			assert.True(t, res.Trust[ca].Certs[0].Equal(kp.Cert))
		}
	}
}
