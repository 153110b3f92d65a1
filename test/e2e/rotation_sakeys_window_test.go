package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// signingWatch polls, until stopped, the Deployments of a set of shards during a rotation
// of the service-account keys, and records every moment at which a key one of them signs
// with (the Secret its --service-account-private-key-file mounts) is not among the keys
// another verifies with: a token of it would be refused there. While a Deployment rolls,
// the pods of each of its ReplicaSets run as that ReplicaSet's template was when it
// appeared: the Deployment signs with the keys of every ReplicaSet with pods, and verifies
// only the keys all of them verify.
type signingWatch struct {
	mu       sync.Mutex
	moments  int
	broken   []string
	stop     context.CancelFunc
	finished chan struct{}
}

// podKeys is what the pods of one ReplicaSet sign and verify with.
type podKeys struct {
	signing []byte
	verify  [][]byte
}

// shardKeys is what one Deployment's pods sign and verify with at a moment.
type shardKeys struct {
	signing [][]byte
	verify  [][]byte
}

// watchSigning starts a signingWatch of the Deployments of ns.
func watchSigning(ctx context.Context, ns string, deployments []string) *signingWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &signingWatch{stop: cancel, finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		seen := map[string]podKeys{} // by ReplicaSet, as it was first seen
		for ctx.Err() == nil {
			if now, ok := signingMoment(ctx, ns, deployments, seen); ok {
				problem := brokenMoment(deployments, now)
				w.mu.Lock()
				w.moments++
				if problem != "" {
					w.broken = append(w.broken, problem)
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return w
}

// Stop ends the watch and returns how many moments it observed whole, and those that broke.
func (w *signingWatch) Stop() (moments int, broken []string) {
	w.stop()
	<-w.finished
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.moments, w.broken
}

// brokenMoment says which signer's key a verifier would refuse at the moment now, or "".
func brokenMoment(deployments []string, now map[string]shardKeys) string {
	for _, signer := range deployments {
		for _, verifier := range deployments {
			for _, key := range now[signer].signing {
				if !containsKey(now[verifier].verify, key) {
					return fmt.Sprintf("%s signs with a key %s does not verify", signer, verifier)
				}
			}
		}
	}
	return ""
}

// signingMoment reads the keys of the pods of each Deployment once; ok is false when a read
// failed (that moment is not counted). seen keeps the keys of each ReplicaSet as they were
// when it first appeared, when its pods started.
func signingMoment(ctx context.Context, ns string, deployments []string, seen map[string]podKeys) (map[string]shardKeys, bool) {
	out := map[string]shardKeys{}
	for _, name := range deployments {
		d, err := stack.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, false
		}
		rss, err := stack.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
		if err != nil {
			return nil, false
		}
		var k shardKeys
		first := true
		for _, rs := range rss.Items {
			owned := slices.ContainsFunc(rs.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == d.UID })
			if !owned || rs.Status.Replicas == 0 {
				continue
			}
			keys, ok := seen[rs.Name]
			if !ok {
				if keys, ok = templateKeys(ctx, ns, rs.Spec.Template.Spec); !ok {
					return nil, false
				}
				seen[rs.Name] = keys
			}
			k.signing = append(k.signing, keys.signing)
			if first {
				k.verify, first = keys.verify, false
			} else {
				k.verify = commonKeys(k.verify, keys.verify)
			}
		}
		if first {
			return nil, false // no pods
		}
		out[name] = k
	}
	return out, true
}

// templateKeys reads the keys a pod of spec signs and verifies with, from the Secrets as they
// are.
func templateKeys(ctx context.Context, ns string, spec corev1.PodSpec) (podKeys, bool) {
	var k podKeys
	if len(spec.Containers) == 0 {
		return k, false
	}
	for _, arg := range spec.Containers[0].Args {
		flag, file, found := strings.Cut(arg, "=")
		if !found || (flag != "--service-account-private-key-file" && flag != "--service-account-key-file") {
			continue
		}
		secret := secretIn(spec, path.Dir(file))
		if secret == "" {
			return k, false
		}
		s, err := stack.Kube.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			return k, false
		}
		certs := certsIn(s.Data["tls.crt"])
		if flag == "--service-account-private-key-file" {
			if len(certs) == 0 {
				return k, false
			}
			k.signing = certs[0].RawSubjectPublicKeyInfo
			continue
		}
		k.verify = append(k.verify, publicKeys(certs)...)
	}
	return k, k.signing != nil
}

// commonKeys are the keys of a also in b.
func commonKeys(a, b [][]byte) [][]byte {
	var out [][]byte
	for _, k := range a {
		if containsKey(b, k) {
			out = append(out, k)
		}
	}
	return out
}

// secretAt is the Secret mounted at dir in d's pods, or "".
func secretAt(d *appsv1.Deployment, dir string) string { return secretIn(d.Spec.Template.Spec, dir) }

// secretIn is the Secret mounted at dir in a pod of spec, or "".
func secretIn(spec corev1.PodSpec, dir string) string {
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return v.Secret.SecretName
			}
		}
	}
	return ""
}

func publicKeys(certs []*x509.Certificate) [][]byte {
	var out [][]byte
	for _, c := range certs {
		out = append(out, c.RawSubjectPublicKeyInfo)
	}
	return out
}

func containsKey(keys [][]byte, key []byte) bool {
	for _, k := range keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	return false
}
