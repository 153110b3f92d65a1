package hostcluster

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// CertManagerGroupVersion is the API of cert-manager the controllers write to.
var CertManagerGroupVersion = cmv1.SchemeGroupVersion.String()

// certManagerResources are the resources of CertManagerGroupVersion the controllers use.
var certManagerResources = []string{"certificates", "issuers"}

// CertManagerServed reports whether a discovery answer for CertManagerGroupVersion lists
// every resource the controllers use. A NotFound answer means not served; any other error
// means that the host cannot tell now, and is returned.
func CertManagerServed(resources *metav1.APIResourceList, err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", CertManagerGroupVersion, err)
	}
	if resources == nil {
		return false, nil
	}
	for _, want := range certManagerResources {
		found := false
		for _, r := range resources.APIResources {
			found = found || r.Name == want
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// resourceDiscovery is the part of a discovery client the CertManagerAPI asks.
type resourceDiscovery interface {
	ServerResourcesForGroupVersionWithContext(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error)
}

// certManagerInformers is the part of cert-manager's informer factory the CertManagerAPI
// starts.
type certManagerInformers interface {
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
}

// CertManagerAPI tracks whether the host cluster serves cert-manager's API, as a built-in
// controller tracks an optional API: it asks discovery, and starts cert-manager's informers
// only once the API is served, because their LISTs fail until then and the controllers
// would wait for their caches forever. It asks again periodically, so that cert-manager
// installed later is picked up without a restart.
type CertManagerAPI struct {
	// AbsentPoll and PresentPoll are how long to wait before asking again, while the API is
	// absent and while it is served; SyncTimeout bounds one wait for the caches.
	AbsentPoll, PresentPoll, SyncTimeout time.Duration

	discovery resourceDiscovery
	informers certManagerInformers

	known, ready atomic.Bool
	mu           sync.Mutex
	onChange     []func()
}

// NewCertManagerAPI returns a tracker that asks discovery and starts informers, the factory
// of the Certificate and Issuer informers, once the API is served.
func NewCertManagerAPI(discovery resourceDiscovery, informers certManagerInformers) *CertManagerAPI {
	return &CertManagerAPI{AbsentPoll: 10 * time.Second, PresentPoll: time.Minute, SyncTimeout: time.Minute,
		discovery: discovery, informers: informers}
}

// Ready reports whether cert-manager's API is served and its caches are synced. A nil
// tracker (unit tests) is always ready.
func (a *CertManagerAPI) Ready() bool {
	return a == nil || a.ready.Load()
}

// Known reports whether the tracker has decided once: the controllers wait for it, so that
// a restart with cert-manager installed does not report it missing in passing.
func (a *CertManagerAPI) Known() bool {
	return a == nil || a.known.Load()
}

// OnChange registers f to run whenever Ready changes.
func (a *CertManagerAPI) OnChange(f func()) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onChange = append(a.onChange, f)
}

// Run asks discovery until ctx is done.
func (a *CertManagerAPI) Run(ctx context.Context) {
	for {
		a.Check(ctx)
		wait := a.PresentPoll
		if !a.Ready() {
			wait = a.AbsentPoll
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// Check asks discovery once, and starts the informers when the API has become served.
func (a *CertManagerAPI) Check(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("api", CertManagerGroupVersion)
	served, err := CertManagerServed(a.discovery.ServerResourcesForGroupVersionWithContext(ctx, CertManagerGroupVersion))
	if err != nil {
		logger.Error(err, "Cannot tell whether cert-manager is installed; asking again later")
		return
	}
	if !served {
		changed := a.set(false)
		if first := !a.known.Swap(true); changed || first {
			logger.Info("cert-manager's API is not served by the host cluster: the setups wait for cert-manager to be installed")
		}
		return
	}
	if a.ready.Load() {
		return
	}
	a.informers.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, a.SyncTimeout)
	defer cancel()
	for informer, synced := range a.informers.WaitForCacheSync(syncCtx.Done()) {
		if !synced {
			logger.Info("cert-manager's API is served, but a cache did not sync yet; asking again later", "informer", informer.String())
			return
		}
	}
	// Ready before known: a worker started in between would report cert-manager missing.
	a.set(true)
	a.known.Store(true)
	logger.Info("cert-manager's API is served: realizing the setups' certificates")
}

// set sets Ready, runs the OnChange functions when it changed, and reports whether it did.
func (a *CertManagerAPI) set(ready bool) bool {
	if a.ready.Swap(ready) == ready {
		return false
	}
	a.mu.Lock()
	fs := append([]func(){}, a.onChange...)
	a.mu.Unlock()
	for _, f := range fs {
		f()
	}
	return true
}
