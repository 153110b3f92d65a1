package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/test/framework"
)

// The link benchmark's names: the home namespace of the suite's stack, and the remote one of
// the second cluster it starts.
const (
	linkHome   = "bench-link-home"
	linkRemote = "bench-link-remote"
	linkName   = "eu-1"
	// linkedTrust is the linked Shard shard-1's bundle of the server CAs in the second
	// cluster, which its pods mount (reference.JoinedName: <shard>-shard-root).
	linkedTrust = "shard-1-shard-root-server-ca-trust"
	// localDeployment is the local Shard shard-1's Deployment, and caServerVolume the volume
	// by which its pods trust the server CAs.
	localDeployment = "shard-1-shard-kcp"
	caServerVolume  = "ca-server"
)

// BenchmarkLink measures, in one run, how long the Start of a rotation of a
// RootShard's server CA takes to reach a Shard joined over a Link from a second cluster,
// next to a local Shard of the same RootShard (the anchor): from the rotation's Start to
// (a) the local Shard's Deployment mounting a ca-server bundle that holds both server CAs,
// (b) the linked Shard's bundle in the second cluster holding both, and (c) the home's Link
// reporting, in status.consumers, that the linked Shard trusts both. The second cluster (its
// own etcd, kube-apiserver, cert-manager, kwok and kcp-setups server) runs for this benchmark
// alone.
func BenchmarkLink(b *testing.B) {
	e := newEntry("link")
	ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
	defer cancel()
	ops, err := clientset.NewForConfig(stack.AdminConfig)
	if err != nil {
		b.Fatal(err)
	}

	second, err := framework.Start(ctx, framework.Options{Progress: func(format string, args ...any) {
		fmt.Printf("bench: link: cluster 2: "+format+"\n", args...)
	}})
	if err != nil {
		b.Fatalf("starting a second cluster: %v", err)
	}
	defer second.Stop()
	if err := linkedSetup(ctx, b, second); err != nil {
		second.DumpLogs(os.Stderr, 40)
		b.Fatal(err)
	}

	took, err := measureLinkRotation(ctx, ops, second)
	if err != nil {
		second.DumpLogs(os.Stderr, 40)
		b.Fatal(err)
	}
	// Units of their own: go test keeps one metric per unit.
	e.add(b, "local-shard-trusts-both", took.local.Seconds(), "local-s")
	e.add(b, "linked-shard-trusts-both", took.linked.Seconds(), "linked-s")
	e.add(b, "link-reports-both", took.reported.Seconds(), "reported-s")
	e.add(b, "linked/local", took.linked.Seconds()/took.local.Seconds(), "x")
	e.ratio("server CA Start to both CAs trusted: the linked Shard in a second cluster %.2fs = %.2f× the local Shard (%.2fs); the home's Link reports it after %.2fs",
		took.linked.Seconds(), took.linked.Seconds()/took.local.Seconds(), took.local.Seconds(), took.reported.Seconds())
	e.save(b)
}

// linkedSetup applies the home (a RootShard with a local Shard and a Link) on the suite's
// stack and the linked Shard in the second cluster from the bootstrap Secret, copied once,
// and waits until the home's Link reports what the linked Shard trusts of the server CA.
func linkedSetup(ctx context.Context, b *testing.B, second *framework.Stack) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := createNamespace(ctx, linkHome); err != nil {
		return err
	}
	home := framework.RootShardManifest("root", "kcp.example.com", 6443) + "  shardBaseURL: https://root.cluster-1.example.com:6443\n" + instantPods +
		"---\n" + shardManifest("shard-1", "{ref: {name: root}}") +
		`---
apiVersion: operator.kcp.io/v1alpha1
kind: Link
metadata:
  name: ` + linkName + `
spec:
  rootShardRef: {name: root}
  identity: eu-1.links.example.com
  consumers: [Shard]
  dnsNames: ["shard-1-shard-kcp", "*.` + linkRemote + `", "*.` + linkRemote + `.svc", "*.` + linkRemote + `.svc.cluster.local"]
`
	if err := applyOn(ctx, b, stack, linkHome, home); err != nil {
		return err
	}
	for _, object := range []string{"rootshard/root", "shard/shard-1"} {
		if err := waitOn(ctx, stack, linkHome, object, "Available"); err != nil {
			return err
		}
	}
	if err := waitOn(ctx, stack, linkHome, "link/"+linkName, "Ready"); err != nil {
		return err
	}

	bootstrap := linkpki.BootstrapName(linkName)
	if _, err := second.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: linkRemote}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if out, err := framework.CopyReferenceSecret(ctx, stack, linkHome, bootstrap, second, linkRemote); err != nil {
		return fmt.Errorf("copying the bootstrap Secret: %v: %s", err, out)
	}
	if err := applyOn(ctx, b, second, linkRemote, shardManifest("shard-1", "{link: {secretRef: {name: "+bootstrap+"}}}")); err != nil {
		return err
	}
	for _, condition := range []string{"LinkReady", "Available"} {
		if err := waitOn(ctx, second, linkRemote, "shard/shard-1", condition); err != nil {
			return err
		}
	}
	ops, err := clientset.NewForConfig(stack.AdminConfig)
	if err != nil {
		return err
	}
	for {
		if l, err := ops.OperatorV1alpha1().Links(linkHome).Get(ctx, linkName, metav1.GetOptions{}); err == nil && len(reportedServerTrust(l)) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Link %s/%s never reported what the linked Shard trusts of the server CA", linkHome, linkName)
		case <-time.After(time.Second):
		}
	}
}

