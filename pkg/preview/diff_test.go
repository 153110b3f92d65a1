package preview

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"github.com/stretchr/testify/assert"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// pod is a kcp pod template: its image tag, its arguments, the volumes it mounts and its
// annotations.
type pod struct {
	tag         string
	args        []string
	volumes     []string
	annotations map[string]string
}

func (p pod) deployment(name string, exists bool) hostcluster.PlannedDeployment {
	c := corev1ac.Container().WithName("kcp").WithImage("ghcr.io/kcp-dev/kcp:" + p.tag).WithArgs(p.args...)
	spec := corev1ac.PodSpec()
	for _, v := range p.volumes {
		c.WithVolumeMounts(corev1ac.VolumeMount().WithName(v).WithMountPath("/etc/" + v))
		spec.WithVolumes(corev1ac.Volume().WithName(v).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(v)))
	}
	spec.WithContainers(c)
	d := appsv1ac.Deployment(name, "team-a").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(2).
		WithTemplate(corev1ac.PodTemplateSpec().WithAnnotations(p.annotations).WithSpec(spec)))
	return hostcluster.PlannedDeployment{Deployment: d, Exists: exists}
}

func planOf(deployments ...hostcluster.PlannedDeployment) *hostcluster.Plan {
	return &hostcluster.Plan{Deployments: deployments}
}

var base = pod{tag: "v0.31.6", args: []string{"--root-directory=/data", "--batteries-included=a,b", "--shard-name", "root"}, volumes: []string{"serving"}}

func TestDiff(t *testing.T) {
	changed := func(f func(p *pod)) pod {
		p := base
		p.args = append([]string{}, base.args...)
		f(&p)
		return p
	}
	for _, tc := range []struct {
		name    string
		old     *hostcluster.Plan
		new     *hostcluster.Plan
		want    []Change
		details []string
	}{{
		name: "a no-op changes nothing",
		old:  planOf(base.deployment("a-kcp", true)),
		new:  planOf(base.deployment("a-kcp", true)),
	}, {
		name: "a release change rolls with the image and the flags gained and lost",
		old:  planOf(base.deployment("a-kcp", true)),
		new: planOf(changed(func(p *pod) {
			p.tag = "v0.32.3"
			p.args = []string{"--root-directory=/data", "--batteries-included=a,b,c", "--shard-name", "root", "--new-one=1", "--other"}
		}).deployment("a-kcp", true)),
		want: []Change{{Kind: "Deployment", Name: "a-kcp", Action: Rolls, Why: "image v0.31.6→v0.32.3, flags +2 -0 ~1"}},
		details: []string{"container kcp image v0.31.6→v0.32.3", "container kcp gains flag --new-one", "container kcp gains flag --other",
			"container kcp flag --batteries-included changes"},
	}, {
		name: "a flag lost, and a flag's value after a space",
		old:  planOf(base.deployment("a-kcp", true)),
		new: planOf(changed(func(p *pod) {
			p.args = []string{"--root-directory=/data", "--shard-name", "other"}
		}).deployment("a-kcp", true)),
		want:    []Change{{Kind: "Deployment", Name: "a-kcp", Action: Rolls, Why: "flags +0 -1 ~1"}},
		details: []string{"container kcp loses flag --batteries-included", "container kcp flag --shard-name changes"},
	}, {
		name:    "a mount added",
		old:     planOf(base.deployment("a-kcp", true)),
		new:     planOf(changed(func(p *pod) { p.volumes = []string{"serving", "extra"} }).deployment("a-kcp", true)),
		want:    []Change{{Kind: "Deployment", Name: "a-kcp", Action: Rolls, Why: "mounts"}},
		details: []string{"container kcp mounts extra:/etc/extra", "volume extra added"},
	}, {
		name:    "another template change: the hash of the mounted Secrets",
		old:     planOf(base.deployment("a-kcp", true)),
		new:     planOf(changed(func(p *pod) { p.annotations = map[string]string{"operator.kcp.io/secrets-hash": "x"} }).deployment("a-kcp", true)),
		want:    []Change{{Kind: "Deployment", Name: "a-kcp", Action: Rolls, Why: "template"}},
		details: []string{"pod annotation operator.kcp.io/secrets-hash changes"},
	}, {
		name: "a Deployment that does not exist yet is created",
		new:  planOf(base.deployment("a-kcp", false)),
		want: []Change{{Kind: "Deployment", Name: "a-kcp", Action: Created}},
	}, {
		name: "the replicas alone change no pod",
		old:  planOf(base.deployment("a-kcp", true)),
		new: func() *hostcluster.Plan {
			d := base.deployment("a-kcp", true)
			d.Deployment.Spec.WithReplicas(3)
			return planOf(d)
		}(),
		want: []Change{{Kind: "Deployment", Name: "a-kcp", Action: Updated}},
	}, {
		name: "a Certificate whose spec changes is issued again, a new one issued",
		old:  &hostcluster.Plan{Certificates: []*cmapply.CertificateApplyConfiguration{cert("a-server", "a.example"), cert("a-client", "c")}},
		new: &hostcluster.Plan{Certificates: []*cmapply.CertificateApplyConfiguration{cert("a-server", "b.example"), cert("a-client", "c"),
			cert("a-new", "n")}},
		want: []Change{{Kind: "Certificate", Name: "a-server", Action: IssuedAgain}, {Kind: "Certificate", Name: "a-new", Action: Issued}},
	}, {
		name: "a backup's snapshot claim that does not exist is created",
		new:  &hostcluster.Plan{Claims: []*corev1ac.PersistentVolumeClaimApplyConfiguration{corev1ac.PersistentVolumeClaim("a-etcd-snapshots", "team-a")}},
		want: []Change{{Kind: "PersistentVolumeClaim", Name: "a-etcd-snapshots", Action: Created}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.old, tc.new)
			var details []string
			for i := range got {
				details = append(details, got[i].Details...)
				got[i].Details = nil
			}
			assert.Equal(t, tc.want, got)
			assert.ElementsMatch(t, tc.details, details)
		})
	}
}

