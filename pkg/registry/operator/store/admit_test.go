package store

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// grants is a fake delegated authorizer that allows exactly the listed attributes, as
// "verb resource.group name", and records what it was asked.
type grants struct {
	allow map[string]bool
	err   error
	asked []string
}

func (g *grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key := a.GetVerb() + " " + a.GetResource() + "." + a.GetAPIGroup() + " " + a.GetName()
	g.asked = append(g.asked, key+" in "+a.GetNamespace()+" for "+a.GetUser().GetName())
	if g.err != nil {
		return authorizer.DecisionNoOpinion, "", g.err
	}
	if g.allow[key] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule", nil
}

// permissionKind is a Kind over CacheServers held to their image and certificates.
func permissionKind() *Kind[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus] {
	k := testKind()
	k.Permissions = func(o *operator.CacheServer) []Permission {
		spec := field.NewPath("spec")
		return append(ComponentPermissions(&o.Spec.ComponentSpec, spec),
			CertificatesPermissions(o.Spec.Certificates, spec.Child("certificates"))...)
	}
	return k
}

func withIssuer(name string) *operator.CacheServer {
	cs := cacheServer(1, "")
	cs.Spec.Certificates = &operator.Certificates{IssuerRef: &operator.ObjectReference{Name: name, Kind: "Issuer", Group: "cert-manager.io"}}
	return cs
}

func TestAdmitHoldsFieldsToDelegatedPermissions(t *testing.T) {
	const createCerts = "create certificates.cert-manager.io "
	withCASecret := cacheServer(1, "")
	withCASecret.Spec.Certificates = &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "corp-ca"}}
	withImage := func(repo string) *operator.CacheServer {
		cs := cacheServer(1, "")
		cs.Spec.Image = &operator.ImageSpec{Repository: repo, Tag: "latest"}
		return cs
	}
	withServiceType := func(typ corev1.ServiceType) *operator.CacheServer {
		cs := cacheServer(1, "")
		cs.Spec.ServiceTemplate = &operator.ServiceTemplate{Spec: &operator.ServiceSpecTemplate{Type: typ}}
		return cs
	}
	withTemplateIssuer := func(name string) *operator.CacheServer {
		cs := cacheServer(1, "")
		cs.Spec.CertificateTemplates = operator.CertificateTemplateMap{
			"client": {},
			"server": {Spec: &operator.CertificateSpecTemplate{IssuerRef: &operator.ObjectReference{Name: name, Kind: "ClusterIssuer", Group: "cert-manager.io"}}},
		}
		return cs
	}
	withVolumes := func(secrets ...string) *operator.CacheServer {
		cs := cacheServer(1, "")
		for _, name := range secrets {
			cs.Spec.ExtraVolumes = append(cs.Spec.ExtraVolumes, corev1.Volume{Name: name,
				VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}})
		}
		return cs
	}
	withImageAndIssuer := func() *operator.CacheServer {
		cs := withIssuer("corp")
		cs.Spec.Image = &operator.ImageSpec{Repository: "busybox"}
		return cs
	}
	tests := []struct {
		name     string
		obj, old *operator.CacheServer
		allow    []string
		authzErr error
		noUser   bool
		// forbidden, when set, must occur in the 403's message; empty means allowed.
		forbidden []string
		asked     int
	}{
		{name: "nothing to hold", obj: cacheServer(1, "")},
		{name: "issuerRef, granted", obj: withIssuer("corp"), allow: []string{createCerts}, asked: 1},
		{
			name: "issuerRef, denied", obj: withIssuer("corp"), asked: 1,
			forbidden: []string{`user "mallory" may not set spec.certificates.issuerRef to Issuer/corp without create on certificates.cert-manager.io in namespace "ns"`, "no RBAC rule"},
		},
		{
			name: "issuerRef, the authorizer fails", obj: withIssuer("corp"), allow: []string{createCerts}, authzErr: errors.New("webhook down"), asked: 1,
			forbidden: []string{`spec.certificates.issuerRef to Issuer/corp: create on certificates.cert-manager.io in namespace "ns" could not be checked (webhook down)`},
		},
		{name: "issuerRef unchanged on update", obj: withIssuer("corp"), old: withIssuer("corp")},
		{name: "issuerRef changed on update", obj: withIssuer("other"), old: withIssuer("corp"), asked: 1, forbidden: []string{"Issuer/other"}},
		{name: "issuerRef, no authenticated user", obj: withIssuer("corp"), noUser: true},
		{
			name: "caSecretRef, denied", obj: withCASecret, asked: 1,
			forbidden: []string{`spec.certificates.caSecretRef to Secret/corp-ca without get on secrets "corp-ca"`},
		},
		{name: "caSecretRef, granted", obj: withCASecret, allow: []string{"get secrets. corp-ca"}, asked: 1},
		{name: "kcp's own image repository", obj: withImage("ghcr.io/kcp-dev/kcp")},
		{
			name: "another image repository, denied", obj: withImage("busybox"), asked: 1,
			forbidden: []string{"spec.image.repository to busybox without create on deployments.apps"},
		},
		{name: "another image repository, granted", obj: withImage("busybox"), allow: []string{"create deployments.apps "}, asked: 1},
		{name: "a ClusterIP Service", obj: withServiceType(corev1.ServiceTypeClusterIP)},
		{
			name: "a NodePort Service, denied", obj: withServiceType(corev1.ServiceTypeNodePort), asked: 1,
			forbidden: []string{"spec.serviceTemplate.spec.type to NodePort without create on services in namespace"},
		},
		{name: "a LoadBalancer Service, granted", obj: withServiceType(corev1.ServiceTypeLoadBalancer), allow: []string{"create services. "}, asked: 1},
		{
			name: "a template's issuerRef, denied", obj: withTemplateIssuer("acme"), asked: 1,
			forbidden: []string{`spec.certificateTemplates[server].spec.issuerRef to ClusterIssuer/acme without create on certificates.cert-manager.io`},
		},
		{name: "a template's issuerRef, granted", obj: withTemplateIssuer("acme"), allow: []string{createCerts}, asked: 1},
		{name: "a template's issuerRef unchanged on update", obj: withTemplateIssuer("acme"), old: withTemplateIssuer("acme")},
		{name: "a template's issuerRef changed on update", obj: withTemplateIssuer("other"), old: withTemplateIssuer("acme"), asked: 1, forbidden: []string{"ClusterIssuer/other"}},
		{name: "volumes removed and reordered on update", obj: withVolumes("b", "a"), old: withVolumes("a", "c", "b")},
		{
			name: "a volume added on update", obj: withVolumes("b", "d", "a"), old: withVolumes("a", "b"), asked: 1,
			forbidden: []string{`spec.extraVolumes[1].secret.secretName to Secret/d without get on secrets "d"`},
		},
		{
			name: "two fields, both denied", obj: withImageAndIssuer(), asked: 2,
			forbidden: []string{"spec.image.repository to busybox", "; spec.certificates.issuerRef to Issuer/corp"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &grants{allow: map[string]bool{}, err: tc.authzErr}
			for _, a := range tc.allow {
				g.allow[a] = true
			}
			ctx := context.Background()
			if !tc.noUser {
				ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "mallory"})
			}
			a := newAdmitter(permissionKind(), authorizer.AuthorizerFunc(g.Authorize))
			var err error
			if tc.old == nil {
				err = a.create(nil)(ctx, tc.obj)
			} else {
				err = a.update(nil)(ctx, tc.obj, tc.old)
			}
			assert.Len(t, g.asked, tc.asked, "asked: %v", g.asked)
			if len(tc.forbidden) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusForbidden, status.Status().Code)
			assert.Equal(t, metav1.StatusReasonForbidden, status.Status().Reason)
			for _, s := range tc.forbidden {
				assert.Contains(t, err.Error(), s)
			}
			assert.Contains(t, err.Error(), `cacheservers.operator.kcp.io "cs" is forbidden`)
		})
	}
}

