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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// The realized part of the scale benchmark brings RootShards to Running with cert-manager
// issuing every certificate and kwok running the pods: first one alone, the anchor, then
// realizedSetups at once. It is what cert-manager on 2 cores allows; the stored steps go
// further without it.
var (
	realizedSetups = 50
	// realizedPerNamespace setups share a namespace, as a team's would.
	realizedPerNamespace = 10
	// realizedTimeout bounds the wait for Running and for a deletion to finish.
	realizedTimeout = 15 * time.Minute
)

var certificatesGVR = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}

// realized is what one realized step measured.
type realized struct {
	setups int
	// running is from the apply until every setup was Running, median until half were.
	running, median time.Duration
	// certificates are the Certificates of the step's namespaces, all Ready.
	certificates int
	rss          float64
	// idleWrites are the host writes in idleWindow with nothing changing as kube-apiserver
	// counted them (anyone's: cert-manager's and kube-controller-manager's too), and
	// idleServerWrites the server's own.
	idleWrites, idleServerWrites float64
	// resync is from a restart of the server until its controllers settled; resyncWrites
	// and resyncServerWrites are the host writes of it.
	resync                           time.Duration
	resyncWrites, resyncServerWrites float64
	// deleted is from `kubectl delete` until no RootShard and no Certificate is left.
	deleted time.Duration
}

// realizedNamespace is the namespace of the step's i-th setup.
func realizedNamespace(step string, i int) string {
	return fmt.Sprintf("bench-realized-%s-%d", step, i/realizedPerNamespace)
}

// realizedManifest is n RootShards, with the default keys and pods that kwok starts at once,
// spread over namespaces of realizedPerNamespace.
func realizedManifest(step string, n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `---
apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root-%03d
  namespace: %s
spec:
  external: {hostname: kcp-%03d.example.com, port: 6443}
  etcd: {endpoints: ["https://etcd.example.com:2379"]}
`, i, realizedNamespace(step, i), i)
		sb.WriteString(instantPods)
	}
	return sb.String()
}

// scaleRealized applies n RootShards at once and measures until all are Running, then the
// idle host writes, a resync after a restart, and their deletion.
func scaleRealized(ctx context.Context, b *testing.B, step string, n int) (realized, error) {
	r := realized{setups: n}
	ctx, cancel := context.WithTimeout(ctx, 3*realizedTimeout)
	defer cancel()
	var namespaces []string
	for i := 0; i < n; i += realizedPerNamespace {
		ns := realizedNamespace(step, i)
		if err := createNamespace(ctx, ns); err != nil {
			return r, err
		}
		namespaces = append(namespaces, ns)
	}
	path := filepath.Join(b.TempDir(), "realized.yaml")
	if err := os.WriteFile(path, []byte(realizedManifest(step, n)), 0o600); err != nil {
		return r, err
	}
	ops, err := clientset.NewForConfig(stack.AdminConfig)
	if err != nil {
		return r, err
	}

	start := time.Now()
	if out, err := stack.Kubectl(ctx, "apply", "-f", path); err != nil {
		return r, fmt.Errorf("kubectl apply: %v: %s", err, out)
	}
	ready, err := waitRunning(ctx, ops, namespaces, n, start)
	if err != nil {
		return r, err
	}
	slices.Sort(ready)
	r.running, r.median = ready[len(ready)-1], ready[(len(ready)-1)/2]
	if r.certificates, err = readyCertificates(ctx, namespaces); err != nil {
		return r, err
	}

	// Settled: the health checks of Running setups requeue them, so the background is
	// measured now.
	background, err := backgroundReconciles(ctx)
	if err != nil {
		return r, err
	}
	if _, err := settle(ctx, background, 0); err != nil {
		return r, err
	}
	if r.rss, err = serverRSS(); err != nil {
		return r, err
	}
	before, err := serverMetrics(ctx)
	if err != nil {
		return r, err
	}
	if r.idleWrites, err = countHostWrites(ctx, func() error { return idle(ctx) }); err != nil {
		return r, err
	}
	after, err := serverMetrics(ctx)
	if err != nil {
		return r, err
	}
	r.idleServerWrites = after.sum("kcp_setups_host_writes_total", nil) - before.sum("kcp_setups_host_writes_total", nil)

	// A restart reconciles every stored setup again: the realized ones must write nothing.
	all, err := ops.OperatorV1alpha1().RootShards("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return r, err
	}
	if r.resync, r.resyncWrites, err = resyncAfterRestart(ctx, background, float64(len(all.Items))); err != nil {
		return r, err
	}
	fresh, err := serverMetrics(ctx)
	if err != nil {
		return r, err
	}
	r.resyncServerWrites = fresh.sum("kcp_setups_host_writes_total", nil)

	deleteStart := time.Now()
	for _, ns := range namespaces {
		if out, err := stack.Kubectl(ctx, "delete", "rootshards", "--all", "-n", ns, "--wait=false"); err != nil {
			return r, fmt.Errorf("kubectl delete: %v: %s", err, out)
		}
	}
	if err := waitGone(ctx, ops, namespaces); err != nil {
		return r, err
	}
	r.deleted = time.Since(deleteStart)
	// The namespace controller's deletes of what is left in them (the ServiceAccount, the root
	// CA ConfigMap) would count as host writes in the next step: wait for them to go.
	for _, ns := range namespaces {
		if err := stack.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			return r, err
		}
	}
	return r, wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, realizedTimeout, true, func(ctx context.Context) (bool, error) {
		for _, ns := range namespaces {
			_, err := stack.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitRunning polls the namespaces until n RootShards are Running and returns when each was
// first seen Running, after start.
func waitRunning(ctx context.Context, ops clientset.Interface, namespaces []string, n int, start time.Time) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, realizedTimeout)
	defer cancel()
	seen := map[string]time.Duration{}
	for len(seen) < n {
		for _, ns := range namespaces {
			list, err := ops.OperatorV1alpha1().RootShards(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return nil, err
			}
			for _, rs := range list.Items {
				key := ns + "/" + rs.Name
				if _, ok := seen[key]; !ok && rs.Status.Phase == operatorv1alpha1.PhaseRunning {
					seen[key] = time.Since(start)
				}
			}
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d RootShards Running after %s", len(seen), n, realizedTimeout)
		}
	}
	ready := make([]time.Duration, 0, len(seen))
	for _, d := range seen {
		ready = append(ready, d)
	}
	return ready, nil
}