func cert(name, dns string) *cmapply.CertificateApplyConfiguration {
	return cmapply.Certificate(name, "team-a").WithSpec(cmapply.CertificateSpec().WithDNSNames(dns))
}

func TestFlags(t *testing.T) {
	got := Flags([]string{"kcp", "start", "--a=1", "--b", "2", "--c", "-v=2"}, []string{"kcp", "start", "--a=1", "--b", "3", "--d=4", "-v=2"})
	assert.Equal(t, FlagChanges{Gained: []string{"d"}, Lost: []string{"c"}, Changed: []string{"b"}}, got)
	assert.True(t, Flags([]string{"kcp", "start"}, []string{"kcp", "serve"}).Positional)
}

func TestSummary(t *testing.T) {
	rolls := Component{Kind: "Shard", Name: "a", Changes: []Change{
		{Kind: "Deployment", Name: "a-shard-kcp", Action: Rolls, Why: "image v0.31.6→v0.32.3, flags +2 -1"},
		{Kind: "Certificate", Name: "a-server", Action: IssuedAgain}, {Kind: "Certificate", Name: "a-client", Action: IssuedAgain}}}
	assert.Equal(t, []string{
		"preview: Shard/a: Deployment a-shard-kcp rolls (image v0.31.6→v0.32.3, flags +2 -1); 2 Certificates issued again",
	}, Summary(nil, []Component{rolls, {Kind: "FrontProxy", Name: "f"}}))

	assert.Equal(t, []string{NoChange}, Summary(nil, []Component{{Kind: "Shard", Name: "a"}}), "a no-op says so")
	assert.Equal(t, []string{"preview: head", NoChange}, Summary([]string{"head"}, nil))

	var many []Component
	for i := range 11 {
		c := rolls
		c.Name = fmt.Sprint(i)
		many = append(many, c)
	}
	got := Summary(nil, many)
	assert.Len(t, got, SummaryLines+1, "capped")
	assert.Equal(t, "preview: … and 3 more (kubectl kcp-setups plan)", got[SummaryLines])
	assert.Equal(t, []string{"preview: Shard/x: not previewed: why"}, Summary(nil, []Component{{Kind: "Shard", Name: "x", Note: "not previewed: why"}}))
}

func TestFull(t *testing.T) {
	c := Component{Kind: "Shard", Name: "a", Changes: []Change{
		{Kind: "Deployment", Name: "a-shard-kcp", Action: Rolls, Why: "flags +1 -0", Details: []string{"container kcp gains flag --x"}},
		{Kind: "Certificate", Name: "a-server", Action: IssuedAgain}}}
	assert.Equal(t, []string{
		"preview: Shard/a: Deployment a-shard-kcp rolls (flags +1 -0)",
		"preview: Shard/a: Deployment a-shard-kcp: container kcp gains flag --x",
		"preview: Shard/a: Certificate a-server issued again",
	}, Full(nil, []Component{c}))
	assert.Equal(t, []string{NoChange}, Full(nil, nil))

	// Too many lines for the warnings of one response: cut below the API server's limit.
	var details []string
	for i := range 200 {
		details = append(details, fmt.Sprintf("container kcp gains flag --flag-%d-%s", i, strings.Repeat("x", 300)))
	}
	got := Full(nil, []Component{{Kind: "Shard", Name: "a", Changes: []Change{{Kind: "Deployment", Name: "d", Action: Rolls, Details: details}}}})
	total := 0
	for _, l := range got {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), MaxLineRunes)
		total += utf8.RuneCountInString(l)
	}
	assert.LessOrEqual(t, total, 4096, "below the API server's limit of warnings")
	assert.Contains(t, got[len(got)-1], "more lines (too many for the warnings of one response)")
}
