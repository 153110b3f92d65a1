package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// signingWatch polls, until stopped, the Deployments of a set of shards during a rotation
// of the service-account keys, and records every moment at which the key one of them signs
// with (the Secret its --service-account-private-key-file mounts) is not among the keys
// another verifies with: a token of it would be refused there.
type signingWatch struct {
	mu       sync.Mutex
	moments  int
	broken   []string
	stop     context.CancelFunc
	finished chan struct{}
}

// watchSigning starts a signingWatch of the Deployments of ns.
func watchSigning(ctx context.Context, ns string, deployments []string) *signingWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &signingWatch{stop: cancel, finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		for ctx.Err() == nil {
			if problem, ok := signingMoment(ctx, ns, deployments); ok {
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

// signingMoment reads each Deployment's signing key and verifying keys once; ok is false when
// a read failed (that moment is not counted), problem says which signing key another
// Deployment would refuse.
func signingMoment(ctx context.Context, ns string, deployments []string) (problem string, ok bool) {
	signing := map[string][]byte{}
	verifying := map[string][][]byte{}
	for _, name := range deployments {
		d, err := stack.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
			return "", false
		}
		for _, arg := range d.Spec.Template.Spec.Containers[0].Args {
			flag, file, found := strings.Cut(arg, "=")
			if !found || (flag != "--service-account-private-key-file" && flag != "--service-account-key-file") {
				continue
			}
			secret := secretAt(d, path.Dir(file))
			if secret == "" {
				return "", false
			}
			s, err := stack.Kube.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
			if err != nil {
				return "", false
			}
			certs := certsIn(s.Data["tls.crt"])
			if flag == "--service-account-private-key-file" {
				if len(certs) == 0 {
					return "", false
				}
				signing[name] = certs[0].RawSubjectPublicKeyInfo
				continue
			}
			verifying[name] = append(verifying[name], publicKeys(certs)...)
		}
	}
	for signer, key := range signing {
		for _, verifier := range deployments {
			if !containsKey(verifying[verifier], key) {
				return fmt.Sprintf("%s signs with a key %s does not verify", signer, verifier), true
			}
		}
	}
	return "", true
}

// secretAt is the Secret mounted at dir in d's pods, or "".
func secretAt(d *appsv1.Deployment, dir string) string {
	spec := d.Spec.Template.Spec
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
