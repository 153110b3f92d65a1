package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// key is a certificate template that sets only the private key.
func key(algorithm string, size int32, encoding, policy string) operator.CertificateTemplate {
	return operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{PrivateKey: &operator.CertificatePrivateKeyTemplate{
		Algorithm: algorithm, KeySize: size, Encoding: encoding, RotationPolicy: policy}}}
}

func templatesOf(role string, t operator.CertificateTemplate) operator.CertificateTemplateMap {
	return operator.CertificateTemplateMap{role: t}
}

func keyField(role, name string) string {
	return field.NewPath("spec", "certificateTemplates").Key(role).Child("spec", "privateKey", name).String()
}

// validateKinds validates templates on each kind that has kept keys, on create (old nil) or
// on update from old.
var validateKinds = map[string]func(templates, old operator.CertificateTemplateMap) field.ErrorList{
	"RootShard": func(templates, old operator.CertificateTemplateMap) field.ErrorList {
		rs := validRootShard()
		rs.Spec.CertificateTemplates = templates
		if old == nil {
			return ValidateRootShard(rs)
		}
		rs.ObjectMeta = updatedObjectMeta("root")
		prev := validRootShard()
		prev.ObjectMeta, prev.Spec.CertificateTemplates = updatedObjectMeta("root"), old
		return ValidateRootShardUpdate(rs, prev)
	},
	"Shard": func(templates, old operator.CertificateTemplateMap) field.ErrorList {
		s := validShard()
		s.Spec.CertificateTemplates = templates
		if old == nil {
			return ValidateShard(s)
		}
		s.ObjectMeta = updatedObjectMeta("shard-a")
		prev := validShard()
		prev.ObjectMeta, prev.Spec.CertificateTemplates = updatedObjectMeta("shard-a"), old
		return ValidateShardUpdate(s, prev)
	},
	"CacheServer": func(templates, old operator.CertificateTemplateMap) field.ErrorList {
		cs := validCacheServer()
		cs.Spec.CertificateTemplates = templates
		if old == nil {
			return ValidateCacheServer(cs)
		}
		cs.ObjectMeta = updatedObjectMeta("cache")
		prev := validCacheServer()
		prev.ObjectMeta, prev.Spec.CertificateTemplates = updatedObjectMeta("cache"), old
		return ValidateCacheServerUpdate(cs, prev)
	},
}

