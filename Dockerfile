# The kcp-setups API server: a static binary on a distroless base, running as non-root.
# Build with `make image` (any builder that reads a Dockerfile: docker, podman, buildah).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/kcp-setups-apiserver ./cmd/apiserver

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kcp-setups-apiserver /kcp-setups-apiserver
USER 65532:65532
ENTRYPOINT ["/kcp-setups-apiserver"]