func TestAdmitRunsAdmissionFirst(t *testing.T) {
	g := &grants{allow: map[string]bool{}}
	a := newAdmitter(permissionKind(), authorizer.AuthorizerFunc(g.Authorize))
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})
	webhook := errors.New("denied by a webhook")
	err := a.create(func(context.Context, runtime.Object) error { return webhook })(ctx, withIssuer("corp"))
	assert.ErrorIs(t, err, webhook)
	assert.Empty(t, g.asked, "nothing is asked once admission refused")
}

// TestAdoptingNeedsTheRightsItUses: the adopt annotation has the server rewrite and delete
// what kcp-operator made in the namespace, so it is held, on every kind (even one without
// permissions of its own), to delete on each type it takes over; an update that keeps it
// asks nothing again; an unknown value is refused.
func TestAdoptingNeedsTheRightsItUses(t *testing.T) {
	adopting := func(value string) *operator.CacheServer {
		cs := cacheServer(1, "")
		cs.Annotations = map[string]string{"operator.kcp.io/adopt": value}
		return cs
	}
	all := []string{"delete deployments.apps ", "delete services. ", "delete configmaps. ", "delete secrets. ",
		"delete certificates.cert-manager.io ", "delete issuers.cert-manager.io "}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})
	for _, missing := range all {
		g := &grants{allow: map[string]bool{}}
		for _, p := range all {
			g.allow[p] = p != missing
		}
		a := newAdmitter(testKind(), authorizer.AuthorizerFunc(g.Authorize))
		err := a.create(nil)(ctx, adopting("kcp-operator"))
		require.Error(t, err, "without %s", missing)
		assert.True(t, apierrors.IsForbidden(err))
		assert.Contains(t, err.Error(), `metadata.annotations[operator.kcp.io/adopt] to kcp-operator without delete on`)
	}
	g := &grants{allow: map[string]bool{}}
	for _, p := range all {
		g.allow[p] = true
	}
	a := newAdmitter(testKind(), authorizer.AuthorizerFunc(g.Authorize))
	require.NoError(t, a.create(nil)(ctx, adopting("kcp-operator")))
	g.allow = map[string]bool{}
	g.asked = nil
	require.NoError(t, a.update(nil)(ctx, adopting("kcp-operator"), adopting("kcp-operator")), "held from the stored object")
	assert.Empty(t, g.asked)
	require.NoError(t, a.create(nil)(ctx, cacheServer(1, "")), "no annotation, nothing asked")
	assert.Empty(t, g.asked)

	assert.Empty(t, ValidateAdopt(adopting("kcp-operator")))
	errs := ValidateAdopt(adopting("yes"))
	require.Len(t, errs, 1)
	assert.Equal(t, `metadata.annotations[operator.kcp.io/adopt]: Unsupported value: "yes": supported values: "kcp-operator"`, errs[0].Error())
}
