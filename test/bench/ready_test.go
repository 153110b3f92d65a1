package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
)

// readyTimeout bounds one measurement: a setup that is not Running by then is a failure.
const readyTimeout = 5 * time.Minute

// keys are the private keys a measurement's certificates use.
type keys struct {
	name string
	// template is the privateKey of a certificate template, empty for the defaults (ECDSA P-256).
	template string
}

var (
	ecdsa   = keys{name: "ecdsa-p256"}
	rsa4096 = keys{name: "rsa-4096", template: "{algorithm: RSA, size: 4096}"}
)

// setup is what one measurement applies and waits for.
type setup struct {
	name string
	// manifest is what is applied, for the keys.
	manifest func(k keys) string
	// expected are the objects that must turn Running; certificates is the least number of
	// Certificates that must be Ready.
	expected     []string
	certificates int
}

var (
	rootShardAlone = setup{name: "rootshard", manifest: func(k keys) string { return rootShardManifest(k, false) },
		expected: []string{"RootShard/root"}, certificates: 1}
	wholeSetup = setup{name: "setup", manifest: wholeSetupManifest,
		expected: []string{"RootShard/root", "Shard/shard-1", "FrontProxy/edge", "CacheServer/cache"}, certificates: 1}
	// certManagerChain is the anchor: cert-manager alone issuing a chain of the depth of a
	// setup's (a self-signed root, a CA Issuer, an intermediate, a CA Issuer, a leaf).
	certManagerChain = setup{name: "cert-manager-chain", manifest: chainManifest, certificates: 3}
)

// BenchmarkReady measures the wall time from `kubectl apply` to Running with every
// Certificate Ready, for a RootShard alone and for a whole setup, with the default keys and
// with RSA 4096, next to cert-manager issuing a chain of the same depth on its own. kwok
// starts the pods without its simulated delays (instantPods).
func BenchmarkReady(b *testing.B) {
	e := newEntry("ready")
	e.Timelines = map[string][]Milestone{}
	took := map[string]time.Duration{}
	for _, k := range []keys{ecdsa, rsa4096} {
		for _, s := range []setup{certManagerChain, rootShardAlone, wholeSetup} {
			name := s.name + "-" + k.name
			b.Run(name, func(b *testing.B) {
				t, err := measureReady(b, name, s, k)
				if err != nil {
					b.Fatal(err)
				}
				took[name] = t.doneAt
				milestones := t.sorted()
				e.add(b, name, t.doneAt.Seconds(), "s")
				e.add(b, name+"/certificates", lastSeen(milestones, "Certificate"), "certs-s")
				e.Timelines[name] = milestones
				t.print("ready: " + name)
			})
		}
	}
	for _, k := range []keys{ecdsa, rsa4096} {
		chain := took[certManagerChain.name+"-"+k.name]
		if chain == 0 {
			continue
		}
		for _, s := range []setup{rootShardAlone, wholeSetup} {
			if d := took[s.name+"-"+k.name]; d > 0 {
				e.ratio("%s with %s: %.1fs = %.1f× cert-manager's chain alone (%.1fs)", s.name, k.name, d.Seconds(), d.Seconds()/chain.Seconds(), chain.Seconds())
			}
		}
	}
	e.save(b)
}

// lastSeen is when the last milestone of kind was seen, in seconds after the apply.
func lastSeen(milestones []Milestone, kind string) float64 {
	last := 0.0
	for _, m := range milestones {
		if m.Kind == kind {
			last = max(last, m.Seen)
		}
	}
	return last
}

// measureReady applies s with keys k in a namespace of its own and returns its timeline once
// it is complete.
func measureReady(b *testing.B, name string, s setup, k keys) (*timeline, error) {
	ctx, cancel := context.WithTimeout(b.Context(), readyTimeout)
	defer cancel()
	ns := "bench-ready-" + name
	if err := createNamespace(ctx, ns); err != nil {
		return nil, err
	}
	path := filepath.Join(b.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(s.manifest(k)), 0o600); err != nil {
		return nil, err
	}
	t := newTimeline(s.expected, s.certificates)
	if err := t.watch(ctx, ns); err != nil {
		return nil, err
	}
	t.begin()
	if out, err := stack.Kubectl(ctx, "apply", "-n", ns, "-f", path); err != nil {
		return nil, fmt.Errorf("kubectl apply: %v: %s", err, out)
	}
	select {
	case <-t.done:
		return t, nil
	case <-ctx.Done():
		t.print("ready: " + name + " (incomplete)")
		return nil, fmt.Errorf("%s is not Running with every Certificate Ready after %s", name, readyTimeout)
	}
}

// instantPods is a deploymentTemplate whose pods kwok starts and readies at once: its stages
// otherwise wait 1 to 6 s at random at each step, which would measure kwok's simulated
// kubelet rather than the setup.
var instantPods = func() string {
	var sb strings.Builder
	sb.WriteString("  deploymentTemplate:\n    spec:\n      template:\n        metadata:\n          annotations:\n")
	for _, stage := range []string{"pod-create", "pod-init-container-running", "pod-init-container-completed", "pod-ready"} {
		fmt.Fprintf(&sb, "            %s.stage.kwok.x-k8s.io/delay: 0s\n            %s.stage.kwok.x-k8s.io/jitter-delay: 0s\n", stage, stage)
	}
	return sb.String()
}()

// templates are certificateTemplates giving every role the keys k, indented for a spec.
func templates(roles []string, k keys) string {
	if k.template == "" {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("  certificateTemplates:\n")
	for _, role := range roles {
		fmt.Fprintf(&sb, "    %s: {spec: {privateKey: %s}}\n", role, k.template)
	}
	return sb.String()
}

func rootShardManifest(k keys, withCache bool) string {
	m := `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root
spec:
  external: {hostname: kcp.example.com, port: 6443}
  etcd: {endpoints: ["https://etcd.example.com:2379"]}
` + templates(validation.RootShardCertificateRoles, k) + instantPods
	if withCache {
		m += "  cache: {ref: {name: cache}}\n"
	}
	return m
}

func wholeSetupManifest(k keys) string {
	// "root-ca" is an alias of the CacheServer's "ca": one or the other.
	cacheRoles := slices.DeleteFunc(slices.Clone(validation.CacheServerCertificateRoles), func(r string) bool { return r == "root-ca" })
	return rootShardManifest(k, true) + `---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: shard-1
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard.example.com:2379"]}
` + templates(validation.ShardCertificateRoles, k) + instantPods + `---
apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {ref: {name: root}}
` + templates(validation.FrontProxyCertificateRoles, k) + instantPods + `---
apiVersion: operator.kcp.io/v1alpha1
kind: CacheServer
metadata:
  name: cache
spec:
` + templates(cacheRoles, k) + instantPods
}

func chainManifest(k keys) string {
	key := ""
	if k.template != "" {
		key = "  privateKey: " + k.template + "\n"
	}
	certificate := func(name, issuer string, ca bool) string {
		return fmt.Sprintf(`---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: %s
spec:
  secretName: %s
  commonName: %s
  isCA: %t
  dnsNames: [%s.example.com]
  issuerRef: {name: %s}
%s`, name, name, name, ca, name, issuer, key)
	}
	issuer := func(name, spec string) string {
		return fmt.Sprintf("---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: %s\nspec: %s\n", name, spec)
	}
	return issuer("selfsigned", "{selfSigned: {}}") +
		certificate("root", "selfsigned", true) + issuer("root", "{ca: {secretName: root}}") +
		certificate("intermediate", "root", true) + issuer("intermediate", "{ca: {secretName: intermediate}}") +
		certificate("leaf", "intermediate", false)
}
