package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// rotatedAuthorities are the CAs the rotation benchmark rotates: the server CA, whose
// rotation every shard's serving certificate and every client's bundle follow, and the client
// CA, which every shard trusts.
var rotatedAuthorities = []string{"server", "client"}

// BenchmarkRotation measures a CA rotation of a RootShard with 1, 5 and 20 Shards: Start to
// Prepared (the new CAs issued, both trusted everywhere, new leaves from the new CAs) and
// Complete to Completed (the certificates switched, the old CAs dropped from every bundle and
// the pods' mounts), each next to the setup's own ready time (apply to Running) in the same
// run, so that a rotation's cost is known as installations grow.
func BenchmarkRotation(b *testing.B) {
	e := newEntry("rotation")
	for _, shards := range []int{1, 5, 20} {
		name := fmt.Sprintf("shards-%d", shards)
		b.Run(name, func(b *testing.B) {
			m, err := measureRotation(b, name, shards)
			if err != nil {
				b.Fatal(err)
			}
			e.add(b, name+"/ready", m.ready.Seconds(), "s")
			e.add(b, name+"/prepared", m.prepared.Seconds(), "s")
			e.add(b, name+"/completed", m.completed.Seconds(), "s")
			e.ratio("%d shard(s): Start to Prepared %.1fs = %.2f× and Complete to Completed %.1fs = %.2f× the setup's ready time (%.1fs)",
				shards, m.prepared.Seconds(), m.prepared.Seconds()/m.ready.Seconds(),
				m.completed.Seconds(), m.completed.Seconds()/m.ready.Seconds(), m.ready.Seconds())
		})
	}
	e.save(b)
}

// rotationTimes are one measurement's figures.
type rotationTimes struct{ ready, prepared, completed time.Duration }

// measureRotation applies a RootShard and shards Shards in a namespace of their own, waits
// until they are Running, then rotates rotatedAuthorities through the rotation subresource.
func measureRotation(b *testing.B, name string, shards int) (rotationTimes, error) {
	ctx, cancel := context.WithTimeout(b.Context(), 3*readyTimeout)
	defer cancel()
	ns := "bench-rotation-" + name
	if err := createNamespace(ctx, ns); err != nil {
		return rotationTimes{}, err
	}
	expected := []string{"RootShard/root"}
	manifest := rootShardManifest(ecdsa, false)
	for i := 1; i <= shards; i++ {
		shard := fmt.Sprintf("shard-%d", i)
		expected = append(expected, "Shard/"+shard)
		manifest += fmt.Sprintf(`---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: %s
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-%s.example.com:2379"]}
`, shard, shard) + instantPods
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		return rotationTimes{}, err
	}
	t := newTimeline(expected, 1)
	if err := t.watch(ctx, ns); err != nil {
		return rotationTimes{}, err
	}
	t.begin()
	if out, err := stack.Kubectl(ctx, "apply", "-n", ns, "-f", path); err != nil {
		return rotationTimes{}, fmt.Errorf("kubectl apply: %v: %s", err, out)
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		t.print("rotation: " + name + " (incomplete)")
		return rotationTimes{}, fmt.Errorf("%s is not Running with every Certificate Ready", name)
	}
	m := rotationTimes{ready: t.doneAt}
	var err error
	if m.prepared, err = rotateTo(ctx, dir, ns, "Start", operatorv1alpha1.CARotationPrepared); err != nil {
		return m, err
	}
	if m.completed, err = rotateTo(ctx, dir, ns, "Complete", operatorv1alpha1.CARotationCompleted); err != nil {
		return m, err
	}
	return m, nil
}

// rotateTo asks the rotation subresource of the RootShard root in ns for step, and returns how
// long it took until every rotated authority's rotation was in phase.
func rotateTo(ctx context.Context, dir, ns, step string, phase operatorv1alpha1.CARotationPhase) (time.Duration, error) {
	body, err := json.Marshal(map[string]any{"apiVersion": "operator.kcp.io/v1alpha1", "kind": "CARotation",
		"spec": map[string]any{"phase": step, "authorities": rotatedAuthorities}})
	if err != nil {
		return 0, err
	}
	path := filepath.Join(dir, strings.ToLower(step)+".json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return 0, err
	}
	start := time.Now()
	if out, err := stack.Kubectl(ctx, "create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/"+ns+"/rootshards/root/rotation", "-f", path); err != nil {
		return 0, fmt.Errorf("%s: %v: %s", step, err, out)
	}
	for {
		phases, err := rotationPhases(ctx, ns)
		if err != nil {
			return 0, err
		}
		reached := true
		for _, a := range rotatedAuthorities {
			reached = reached && phases[a] == phase
		}
		if reached {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("the rotations of %v never became %s after %s: %v", rotatedAuthorities, phase, step, phases)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rotationPhases are the phases of the RootShard root's rotations in ns, by authority.
func rotationPhases(ctx context.Context, ns string) (map[string]operatorv1alpha1.CARotationPhase, error) {
	u, err := stack.Dynamic.Resource(operatorv1alpha1.SchemeGroupVersion.WithResource("rootshards")).Namespace(ns).Get(ctx, "root", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var rs operatorv1alpha1.RootShard
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rs); err != nil {
		return nil, err
	}
	phases := map[string]operatorv1alpha1.CARotationPhase{}
	for _, r := range rs.Status.Rotations {
		phases[r.Authority] = r.Phase
	}
	return phases, nil
}
