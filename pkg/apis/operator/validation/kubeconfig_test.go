package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func validKubeconfig() *operator.Kubeconfig {
	tmpl := validCertificateTemplate()
	// A Kubeconfig's groups and lifetime have fields of their own.
	tmpl.Spec.Subject.Organizations, tmpl.Spec.Duration = nil, nil
	tmpl.Spec.RenewBefore = duration("30m")
	return &operator.Kubeconfig{
		ObjectMeta: validObjectMeta("admin"),
		Spec: operator.KubeconfigSpec{
			Target:              operator.KubeconfigTarget{FrontProxyRef: &corev1.LocalObjectReference{Name: "edge"}},
			TargetWorkspace:     "root:team-a",
			Username:            "admin",
			Groups:              []string{"system:kcp:admin", "team-a"},
			Validity:            metav1.Duration{Duration: 24 * time.Hour},
			SecretRef:           corev1.LocalObjectReference{Name: "admin-kubeconfig"},
			CertificateTemplate: &tmpl,
		},
	}
}

func TestValidateKubeconfig(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.Kubeconfig)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.Kubeconfig) {}},
		{
			name: "minimal",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Groups, kc.Spec.CertificateTemplate, kc.Spec.TargetWorkspace = nil, nil, "root"
			},
		},
		{
			name:   "name at the maximum length",
			mutate: func(kc *operator.Kubeconfig) { kc.Name = strings.Repeat("k", 63) },
		},
		{
			name:   "name too long for a label value",
			mutate: func(kc *operator.Kubeconfig) { kc.Name = strings.Repeat("k", 64) },
			want:   []wantErr{invalid("metadata.name", "must be no more than 63 characters")},
		},
		{
			name:   "name not a DNS-1123 label",
			mutate: func(kc *operator.Kubeconfig) { kc.Name = "admin.kubeconfig" },
			want:   []wantErr{invalid("metadata.name")},
		},
		{
			name:   "no target",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Target = operator.KubeconfigTarget{} },
			want:   []wantErr{required("spec.target", "one of rootShardRef, shardRef, frontProxyRef, rootShardSecretRef or rootShardLink is required")},
		},
		{
			name:   "rootShard target",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Target = operator.KubeconfigTarget{RootShardRef: ref("root")} },
		},
		{
			name: "two targets",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardRef: ref("root"), ShardRef: ref("shard-a")}
			},
			want: []wantErr{forbidden("spec.target.shardRef", "only one of rootShardRef, shardRef, frontProxyRef, rootShardSecretRef or rootShardLink may be set")},
		},
		{
			name: "rootShard by a copy of its kubeconfig-issuer Secret",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardSecretRef: ref("root.kubeconfig-issuer")}
			},
		},
		{
			name: "a RootShard and a kubeconfig-issuer Secret",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardRef: ref("root"), RootShardSecretRef: ref("root-kubeconfig-issuer")}
			},
			want: []wantErr{forbidden("spec.target.rootShardSecretRef")},
		},
		{
			// The server has no identity toward that RootShard's kcp to bind roles with.
			name: "authorization toward a RootShard of a kubeconfig-issuer Secret",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardSecretRef: ref("root-kubeconfig-issuer")}
				kc.Spec.Authorization = &operator.KubeconfigAuthorization{
					ClusterRoleBindings: operator.KubeconfigClusterRoleBindings{ClusterRoles: []string{"cluster-admin"}}}
			},
			want: []wantErr{forbidden("spec.authorization", "bind them in kcp yourself")},
		},
		{
			name: "authorization toward a RootShard",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardRef: ref("root")}
				kc.Spec.Authorization = &operator.KubeconfigAuthorization{
					ClusterRoleBindings: operator.KubeconfigClusterRoleBindings{ClusterRoles: []string{"cluster-admin"}}}
			},
		},
		{
			name: "rootShard by a link",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardLink: link("eu-1-link-bootstrap")}
			},
		},
		{
			name: "a kubeconfig-issuer Secret and a link",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardSecretRef: ref("root-kubeconfig-issuer"), RootShardLink: link("eu-1-link-bootstrap")}
			},
			want: []wantErr{forbidden("spec.target.rootShardLink")},
		},
		{
			name: "rootShardLink not a Secret name",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardLink: link("-bootstrap")}
			},
			want: []wantErr{invalid("spec.target.rootShardLink.secretRef.name")},
		},
		{
			// Nor over a link.
			name: "authorization toward a RootShard of a link",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardLink: link("eu-1-link-bootstrap")}
				kc.Spec.Authorization = &operator.KubeconfigAuthorization{
					ClusterRoleBindings: operator.KubeconfigClusterRoleBindings{ClusterRoles: []string{"cluster-admin"}}}
			},
			want: []wantErr{forbidden("spec.authorization", "spec.target.rootShardLink")},
		},
		{
			name: "rootShardSecretRef not a Secret name",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardSecretRef: ref("-issuer")}
			},
			want: []wantErr{invalid("spec.target.rootShardSecretRef.name")},
		},
		{
			name: "three targets",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardRef: ref("root"), ShardRef: ref("shard-a"), FrontProxyRef: ref("edge")}
			},
			want: []wantErr{forbidden("spec.target.shardRef"), forbidden("spec.target.frontProxyRef")},
		},
		{
			name:   "target ref without a name",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Target.FrontProxyRef.Name = "" },
			want:   []wantErr{required("spec.target.frontProxyRef.name")},
		},
		{
			name:   "target ref not a DNS-1035 label",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Target = operator.KubeconfigTarget{ShardRef: ref("9shard")} },
			want:   []wantErr{invalid("spec.target.shardRef.name")},
		},
		{
			// kcp-operator's pattern admits a logical cluster's name, which kcp serves at
			// /clusters/<name> as it serves a path.
			name:   "logical cluster name",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "2x8k4qzl9j1mvh5c" },
		},
		{
			name:   "path not under root",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "team-a:dev" },
		},
		{
			name:   "workspace with upper case",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "root:Team" },
			want:   []wantErr{invalid("spec.targetWorkspace", "must be a workspace path or a logical cluster name")},
		},
		{
			name:   "workspace segment too long",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "root:" + strings.Repeat("a", 64) },
			want:   []wantErr{invalid("spec.targetWorkspace")},
		},
		{
			name:   "workspace segment ending in '-'",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "root:a-" },
			want:   []wantErr{invalid("spec.targetWorkspace")},
		},
		{
			name:   "workspace with an empty segment",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "root::a" },
			want:   []wantErr{invalid("spec.targetWorkspace")},
		},
		{
			name:   "workspace not defaulted",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "" },
			want:   []wantErr{invalid("spec.targetWorkspace")},
		},
		{
			name:   "username missing",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Username = "" },
			want:   []wantErr{required("spec.username")},
		},
		{
			name:   "username with surrounding whitespace",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Username = "admin " },
			want:   []wantErr{invalid("spec.username", "may not begin or end with whitespace")},
		},
		{
			name: "groups or lifetime through the certificate template",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.CertificateTemplate = &operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{
					Subject: &operator.X509Subject{Organizations: []string{"system:masters"}}, Duration: &metav1.Duration{Duration: 24 * time.Hour}}}
			},
			want: []wantErr{
				forbidden("spec.certificateTemplate.spec.subject.organizations", "spec.groups"),
				forbidden("spec.certificateTemplate.spec.duration", "spec.validity"),
			},
		},
		{
			name: "renewing no sooner than the end of validity",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.CertificateTemplate.Spec.RenewBefore = duration("24h")
			},
			want: []wantErr{invalid("spec.certificateTemplate.spec.renewBefore", "must be shorter than spec.validity")},
		},
		{
			name:   "empty and duplicate groups",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Groups = []string{"a", "", "a"} },
			want:   []wantErr{required("spec.groups[1]"), duplicate("spec.groups[2]")},
		},
		{
			name:   "validity missing",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Validity = metav1.Duration{} },
			want:   []wantErr{required("spec.validity")},
		},
		{
			name:   "validity at the minimum",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Validity = metav1.Duration{Duration: time.Hour} },
		},
		{
			name:   "validity too short",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Validity = metav1.Duration{Duration: 59 * time.Minute} },
			want:   []wantErr{invalid("spec.validity", "must be at least 1h0m0s")},
		},
		{
			name:   "negative validity",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Validity = metav1.Duration{Duration: -time.Hour} },
			want:   []wantErr{invalid("spec.validity")},
		},
		{
			name:   "secretRef missing",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.SecretRef.Name = "" },
			want:   []wantErr{required("spec.secretRef.name")},
		},
		{
			name:   "secretRef not a DNS-1123 subdomain",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.SecretRef.Name = "Admin" },
			want:   []wantErr{invalid("spec.secretRef.name")},
		},
		{
			name: "certificate template is validated",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.CertificateTemplate.Spec.RenewBefore = duration("-1h")
			},
			want: []wantErr{invalid("spec.certificateTemplate.spec.renewBefore")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kc := validKubeconfig()
			tc.mutate(kc)
			assertErrors(t, tc.want, ValidateKubeconfig(kc))
		})
	}
}

func TestValidateKubeconfigUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.Kubeconfig)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.Kubeconfig) {}},
		{
			name:   "mutable field changed",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Groups = []string{"team-b"} },
		},
		{
			name:   "target renamed",
			mutate: func(kc *operator.Kubeconfig) { kc.Spec.Target.FrontProxyRef.Name = "edge2" },
			want:   []wantErr{invalid("spec.target", `Invalid value: "FrontProxy/edge2": field is immutable`)},
		},
		{
			name: "target kind changed",
			mutate: func(kc *operator.Kubeconfig) {
				kc.Spec.Target = operator.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "edge"}}
			},
			want: []wantErr{invalid("spec.target", "field is immutable")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validKubeconfig(), validKubeconfig()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("admin"), updatedObjectMeta("admin")
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateKubeconfigUpdate(newObj, oldObj))
		})
	}
}

func TestValidateKubeconfigStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status operator.KubeconfigStatus
		want   []wantErr
	}{
		{name: "valid", status: operator.KubeconfigStatus{Phase: operator.KubeconfigPhaseReady, TargetName: "edge", ObservedGeneration: 2}},
		{name: "a setup phase", status: operator.KubeconfigStatus{Phase: "Running"}, want: []wantErr{notSupported("status.phase")}},
		{name: "negative observedGeneration", status: operator.KubeconfigStatus{ObservedGeneration: -1}, want: []wantErr{invalid("status.observedGeneration")}},
		{
			name: "duplicate condition",
			status: operator.KubeconfigStatus{Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Issued", LastTransitionTime: metav1.Now()},
				{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Expired", LastTransitionTime: metav1.Now()},
			}},
			want: []wantErr{duplicate("status.conditions[1]")},
		},
		{
			name:   "bindings provisioned in a workspace",
			status: operator.KubeconfigStatus{Authorization: &operator.KubeconfigAuthorizationStatus{ProvisionedCluster: "root:team-a"}},
		},
		{
			name:   "bindings provisioned in a logical cluster",
			status: operator.KubeconfigStatus{Authorization: &operator.KubeconfigAuthorizationStatus{ProvisionedCluster: "2x8k4qzl9j1mvh5c"}},
		},
		{
			// kcp-operator's controller clears it so once the bindings are gone.
			name:   "bindings removed",
			status: operator.KubeconfigStatus{Authorization: &operator.KubeconfigAuthorizationStatus{}},
		},
		{
			name:   "bindings provisioned in no workspace",
			status: operator.KubeconfigStatus{Authorization: &operator.KubeconfigAuthorizationStatus{ProvisionedCluster: "root:Team_A"}},
			want:   []wantErr{invalid("status.authorization.provisionedCluster")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validKubeconfig(), validKubeconfig()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("admin"), updatedObjectMeta("admin")
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateKubeconfigStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateKubeconfigNil(t *testing.T) {
	assert.NotEmpty(t, ValidateKubeconfig(nil))
	assert.NotEmpty(t, ValidateKubeconfigUpdate(nil, nil))
	assert.NotEmpty(t, ValidateKubeconfigStatusUpdate(nil, nil))
}
