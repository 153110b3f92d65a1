package store

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// VerbTrust is the custom verb on a RootShard that lets a setup have the RootShard's kcp trust
// what its author chooses: an identity source on a FrontProxy or Shard (OIDC, a token webhook,
// a static token file), whose word on who a user is, groups included, every shard behind it
// takes; a shard's storage that is not TLS (a plain-HTTP etcd), whose contents are that
// shard's RBAC; a shard's base URL, to which the root shard and the front proxies send their
// users' requests with the users' identities. Each of these is as much as the kcp's
// system:masters, so use on the RootShard, which kcp-setups-edit grants, is not enough:
// kcp-setups-trust (aggregated to admin only) grants trust.
const VerbTrust = "trust"

// Trusted is what a field has the RootShard's kcp trust: Field is its path, Value what a 403
// shows of it, and Content what it is, so that any change of it asks trust again.
type Trusted struct {
	Field   *field.Path
	Value   string
	Content any
}

// IdentitySources are the identity sources an auth spec adds to the component: OIDC, a token
// webhook and a static token file. Service-account authentication is not one: it verifies
// the tokens of the setup's own shards with their keys.
func IdentitySources(auth *operator.AuthSpec, fldPath *field.Path) []Trusted {
	if auth == nil {
		return nil
	}
	var out []Trusted
	if o := auth.OIDC; o != nil {
		out = append(out, Trusted{fldPath.Child("oidc"), "the OIDC issuer " + o.IssuerURL, o})
	}
	if w := auth.Webhook; w != nil {
		out = append(out, Trusted{fldPath.Child("webhook"), "the token webhook of Secret/" + w.ConfigSecretName, w})
	}
	if f := auth.TokenAuthFile; f != nil {
		out = append(out, Trusted{fldPath.Child("tokenAuthFile"), "the token file of Secret/" + f.SecretName, f})
	}
	return out
}

// ShardTrusted is what a Shard's own spec has its RootShard's kcp trust beyond its identity
// sources: a shardBaseURL, each etcd endpoint that is not TLS, and its authorization (the
// authorizers' order, the paths allowed without asking, an authorization webhook), which
// decides whom the shard authorizes: allowPaths ["/*"] authorizes every request.
func ShardTrusted(spec *operator.CommonShardSpec, fldPath *field.Path) []Trusted {
	var out []Trusted
	if a := spec.Authorization; a != nil {
		out = append(out, Trusted{fldPath.Child("authorization"), authorizationValue(a), a})
	}
	if spec.ShardBaseURL != "" {
		out = append(out, Trusted{fldPath.Child("shardBaseURL"), spec.ShardBaseURL, spec.ShardBaseURL})
	}
	for i, ep := range spec.Etcd.Endpoints {
		if !EtcdEndpointIsTLS(ep, spec.Etcd.TLSConfig != nil) {
			out = append(out, Trusted{fldPath.Child("etcd", "endpoints").Index(i), "an etcd without TLS at " + ep, ep})
		}
	}
	return out
}

// EtcdEndpointIsTLS reports whether kcp speaks TLS to an etcd endpoint: an https URL always,
// a schemeless host:port when a client certificate is configured (etcd's client then
// dials it with TLS), anything else (http, unix) never.
func EtcdEndpointIsTLS(endpoint string, clientTLS bool) bool {
	scheme, _, hasScheme := strings.Cut(endpoint, "://")
	if !hasScheme {
		return clientTLS
	}
	return strings.EqualFold(scheme, "https")
}

// TrustPermissions holds each trusted thing to trust on the RootShard rs names, asked again
// whenever what is trusted changes. A setup joined by a copy of a join Secret (rs.SecretRef)
// is held to get on the copy, whose CA keys are that much already.
func TrustPermissions(rs *operator.RootShardConfig, trusted []Trusted) []Permission {
	if rs == nil || rs.Reference == nil {
		return nil
	}
	var perms []Permission
	for _, t := range trusted {
		p := UsePermission(t.Field, "rootshards", rs.Reference.Name)
		p.Verb, p.Value = VerbTrust, t.Value
		perms = append(perms, ChangeOf(p, t.Content))
	}
	return perms
}

// authorizationValue is what a 403 shows of a shard's authorization.
func authorizationValue(a *operator.AuthorizationSpec) string {
	var parts []string
	if len(a.Order) > 0 {
		parts = append(parts, "the authorizers "+strings.Join(a.Order, ","))
	}
	paths := a.AllowPaths
	if a.Webhook != nil {
		paths = append(slices.Clone(paths), a.Webhook.AllowPaths...)
		parts = append(parts, "the authorization webhook of Secret/"+a.Webhook.ConfigSecretName)
	}
	if len(paths) > 0 {
		parts = append(parts, "the paths allowed without authorization "+strings.Join(paths, ","))
	}
	if len(parts) == 0 {
		return "kcp's default authorizers"
	}
	return strings.Join(parts, "; ")
}