// readyCertificates counts the Certificates of the namespaces and fails unless each is Ready.
func readyCertificates(ctx context.Context, namespaces []string) (int, error) {
	count := 0
	for _, ns := range namespaces {
		list, err := stack.Dynamic.Resource(certificatesGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		for _, c := range list.Items {
			if !certificateReady(c) {
				return 0, fmt.Errorf("Certificate %s/%s is not Ready although its RootShard is Running", ns, c.GetName())
			}
			count++
		}
	}
	return count, nil
}

func certificateReady(c unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, raw := range conditions {
		if cond, ok := raw.(map[string]any); ok && cond["type"] == "Ready" && cond["status"] == "True" {
			return true
		}
	}
	return false
}

// waitGone waits until the namespaces hold no RootShard and no Certificate.
func waitGone(ctx context.Context, ops clientset.Interface, namespaces []string) error {
	ctx, cancel := context.WithTimeout(ctx, realizedTimeout)
	defer cancel()
	for {
		left := 0
		for _, ns := range namespaces {
			shards, err := ops.OperatorV1alpha1().RootShards(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("waiting for the deletion: %w", err)
			}
			certs, err := stack.Dynamic.Resource(certificatesGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("waiting for the deletion: %w", err)
			}
			left += len(shards.Items) + len(certs.Items)
		}
		if left == 0 {
			return nil
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("%d RootShards and Certificates left %s after the delete", left, realizedTimeout)
		}
	}
}

// reportRealized records and prints a realized step, and fails b if a setup that did not
// change made the server write to the host.
func reportRealized(b *testing.B, e *entry, r realized) {
	name := fmt.Sprintf("realized-%d/", r.setups)
	e.add(b, name+"running", r.running.Seconds(), "running-s")
	e.add(b, name+"running-median", r.median.Seconds(), "median-running-s")
	e.add(b, name+"certificates", float64(r.certificates), "certificates")
	e.add(b, name+"rss", r.rss, "rss-MiB")
	e.add(b, name+"idle-writes", r.idleWrites, "idle-writes")
	e.add(b, name+"idle-server-writes", r.idleServerWrites, "idle-server-writes")
	e.add(b, name+"resync", r.resync.Seconds(), "resync-s")
	e.add(b, name+"resync-writes", r.resyncWrites, "resync-writes")
	e.add(b, name+"resync-server-writes", r.resyncServerWrites, "resync-server-writes")
	e.add(b, name+"deleted", r.deleted.Seconds(), "deleted-s")
	fmt.Printf("scale: %4d realized: all Running %5.1fs after the apply (half %5.1fs), %d Certificates Ready, RSS %4.0f MiB; "+
		"%.0f host writes in %s idle (server: %.0f); resync after a restart %5.1fs, %.0f host writes (server: %.0f); deleted in %5.1fs\n",
		r.setups, r.running.Seconds(), r.median.Seconds(), r.certificates, r.rss, r.idleWrites, idleWindow, r.idleServerWrites,
		r.resync.Seconds(), r.resyncWrites, r.resyncServerWrites, r.deleted.Seconds())
	if r.idleServerWrites != 0 || r.resyncWrites != 0 || r.resyncServerWrites != 0 {
		b.Errorf("FAIL: %d realized setups that did not change were written to: %.0f server writes idle, %.0f host writes on the resync (server: %.0f), want 0",
			r.setups, r.idleServerWrites, r.resyncWrites, r.resyncServerWrites)
	}
}
