package localstack

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// certManagerController is the name of cert-manager's controller process and log.
const certManagerController = "cert-manager-controller"

// certManagerCRDs are the CRDs the stack installs, and waits for.
var certManagerCRDs = []string{"issuers.cert-manager.io", "clusterissuers.cert-manager.io", "certificates.cert-manager.io", "certificaterequests.cert-manager.io"}

// certManagerCRDFiles are the manifests of cert-manager's CRDs.
func (s *Stack) certManagerCRDFiles() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(filepath.Dir(s.binDir), "cert-manager-crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no cert-manager CRDs in _output/cert-manager-crds: run `make tools`")
	}
	return files, nil
}

// ApplyCertManagerCRDs installs cert-manager's CRDs with server-side apply (two are too large
// for the last-applied annotation) and waits until they are established.
func (s *Stack) ApplyCertManagerCRDs(ctx context.Context) error {
	files, err := s.certManagerCRDFiles()
	if err != nil {
		return err
	}
	args := []string{"apply", "--server-side", "--force-conflicts", "--field-manager=kcp-setups-local-stack"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	if out, err := s.Kubectl(ctx, args...); err != nil {
		return fmt.Errorf("applying cert-manager CRDs: %w: %s", err, out)
	}
	return Poll(ctx, "cert-manager CRDs to be established", time.Minute, nil, func(ctx context.Context) (bool, error) {
		for _, name := range certManagerCRDs {
			crd, err := s.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil || !UnstructuredCondition(crd, "Established") {
				return false, err
			}
		}
		return true, nil
	})
}

// DeleteCertManagerCRDs uninstalls cert-manager's CRDs, and with them every cert-manager
// object, and waits until kube-apiserver no longer serves cert-manager.io/v1.
func (s *Stack) DeleteCertManagerCRDs(ctx context.Context) error {
	files, err := s.certManagerCRDFiles()
	if err != nil {
		return err
	}
	if err := s.waitForCertManagerCaches(ctx); err != nil {
		return err
	}
	args := []string{"delete", "--ignore-not-found", "--timeout=2m"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	if out, err := s.Kubectl(ctx, args...); err != nil {
		return fmt.Errorf("deleting cert-manager CRDs: %w: %s", err, out)
	}
	return Poll(ctx, "cert-manager.io/v1 to be gone", 2*time.Minute, nil, func(ctx context.Context) (bool, error) {
		for _, name := range certManagerCRDs {
			if _, err := s.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		_, err := s.Kube.Discovery().ServerResourcesForGroupVersion("cert-manager.io/v1")
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// StartCertManager starts cert-manager's controllers, in place of a stopped one; it does
// nothing while they run.
func (s *Stack) StartCertManager() error {
	for _, p := range s.procs {
		if done, _ := p.Exited(); p.name == certManagerController && !done {
			return nil
		}
	}
	p, err := StartProcess(s.Path("logs"), certManagerController, s.Bin(certManagerController),
		"--kubeconfig="+s.AdminKubeconfig, "--cluster-resource-namespace=kube-system")
	if err != nil {
		return err
	}
	for i, old := range s.procs {
		if old.name == certManagerController {
			s.procs[i] = p
			return nil
		}
	}
	s.procs = append(s.procs, p)
	return nil
}

// StopCertManager stops cert-manager's controllers with SIGTERM; its CRDs stay.
func (s *Stack) StopCertManager() {
	for _, p := range s.procs {
		if p.name == certManagerController {
			p.Stop()
		}
	}
}

// ServerExited returns an error when the kcp-setups server has exited, and nil while it
// runs.
func (s *Stack) ServerExited() error {
	if s.server == nil {
		return fmt.Errorf("the kcp-setups server was never started")
	}
	_, err := s.server.Exited()
	return err
}

// waitForCertManagerCaches waits until kube-apiserver's watch cache of every cert-manager
// resource is ready. A CRD deleted before then can stay for many minutes: its finalizer
// lists the resource to delete what is left, gets "storage is (re)initializing", and retries
// with a backoff that soon grows past any test's patience.
func (s *Stack) waitForCertManagerCaches(ctx context.Context) error {
	return Poll(ctx, "kube-apiserver's caches of cert-manager's resources", 2*time.Minute, nil, func(ctx context.Context) (bool, error) {
		crds, err := s.Dynamic.Resource(crdGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, crd := range crds.Items {
			group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
			plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			if !strings.HasSuffix(group, "cert-manager.io") {
				continue
			}
			for _, v := range versions {
				version, _ := v.(map[string]any)
				if served, _ := version["served"].(bool); !served {
					continue
				}
				name, _ := version["name"].(string)
				gvr := schema.GroupVersionResource{Group: group, Version: name, Resource: plural}
				// resourceVersion 0 is served from the watch cache, or fails while it is not ready.
				if _, err := s.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1}); err != nil {
					return false, nil
				}
			}
		}
		return true, nil
	})
}
