// Command kcp-setups-image assembles the server's OCI image without a container runtime and
// without pulling a base image: a minimal root file system of its own (base.go) and the
// static binary, non-root, with the binary as entrypoint. Every timestamp is the commit's,
// and the layers are written in a fixed order with fixed owners and modes, so two builds of
// one commit give the same digest.
//
// It writes, under -out:
//
//	kcp-setups-apiserver.tar   a tarball that `docker load`, `podman load` and
//	                           `kind load image-archive` read
//	oci/                       an OCI image layout (`crane push oci/ REF` after `crane`'s
//	                           own layout flags, skopeo `oci:` and the like)
//	digest                     the image's manifest digest
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// options are the command's flags.
type options struct {
	binary, out, ref                string
	source, revision, version, arch string
	epoch                           int64
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "the static server binary to put in the image")
	flag.StringVar(&o.out, "out", "_output/image", "the directory to write the tarball, the OCI layout and the digest to")
	flag.StringVar(&o.ref, "image", "ghcr.io/kcp-setups/apiserver:latest", "the image's name in the tarball and the layout")
	flag.StringVar(&o.source, "source", "https://github.com/kcp-setups/apiserver", "org.opencontainers.image.source")
	flag.StringVar(&o.revision, "revision", "", "org.opencontainers.image.revision: the commit")
	flag.StringVar(&o.version, "version", "", "org.opencontainers.image.version")
	flag.StringVar(&o.arch, "arch", "amd64", "the binary's architecture")
	flag.Int64Var(&o.epoch, "source-date-epoch", 0, "every timestamp in the image, in seconds since the epoch: the commit's time (SOURCE_DATE_EPOCH)")
	flag.Parse()
	if env := os.Getenv("SOURCE_DATE_EPOCH"); o.epoch == 0 && env != "" {
		var err error
		if o.epoch, err = strconv.ParseInt(env, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "kcp-setups-image: SOURCE_DATE_EPOCH=%q: %v\n", env, err)
			os.Exit(2)
		}
	}
	if o.binary == "" || o.revision == "" || o.version == "" {
		fmt.Fprintln(os.Stderr, "kcp-setups-image: -binary, -revision and -version are required")
		os.Exit(2)
	}
	digest, err := build(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kcp-setups-image: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s@%s\n", o.ref, digest)
}

// build writes the image's tarball, layout and digest under o.out and returns the digest.
func build(o options) (v1.Hash, error) {
	created := time.Unix(o.epoch, 0).UTC()
	ref, err := name.NewTag(o.ref)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image name: %w", err)
	}
	binary, err := os.ReadFile(o.binary)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading the binary: %w", err)
	}
	img, err := assemble(binary, created, o)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	// A layout is a directory of blobs: a stale one would keep an earlier build's.
	ociDir := filepath.Join(o.out, "oci")
	if err := os.RemoveAll(ociDir); err != nil {
		return v1.Hash{}, err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return v1.Hash{}, err
	}
	if err := tarball.WriteToFile(filepath.Join(o.out, "kcp-setups-apiserver.tar"), ref, img); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the tarball: %w", err)
	}
	path, err := layout.Write(ociDir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI layout: %w", err)
	}
	if err := path.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.String(),
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI layout: %w", err)
	}
	return digest, os.WriteFile(filepath.Join(o.out, "digest"), []byte(digest.String()+"\n"), 0o644)
}

// assemble is the image: the base layer, the binary's layer and the config, in OCI media
// types.
func assemble(binary []byte, created time.Time, o options) (v1.Image, error) {
	base, err := layer(baseFiles(), created)
	if err != nil {
		return nil, fmt.Errorf("the base layer: %w", err)
	}
	server, err := layer([]file{{path: binaryPath, mode: 0o755, data: binary}}, created)
	if err != nil {
		return nil, fmt.Errorf("the binary's layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "kcp-setups-image: /etc/passwd, /etc/group, /tmp, /home/nonroot"}},
		mutate.Addendum{Layer: server, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "kcp-setups-image: " + binaryPath}},
	)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: created}
	cfg.OS, cfg.Architecture = "linux", o.arch
	cfg.Config = v1.Config{
		User:       nonRootUser,
		Entrypoint: []string{binaryPath},
		WorkingDir: "/",
		Env:        []string{"PATH=/", "HOME=/home/nonroot"},
		Labels: map[string]string{
			"org.opencontainers.image.source":      o.source,
			"org.opencontainers.image.revision":    o.revision,
			"org.opencontainers.image.version":     o.version,
			"org.opencontainers.image.created":     created.Format(time.RFC3339),
			"org.opencontainers.image.title":       "kcp-setups-apiserver",
			"org.opencontainers.image.description": "The kcp-setups aggregated API server and its controllers",
		},
	}
	return mutate.ConfigFile(img, cfg)
}
