// Command etcd is etcd's own main, built from the etcd server module pinned in go.mod: etcd's
// root module carries replace directives, so it cannot be installed directly.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
