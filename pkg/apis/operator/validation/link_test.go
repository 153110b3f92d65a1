package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// validLink is a Link with every field set to a valid value.
func validLink() *operator.Link {
	return &operator.Link{
		ObjectMeta: validObjectMeta("eu-1"),
		Spec: operator.LinkSpec{
			RootShardRef:   corev1.LocalObjectReference{Name: "root"},
			Identity:       "eu-1.links.example.com",
			Consumers:      []operator.LinkConsumerKind{operator.LinkConsumerShard, operator.LinkConsumerFrontProxy, operator.LinkConsumerKubeconfig},
			CacheServerRef: &corev1.LocalObjectReference{Name: "cache"},
			DNSNames:       []string{"*.eu.kcp.example.com", "eu.kcp.example.com"},
		},
	}
}

func TestValidateLink(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.Link)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.Link) {}},
		{
			name: "minimal",
			mutate: func(l *operator.Link) {
				l.Spec = operator.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: "root"}, Identity: "eu-1",
					Consumers: []operator.LinkConsumerKind{operator.LinkConsumerKubeconfig}}
			},
		},
		{name: "name not a DNS-1035 label", mutate: func(l *operator.Link) { l.Name = "1eu" }, want: []wantErr{invalid("metadata.name")}},
		{name: "no namespace", mutate: func(l *operator.Link) { l.Namespace = "" }, want: []wantErr{required("metadata.namespace")}},
		{name: "no rootShardRef", mutate: func(l *operator.Link) { l.Spec.RootShardRef.Name = "" }, want: []wantErr{required("spec.rootShardRef.name")}},
		{name: "rootShardRef not a RootShard's name", mutate: func(l *operator.Link) { l.Spec.RootShardRef.Name = "Root" }, want: []wantErr{invalid("spec.rootShardRef.name")}},
		{name: "no identity", mutate: func(l *operator.Link) { l.Spec.Identity = "" }, want: []wantErr{required("spec.identity", "client certificate")}},
		{name: "identity in upper case", mutate: func(l *operator.Link) { l.Spec.Identity = "EU-1.links.example.com" }, want: []wantErr{invalid("spec.identity", "lower case")}},
		{name: "identity a wildcard", mutate: func(l *operator.Link) { l.Spec.Identity = "*.links.example.com" }, want: []wantErr{invalid("spec.identity")}},
		{
			name:   "identity longer than a common name",
			mutate: func(l *operator.Link) { l.Spec.Identity = strings.Repeat("a.", 32) + "a" },
			want:   []wantErr{tooLong("spec.identity", "64")},
		},
		{
			name:   "identity of 64",
			mutate: func(l *operator.Link) { l.Spec.Identity = strings.Repeat("a.", 31) + "ab" },
		},
		{name: "no consumers", mutate: func(l *operator.Link) { l.Spec.Consumers = nil }, want: []wantErr{required("spec.consumers", "Shard, FrontProxy or Kubeconfig")}},
		{
			name:   "a consumer not a consumer kind",
			mutate: func(l *operator.Link) { l.Spec.Consumers = []operator.LinkConsumerKind{"Shard", "RootShard", "shard"} },
			want:   []wantErr{notSupported("spec.consumers[1]", `"Shard", "FrontProxy", "Kubeconfig"`), notSupported("spec.consumers[2]")},
		},
		{
			name:   "a consumer twice",
			mutate: func(l *operator.Link) { l.Spec.Consumers = []operator.LinkConsumerKind{"Shard", "Kubeconfig", "Shard"} },
			want:   []wantErr{duplicate("spec.consumers[2]")},
		},
		{name: "cacheServerRef without a name", mutate: func(l *operator.Link) { l.Spec.CacheServerRef.Name = "" }, want: []wantErr{required("spec.cacheServerRef.name")}},
		{name: "cacheServerRef not a name", mutate: func(l *operator.Link) { l.Spec.CacheServerRef.Name = "a.b" }, want: []wantErr{invalid("spec.cacheServerRef.name")}},
		{
			name: "dnsNames: empty, not a subdomain, a wildcard of two labels, upper case",
			mutate: func(l *operator.Link) {
				l.Spec.DNSNames = []string{"", "a_b.example.com", "*.*.example.com", "EU.example.com"}
			},
			want: []wantErr{
				required("spec.dnsNames[0]"), invalid("spec.dnsNames[1]"),
				invalid("spec.dnsNames[2]", "wildcard"), invalid("spec.dnsNames[3]"),
			},
		},
		{
			name: "a dnsName twice",
			mutate: func(l *operator.Link) {
				l.Spec.DNSNames = []string{"*.eu.example.com", "eu.example.com", "*.eu.example.com"}
			},
			want: []wantErr{duplicate("spec.dnsNames[2]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := validLink()
			tc.mutate(l)
			assertErrors(t, tc.want, ValidateLink(l))
		})
	}
}

func TestValidateLinkUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.Link)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.Link) {}},
		{
			name: "consumers, cacheServerRef and dnsNames may change",
			mutate: func(l *operator.Link) {
				l.Spec.Consumers, l.Spec.CacheServerRef, l.Spec.DNSNames = []operator.LinkConsumerKind{"Kubeconfig"}, nil, nil
			},
		},
		{
			name:   "rootShardRef changed",
			mutate: func(l *operator.Link) { l.Spec.RootShardRef.Name = "other" },
			want:   []wantErr{invalid("spec.rootShardRef", `Invalid value: "other": field is immutable`)},
		},
		{
			name:   "identity changed",
			mutate: func(l *operator.Link) { l.Spec.Identity = "eu-2.links.example.com" },
			want:   []wantErr{invalid("spec.identity", `Invalid value: "eu-2.links.example.com": field is immutable`)},
		},
		{
			name:   "identity removed",
			mutate: func(l *operator.Link) { l.Spec.Identity = "" },
			want:   []wantErr{required("spec.identity"), invalid("spec.identity", "field is immutable")},
		},
		{
			name:   "spec invalid on update",
			mutate: func(l *operator.Link) { l.Spec.Consumers = nil },
			want:   []wantErr{required("spec.consumers")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validLink(), validLink()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("eu-1"), updatedObjectMeta("eu-1")
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateLinkUpdate(newObj, oldObj))
		})
	}
}

// fp is a SHA-256 fingerprint as a remote reports it.
var fp = strings.Repeat("ab", 32)

// consumer is a consumer as the server records it from a remote's report.
func consumer() operator.LinkConsumerStatus {
	return operator.LinkConsumerStatus{Kind: "Shard", Namespace: "b", Name: "s-1", UID: "0b7d", Generation: 3, Sequence: 17,
		Realized: true, Available: true, KcpShard: "s-1", BaseURL: "https://s-1.eu.example.com:6443",
		Trust: []operator.LinkConsumerCA{{CA: "server", Trusted: []string{fp}, Served: []string{fp}}}}
}

func withConsumer(edit func(*operator.LinkConsumerStatus)) operator.LinkConsumerStatus {
	c := consumer()
	edit(&c)
	return c
}

func TestValidateLinkStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status operator.LinkStatus
		want   []wantErr
	}{
		{
			name: "valid",
			status: operator.LinkStatus{ObservedGeneration: 2, BootstrapSecretName: "eu-1-link-bootstrap", Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Connected", LastTransitionTime: metav1.Now()},
			}},
		},
		{name: "negative observedGeneration", status: operator.LinkStatus{ObservedGeneration: -1}, want: []wantErr{invalid("status.observedGeneration")}},
		{name: "bootstrapSecretName not a Secret's name", status: operator.LinkStatus{BootstrapSecretName: "Eu_1"}, want: []wantErr{invalid("status.bootstrapSecretName")}},
		{name: "a consumer as the server records it", status: operator.LinkStatus{Consumers: []operator.LinkConsumerStatus{consumer()}}},
		{name: "a consumer of a kind no link realizes", status: operator.LinkStatus{Consumers: []operator.LinkConsumerStatus{
			withConsumer(func(c *operator.LinkConsumerStatus) { c.Kind = "RootShard" })}}, want: []wantErr{notSupported("status.consumers[0].kind")}},
		{name: "a consumer twice", status: operator.LinkStatus{Consumers: []operator.LinkConsumerStatus{consumer(), consumer()}},
			want: []wantErr{duplicate("status.consumers[1]")}},
		{name: "a consumer without its identity", status: operator.LinkStatus{Consumers: []operator.LinkConsumerStatus{
			withConsumer(func(c *operator.LinkConsumerStatus) {
				c.Namespace, c.Name, c.UID, c.Generation, c.Sequence = "B", "", "", 0, 0
			})}},
			want: []wantErr{invalid("status.consumers[0].namespace"), required("status.consumers[0].name"), required("status.consumers[0].uid"),
				invalid("status.consumers[0].generation"), invalid("status.consumers[0].sequence")}},
		{name: "a consumer's trust that is no fingerprint, too many, and a CA twice", status: operator.LinkStatus{Consumers: []operator.LinkConsumerStatus{
			withConsumer(func(c *operator.LinkConsumerStatus) {
				c.Trust = []operator.LinkConsumerCA{{CA: "server", Trusted: []string{"AA"}, Served: []string{fp, fp, fp, fp, fp}}, {CA: "server"}, {CA: ""}}
			})}},
			want: []wantErr{invalid("status.consumers[0].trust[0].trusted[0]"), tooMany("status.consumers[0].trust[0].served"),
				duplicate("status.consumers[0].trust[1].ca"), required("status.consumers[0].trust[2].ca")}},
		{name: "a consumer's base URL that is no https URL", status: operator.LinkStatus{Consumers: []operator.LinkConsumerStatus{
			withConsumer(func(c *operator.LinkConsumerStatus) { c.BaseURL = "http://s.example.com" })}}, want: []wantErr{invalid("status.consumers[0].baseURL")}},
		{
			name:   "a condition without a reason",
			status: operator.LinkStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now()}}},
			want:   []wantErr{required("status.conditions[0].reason")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validLink(), validLink()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("eu-1"), updatedObjectMeta("eu-1")
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateLinkStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateLinkNil(t *testing.T) {
	assert.NotEmpty(t, ValidateLink(nil))
	assert.NotEmpty(t, ValidateLinkUpdate(nil, nil))
	assert.NotEmpty(t, ValidateLinkStatusUpdate(nil, nil))
}
