package kinds

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// ObserveManagedEtcd sets obj's EtcdReady condition from its managed etcd e (nothing when e is
// nil: an external etcd is not the server's to watch).
func ObserveManagedEtcd[T controller.Object, S any](ctx context.Context, l controller.Lifecycle[T, S], obj T, status *S, loop *controller.Loop, e *etcd.Cluster) {
	if e == nil {
		return
	}
	sts, err := l.Host.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if err != nil {
		sts = nil
	}
	l.ObserveEtcd(ctx, obj, status, loop, sts, func(ctx context.Context) kcphealth.Result {
		return kcphealth.Etcd(ctx, func() (*rest.Config, error) { return l.Host.Kcp.Etcd(hostcluster.EtcdEndpoint(e), e.ClientSecret()) })
	})
}
