# The doris-sink container image: a static production binary (-tags nodev:
# no demo/dev/bench, no emulator or kfake linked, as .ci/run builds it) on
# distroless/static, running as the distroless nonroot user (65532).
# Build from the repository root:
#
#   docker build -t doris-sink --build-arg VERSION=v1.2.3 .
#
# Used by examples/compose/docker-compose.yml and the Kubernetes example in
# examples/deploy/. CI has no container engine: deploy_test.go in
# cmd/doris-sink/internal/root checks this file (stages, build flags equal to
# .ci/run's, non-root USER, ENTRYPOINT) instead of building it.

ARG GO_VERSION=1.27

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -tags nodev -ldflags "-X main.version=${VERSION}" -o /out/doris-sink ./cmd/doris-sink
# job.data_dir of the examples, owned by the runtime user (distroless has
# no shell to create it later; a named volume mounted there inherits it).
RUN mkdir -p /out/var/lib/doris-sink

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/doris-sink /usr/local/bin/doris-sink
COPY --from=build --chown=65532:65532 /out/var/lib/doris-sink /var/lib/doris-sink
USER 65532:65532
# 9108: metrics.listen (/metrics, /healthz, /readyz, /status); the config
# must listen on 0.0.0.0:9108 to be reachable from outside the container.
EXPOSE 9108
ENTRYPOINT ["/usr/local/bin/doris-sink"]
CMD ["run", "-c", "/etc/doris-sink/job.yaml"]