// shardManifest is the Shard name of the RootShard rootShard (its spec.rootShard), with
// kwok's delays off for its pods.
func shardManifest(name, rootShard string) string {
	return `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: ` + name + `
spec:
  rootShard: ` + rootShard + `
  etcd: {endpoints: ["https://etcd-` + name + `.example.com:2379"]}
` + instantPods
}

// applyOn applies manifest to ns of the stack s.
func applyOn(ctx context.Context, b *testing.B, s *framework.Stack, ns, manifest string) error {
	path := filepath.Join(b.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		return err
	}
	if out, err := s.Kubectl(ctx, "apply", "-n", ns, "-f", path); err != nil {
		return fmt.Errorf("kubectl apply: %v: %s", err, out)
	}
	return nil
}

// waitOn waits for the condition of object in ns of the stack s.
func waitOn(ctx context.Context, s *framework.Stack, ns, object, condition string) error {
	if out, err := s.Kubectl(ctx, "wait", "-n", ns, "--for=condition="+condition, object, "--timeout=5m"); err != nil {
		return fmt.Errorf("%s in %s is not %s: %v: %s", object, ns, condition, err, out)
	}
	return nil
}

// reportedServerTrust are the server CA fingerprints the home's Link l reports its linked
// Shard's pods trust.
func reportedServerTrust(l *operatorv1alpha1.Link) []string {
	for _, c := range l.Status.Consumers {
		if c.Kind != "Shard" || c.Namespace != linkRemote || c.Name != "shard-1" {
			continue
		}
		for _, t := range c.Trust {
			if t.CA == string(pki.ServerCA) {
				return t.Trusted
			}
		}
	}
	return nil
}

// linkRotationTimes are the times from a rotation's Start to each side trusting both CAs.
type linkRotationTimes struct{ local, linked, reported time.Duration }

// measureLinkRotation starts the rotation of the server CA and polls the three sides until
// each trusts both CAs.
func measureLinkRotation(ctx context.Context, ops clientset.Interface, second *framework.Stack) (linkRotationTimes, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// A CA's Secret holds its chain, the CA first.
	oldCA, err := fingerprintsOf(ctx, stack, linkHome, pki.CAName("root", pki.ServerCA))
	if err != nil {
		return linkRotationTimes{}, fmt.Errorf("the server CA before the rotation: %w", err)
	}
	body, err := json.Marshal(operatorv1alpha1.CARotation{
		TypeMeta: metav1.TypeMeta{APIVersion: operatorv1alpha1.SchemeGroupVersion.String(), Kind: "CARotation"},
		Spec:     operatorv1alpha1.CARotationSpec{Phase: operatorv1alpha1.CARotationStart, Authorities: []string{string(pki.ServerCA)}},
	})
	if err != nil {
		return linkRotationTimes{}, err
	}
	start := time.Now()
	if _, err := ops.OperatorV1alpha1().RESTClient().Post().AbsPath("/apis/operator.kcp.io/v1alpha1/namespaces/"+linkHome+"/rootshards/root/rotation").
		SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx); err != nil {
		return linkRotationTimes{}, fmt.Errorf("starting the rotation of the server CA: %w", err)
	}
	fmt.Printf("bench: link: the rotation of the server CA started (%.2fs for the request)\n", time.Since(start).Seconds())

	var took linkRotationTimes
	var newCA string
	both := func(fingerprints []string) bool {
		return newCA != "" && slices.Contains(fingerprints, oldCA[0]) && slices.Contains(fingerprints, newCA)
	}
	for took.local == 0 || took.linked == 0 || took.reported == 0 {
		if newCA == "" {
			if next, err := fingerprintsOf(ctx, stack, linkHome, pki.SlotName(pki.CAName("root", pki.ServerCA), 1)); err == nil {
				newCA = next[0]
			}
		}
		if took.local == 0 && both(localTrust(ctx)) {
			took.local = time.Since(start)
		}
		if took.linked == 0 {
			if f, err := fingerprintsOf(ctx, second, linkRemote, linkedTrust); err == nil && both(f) {
				took.linked = time.Since(start)
			}
		}
		if took.reported == 0 {
			if l, err := ops.OperatorV1alpha1().Links(linkHome).Get(ctx, linkName, metav1.GetOptions{}); err == nil && both(reportedServerTrust(l)) {
				took.reported = time.Since(start)
			}
		}
		select {
		case <-ctx.Done():
			return took, fmt.Errorf("after %s, not every side trusts both server CAs (the new one %q): local %s, linked %s, reported by the Link %s",
				readyTimeout, newCA, took.local, took.linked, took.reported)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return took, nil
}

// localTrust are the fingerprints of the server CAs the local Shard's Deployment mounts.
func localTrust(ctx context.Context) []string {
	d, err := stack.Kube.AppsV1().Deployments(linkHome).Get(ctx, localDeployment, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == caServerVolume && v.Secret != nil {
			f, _ := fingerprintsOf(ctx, stack, linkHome, v.Secret.SecretName)
			return f
		}
	}
	return nil
}

// fingerprintsOf are the fingerprints of the certificates in tls.crt of the Secret ns/name of
// the stack s.
func fingerprintsOf(ctx context.Context, s *framework.Stack, ns, name string) ([]string, error) {
	sec, err := s.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	f, err := pki.Fingerprints(sec.Data[corev1.TLSCertKey])
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", ns, name, err)
	}
	return f, nil
}
