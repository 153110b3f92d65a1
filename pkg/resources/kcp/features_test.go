package kcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// TestEachSettingMountsWhatItsFlagsRead walks every setting from its API field to its flags and
// its mounts: each flag that names a file names one under a mount of the same setting, one
// of the keys that mount projects where it projects some; each mount is read by a flag; and
// each mount of the user's names, in Field, the API field that holds its name, which the
// admission check holds to reading it.
func TestEachSettingMountsWhatItsFlagsRead(t *testing.T) {
	auth := &operatorv1alpha1.AuthSpec{
		OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex", ClientID: "kcp", GroupsClaim: "groups",
			CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "dex-ca", Key: "root.pem"}},
		Webhook:       &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook", Version: "v1"},
		TokenAuthFile: &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: operatorv1alpha1.DefaultTokenAuthFileKey},
	}
	audit := &operatorv1alpha1.AuditSpec{
		Policy:  &operatorv1alpha1.AuditPolicySpec{ConfigMap: &operatorv1alpha1.LocalDataKeyReference{Name: "audit", Key: "policy.yaml"}},
		Webhook: &operatorv1alpha1.AuditWebhookSpec{ConfigSecretName: "audit-hook", Mode: "batch"},
	}
	authz := &operatorv1alpha1.AuthorizationSpec{Webhook: &operatorv1alpha1.AuthorizationWebhookSpec{ConfigSecretName: "authz-hook"}}
	etcd := operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"},
		TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}

	for _, tc := range []struct {
		name    string
		feature workload.Feature
		// setting is what the feature's function read, which the User mounts' Field is in.
		setting any
		mounts  int
	}{
		{"auth.oidc", OIDC(auth), auth, 1},
		{"auth.webhook", TokenWebhook(auth), auth, 1},
		{"auth.tokenAuthFile", TokenFile(auth), auth, 1},
		{"auth.serviceAccount", ServiceAccountKeys(&operatorv1alpha1.RootShard{}, []string{"root", "shard-a"}), nil, 2},
		{"audit", Audit(audit), audit, 2},
		{"authorization", Authorization(authz), authz, 1},
		{"etcd", ExternalEtcd(etcd), etcd, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.feature
			require.Len(t, f.Mounts, tc.mounts)
			for _, arg := range f.Args {
				file, ok := fileOf(arg)
				if !ok {
					continue
				}
				m, found := mountOf(f.Mounts, file)
				require.True(t, found, "%s reads a file no mount of the setting puts there", arg)
				if len(m.Keys) > 0 {
					assert.Contains(t, m.Keys, strings.TrimPrefix(file, m.Dir+"/"), "%s reads a key the mount does not project", arg)
				}
			}
			for _, m := range f.Mounts {
				read := false
				for _, arg := range f.Args {
					if file, ok := fileOf(arg); ok && strings.HasPrefix(file, m.Dir+"/") {
						read = true
					}
				}
				assert.True(t, read, "no flag reads the mount %s", m.Volume)
				assert.NotEqual(t, m.User, m.Optional, "%s: the user's, or the server's that the Deployment does not wait for", m.Volume)
				if m.User {
					name := m.Secret + m.ConfigMap
					assert.Equal(t, name, nameAt(t, tc.setting, m.Field), "the field %q names the mount %s", m.Field, m.Volume)
				}
			}
		})
	}
}

// fileOf is the file a flag names, if its value is an absolute path.
func fileOf(arg string) (string, bool) {
	_, value, ok := strings.Cut(arg, "=")
	return value, ok && strings.HasPrefix(value, "/")
}

func mountOf(mounts []workload.Mount, file string) (workload.Mount, bool) {
	for _, m := range mounts {
		if strings.HasPrefix(file, m.Dir+"/") {
			return m, true
		}
	}
	return workload.Mount{}, false
}

// nameAt is the name the dotted JSON field of obj holds: a string, or a reference's name.
func nameAt(t *testing.T, obj any, fld string) string {
	data, err := json.Marshal(obj)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	for _, part := range strings.Split(fld, ".") {
		m, ok := v.(map[string]any)
		require.True(t, ok, "%s: %s is not an object", fld, part)
		v = m[part]
	}
	if ref, ok := v.(map[string]any); ok {
		v = ref["name"]
	}
	name, _ := v.(string)
	return name
}

// TestEveryAuthFieldIsASettingOrSaysWhyNot: a field of AuthSpec that Authentication does not
// turn into flags is one listed here with where it is handled, so that a new way to
// authenticate cannot be added to the API and left out of kcp.AuthenticationSettings (and so
// of the admission check of its Secret).
func TestEveryAuthFieldIsASettingOrSaysWhyNot(t *testing.T) {
	full := operatorv1alpha1.AuthSpec{
		OIDC:           &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex", ClientID: "kcp"},
		ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true},
		Webhook:        &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook"},
		TokenAuthFile:  &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens"},
		DropGroups:     []string{"system:masters"},
		PassOnGroups:   []string{"team"},
	}
	elsewhere := map[string]string{
		"ServiceAccount": "ServiceAccountKeys: the shards' own keys, no Secret of the user's",
		"DropGroups":     "kcp-front-proxy's group flags: no Secret",
		"PassOnGroups":   "kcp-front-proxy's group flags: no Secret",
	}
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		one := operatorv1alpha1.AuthSpec{}
		reflect.ValueOf(&one).Elem().Field(i).Set(v.Field(i))
		require.False(t, v.Field(i).IsZero(), "%s: the fixture sets every field", name)
		if _, ok := elsewhere[name]; ok {
			assert.Empty(t, Authentication(&one).Args, name)
			continue
		}
		assert.NotEmpty(t, Authentication(&one).Args, "auth.%s is neither an AuthenticationSetting nor handled elsewhere", name)
	}
}
