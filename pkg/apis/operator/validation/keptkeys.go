package validation

import (
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// The certificates that keep their key when cert-manager renews them (docs/PKI.md): every CA,
// whose key everything it signed and every bundle that trusts it depend on, and the
// service-account signing leaves, whose key the components verify tokens by. Only a two-phase
// rotation (the rotation subresource, docs/rotation.md) gives them a new key. Their templates'
// keys are these, in the kind's certificateRoles.
var (
	rootShardKeptKeys = append([]string{pki.RootCATemplateKey, string(pki.ServiceAccountCA), pki.LinkCA.TemplateKey()}, intermediateCAKeys()...)
	shardKeptKeys     = []string{string(pki.ServiceAccountCA)}
	// A CacheServer's CA is templated as "ca" or as kcp-operator's "root-ca", one of them.
	cacheServerKeptKeys = []string{"ca", "root-ca"}
)

func intermediateCAKeys() []string {
	keys := make([]string, 0, len(pki.IntermediateCAs))
	for _, ca := range pki.IntermediateCAs {
		keys = append(keys, ca.TemplateKey())
	}
	return keys
}

// keptKeyRotation says how a kept key changes instead, in each refusal.
const keptKeyRotation = "a CA's key (and a service-account signing key) changes only through a two-phase rotation, " +
	"which needs create on rootshards/rotation or cacheservers/rotation (docs/rotation.md)"

// validateKeptKeys holds the templates of the certificates that keep their key (roles.keepsKey)
// to it: their rotationPolicy may only be Never, and on update (old points to the stored
// object's templates; it is nil on create) their key's algorithm, size and encoding may not change.
// Otherwise cert-manager would issue the CA again with a new key at once, outside the
// two-phase rotation, and every certificate it signed, and every token signed by a signing
// key, would stop verifying (with rotationPolicy Never, cert-manager would instead stop
// renewing it). An update that keeps a stored rotationPolicy passes, so that an object
// stored before this rule is not refused an unrelated edit.
func validateKeptKeys(templates operator.CertificateTemplateMap, old *operator.CertificateTemplateMap, roles certificateRoles, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, key := range roles.keepsKey {
		tmpl, ok := templates[key]
		if !ok || tmpl.Spec == nil || tmpl.Spec.PrivateKey == nil {
			continue
		}
		keyPath := fldPath.Key(key).Child("spec", "privateKey")
		policy := tmpl.Spec.PrivateKey.RotationPolicy
		if policy == "" || policy == string(cmv1.RotationPolicyNever) {
			continue
		}
		if old != nil {
			if prev := keptKeyTemplate(*old, key, roles); prev != nil && prev.RotationPolicy == policy {
				continue
			}
		}
		allErrs = append(allErrs, field.Invalid(keyPath.Child("rotationPolicy"), policy,
			"must be Never (or unset): this certificate keeps its key when it is renewed, and what it signed depends on that key; "+keptKeyRotation))
	}
	if old == nil {
		return allErrs
	}
	seen := map[string]bool{}
	for _, key := range roles.keepsKey {
		names := aliasesOf(key, roles)
		if seen[names[0]] {
			continue
		}
		seen[names[0]] = true
		// Adding, changing or removing the template of a kept key all count: removing it
		// brings back the defaults.
		at := slices.IndexFunc(names, func(k string) bool { _, ok := templates[k]; return ok })
		if at < 0 {
			at = slices.IndexFunc(names, func(k string) bool { _, ok := (*old)[k]; return ok })
		}
		if at < 0 {
			continue
		}
		now, was := keyOf(keptKeyTemplate(templates, key, roles)), keyOf(keptKeyTemplate(*old, key, roles))
		keyPath := fldPath.Key(names[at]).Child("spec", "privateKey")
		for _, f := range []struct {
			name     string
			now, was any
		}{
			{"algorithm", now.algorithm, was.algorithm},
			{"size", now.size, was.size},
			{"encoding", now.encoding, was.encoding},
		} {
			// The size follows the algorithm: a new algorithm is one refusal.
			if f.now != f.was && (f.name != "size" || now.algorithm == was.algorithm) {
				allErrs = append(allErrs, field.Forbidden(keyPath.Child(f.name), fmt.Sprintf(
					"may not change from %v to %v: cert-manager would give this certificate a new key at once (or stop renewing it), "+
						"breaking what it signed; %s, and keeps these settings", f.was, f.now, keptKeyRotation)))
			}
		}
	}
	return allErrs
}

// keptKeyTemplate is the private key template of the certificate that key templates: under
// key, or under its alias (a CacheServer's "ca" and "root-ca").
func keptKeyTemplate(templates operator.CertificateTemplateMap, key string, roles certificateRoles) *operator.CertificatePrivateKeyTemplate {
	for _, k := range aliasesOf(key, roles) {
		if t, ok := templates[k]; ok {
			if t.Spec == nil {
				return nil
			}
			return t.Spec.PrivateKey
		}
	}
	return nil
}

// aliasesOf are the keys that name key's certificate, in the order of roles.aliases: key
// alone, or both keys of its alias pair.
func aliasesOf(key string, roles certificateRoles) []string {
	for _, pair := range roles.aliases {
		if slices.Contains(pair[:], key) {
			return pair[:]
		}
	}
	return []string{key}
}

// privateKey is the key a template gives a certificate, with the builders' and cert-manager's
// defaults applied (pkg/resources/certificates: ECDSA P-256 in PKCS#8; an algorithm without a
// size has cert-manager's default size for it).
type privateKey struct {
	algorithm, encoding string
	size                int32
}

func keyOf(pk *operator.CertificatePrivateKeyTemplate) privateKey {
	key := privateKey{algorithm: string(pki.DefaultAlgorithm), size: int32(pki.DefaultKeySize), encoding: string(pki.DefaultKeyEncoded)}
	if pk == nil {
		return key
	}
	if pk.Algorithm != "" {
		key.algorithm = pk.Algorithm
		key.size = map[string]int32{string(cmv1.RSAKeyAlgorithm): 2048, string(cmv1.ECDSAKeyAlgorithm): 256}[pk.Algorithm]
	}
	if pk.KeySize != 0 {
		key.size = pk.KeySize
	}
	if key.algorithm == string(cmv1.Ed25519KeyAlgorithm) {
		key.size = 0
	}
	if pk.Encoding != "" {
		key.encoding = pk.Encoding
	}
	return key
}