// TestCATemplatesCannotChangeTheKey holds the templates of the certificates that keep their
// key (every CA, the service-account signing leaves) to it: rotationPolicy Always is a 422 at
// its path on create and when set on update, and a change of the key's algorithm, size or
// encoding on update is a 422 at that field, both pointing to the rotation subresource.
// Leaves' templates may do either.
func TestCATemplatesCannotChangeTheKey(t *testing.T) {
	const always, rotationRight = "Always", "rootshards/rotation"
	empty := operator.CertificateTemplateMap{}
	type row struct {
		name      string
		kind      string
		templates operator.CertificateTemplateMap
		old       operator.CertificateTemplateMap // nil: create
		want      []wantErr
	}
	var rows []row
	// Every CA of a RootShard (its link CA too), and its service-account signing leaf.
	for _, role := range append([]string{pki.RootCATemplateKey, "service-account", "link-ca"}, intermediateCAKeys()...) {
		rows = append(rows, row{name: role + " rotationPolicy Always on create", kind: "RootShard",
			templates: templatesOf(role, key("", 0, "", always)),
			want:      []wantErr{invalid(keyField(role, "rotationPolicy"), "must be Never (or unset): this certificate keeps its key")}})
	}
	rows = append(rows,
		row{name: "a leaf's rotationPolicy Always", kind: "RootShard", templates: templatesOf("server", key("", 0, "", always))},
		row{name: "a CA's rotationPolicy Never", kind: "RootShard", templates: templatesOf("client-ca", key("", 0, "", "Never"))},
		row{name: "a CA's key chosen on create", kind: "RootShard", templates: templatesOf("client-ca", key("RSA", 4096, "PKCS1", ""))},
		row{name: "Shard service-account rotationPolicy Always", kind: "Shard", templates: templatesOf("service-account", key("", 0, "", always)),
			want: []wantErr{invalid(keyField("service-account", "rotationPolicy"))}},
		row{name: "Shard server rotationPolicy Always", kind: "Shard", templates: templatesOf("server", key("", 0, "", always))},
		row{name: "CacheServer ca rotationPolicy Always", kind: "CacheServer", templates: templatesOf("ca", key("", 0, "", always)),
			want: []wantErr{invalid(keyField("ca", "rotationPolicy"), "cacheservers/rotation")}},
		row{name: "CacheServer root-ca rotationPolicy Always", kind: "CacheServer", templates: templatesOf("root-ca", key("", 0, "", always)),
			want: []wantErr{invalid(keyField("root-ca", "rotationPolicy"))}},
		row{name: "CacheServer server rotationPolicy Always", kind: "CacheServer", templates: templatesOf("server", key("", 0, "", always))},

		// Updates.
		row{name: "a CA's rotationPolicy set to Always", kind: "RootShard",
			old: templatesOf("client-ca", key("", 0, "", "Never")), templates: templatesOf("client-ca", key("", 0, "", always)),
			want: []wantErr{invalid(keyField("client-ca", "rotationPolicy"), rotationRight)}},
		row{name: "a refusal names the rotation right", kind: "RootShard",
			old: templatesOf("front-proxy-client-ca", key("", 0, "", "")), templates: templatesOf("front-proxy-client-ca", key("", 384, "", "")),
			want: []wantErr{forbidden(keyField("front-proxy-client-ca", "size"), "changes only through a two-phase rotation, which needs create on rootshards/rotation or cacheservers/rotation")}},
		row{name: "a stored Always kept through an unrelated edit", kind: "RootShard",
			old:       templatesOf("client-ca", key("", 0, "", always)),
			templates: operator.CertificateTemplateMap{"client-ca": key("", 0, "", always), "server": key("RSA", 2048, "", "")}},
		row{name: "a CA's size", kind: "RootShard",
			old: templatesOf("client-ca", key("ECDSA", 256, "", "")), templates: templatesOf("client-ca", key("ECDSA", 384, "", "")),
			want: []wantErr{forbidden(keyField("client-ca", "size"), "may not change from 256 to 384")}},
		row{name: "a CA's algorithm set where it had the default", kind: "RootShard",
			old: empty, templates: templatesOf("client-ca", key("RSA", 0, "", "")),
			want: []wantErr{forbidden(keyField("client-ca", "algorithm"), "from ECDSA to RSA")}},
		row{name: "a CA's encoding", kind: "RootShard",
			old: templatesOf("server-ca", key("", 0, "", "")), templates: templatesOf("server-ca", key("", 0, "PKCS1", "")),
			want: []wantErr{forbidden(keyField("server-ca", "encoding"), "from PKCS8 to PKCS1")}},
		row{name: "a CA's key template removed", kind: "RootShard",
			old: templatesOf("root-ca", key("RSA", 4096, "", "")), templates: empty,
			want: []wantErr{forbidden(keyField("root-ca", "algorithm"), "from RSA to ECDSA")}},
		row{name: "a CA's key spelled out as it was", kind: "RootShard",
			old: templatesOf("etcd-peer-ca", key("RSA", 0, "", "")), templates: templatesOf("etcd-peer-ca", key("RSA", 2048, "PKCS8", "Never"))},
		row{name: "a CA's template changed beside its key", kind: "RootShard",
			old:       templatesOf("client-ca", key("", 0, "", "")),
			templates: templatesOf("client-ca", operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{Duration: duration("8760h")}})},
		row{name: "a leaf's key and rotationPolicy", kind: "RootShard",
			old: templatesOf("server", key("", 0, "", "")), templates: templatesOf("server", key("RSA", 4096, "PKCS1", always))},
		row{name: "Shard service-account size", kind: "Shard",
			old: templatesOf("service-account", key("", 0, "", "")), templates: templatesOf("service-account", key("", 521, "", "")),
			want: []wantErr{forbidden(keyField("service-account", "size"), "from 256 to 521")}},
		row{name: "CacheServer CA moved to its alias key with the same key", kind: "CacheServer",
			old: templatesOf("ca", key("ECDSA", 384, "", "")), templates: templatesOf("root-ca", key("ECDSA", 384, "", ""))},
		row{name: "CacheServer CA moved to its alias key with another key", kind: "CacheServer",
			old: templatesOf("ca", key("ECDSA", 384, "", "")), templates: templatesOf("root-ca", key("Ed25519", 0, "", "")),
			want: []wantErr{forbidden(keyField("root-ca", "algorithm"), "from ECDSA to Ed25519")}},
	)
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateKinds[tc.kind](tc.templates, tc.old))
		})
	}
}
