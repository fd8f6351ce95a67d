# rlvr serve image: `docker build -t rlvr:0.1.0 .` (deploy/k8s/base runs rlvr:0.1.0; the release
# workflow pushes it as REGISTRY/rlvr:vX.Y.Z for deploy/k8s/overlays).
#
# Where the wheel comes from, `--build-arg WHEELS=...`:
# * `build` (the default, `docker build .`): the `build` stage compiles the dependencies first,
#   from the manifests and the lock file alone (every crate's sources are empty stubs then), so
#   that this layer is cached until a manifest or Cargo.lock changes; then it copies the sources
#   and builds the platform wheel with scripts/build-wheel, the script the test suite and the
#   release workflow run (native linker here: the runtime is the same Debian, so no
#   manylinux2014 zig link is needed).
# * `release` (.github/workflows/release.yml): the checked manylinux2014 wheels of both
#   architectures, put in the context's dist/ by the workflow; the `build` stage is skipped
#   (BuildKit builds only the stages the target needs), so the arm64 image is not compiled
#   under emulation.
# `runtime` is a slim CPython: scripts/install-sandbox-python gives the sandbox interpreter
# numpy and pandas (the same script scripts/setup runs for CI), then the wheel of the image's
# own architecture (TARGETARCH: amd64 -> x86_64, arm64 -> aarch64) puts `rlvr` on PATH.
#
# No container engine runs on the machines this project is tested on: python/tests/test_image.py
# checks this file statically (hadolint, then its own rules: the steps call those scripts, copy
# files that exist and are not docker-ignored, the manifests come before the sources, the
# health check and the token). The pod's capabilities: docs/serve.md, "Kubernetes".
#
# The server refuses to listen beyond loopback without a token: the default command reads it
# from the secret file /run/secrets/rlvr-token (`docker run -v "$PWD/token:/run/secrets/rlvr-token:ro"`,
# or a compose/swarm secret named rlvr-token); deploy/k8s mounts the Secret rlvr-token instead.
# Port 9090 (--metrics-listen) serves /metrics and /health only, without the token, for Prometheus.

ARG WHEELS=build

FROM rust:1.95-slim-bookworm AS build
# The base image pins the Debian release; its point updates are taken as they come.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates/rlvr/Cargo.toml crates/rlvr/
COPY crates/rlvr-dataset/Cargo.toml crates/rlvr-dataset/
COPY crates/rlvr-engine/Cargo.toml crates/rlvr-engine/
COPY crates/rlvr-exec-supervisor/Cargo.toml crates/rlvr-exec-supervisor/
COPY crates/rlvr-frame/Cargo.toml crates/rlvr-frame/
COPY crates/rlvr-hub/Cargo.toml crates/rlvr-hub/
COPY crates/rlvr-language/Cargo.toml crates/rlvr-language/
COPY crates/rlvr-languages/Cargo.toml crates/rlvr-languages/
COPY crates/rlvr-output/Cargo.toml crates/rlvr-output/
COPY crates/rlvr-products/Cargo.toml crates/rlvr-products/
COPY crates/rlvr-python-compat/Cargo.toml crates/rlvr-python-compat/
COPY crates/rlvr-redteam/Cargo.toml crates/rlvr-redteam/
COPY crates/rlvr-referee/Cargo.toml crates/rlvr-referee/
COPY crates/rlvr-runner/Cargo.toml crates/rlvr-runner/
COPY crates/rlvr-sandbox/Cargo.toml crates/rlvr-sandbox/
COPY crates/rlvr-server/Cargo.toml crates/rlvr-server/
COPY crates/rlvr-synth/Cargo.toml crates/rlvr-synth/
COPY crates/rlvr-test-support/Cargo.toml crates/rlvr-test-support/
COPY crates/rlvr-verify/Cargo.toml crates/rlvr-verify/
# Empty sources: this layer compiles every dependency, and only them.
RUN for crate in crates/*/; do mkdir -p "${crate}src" && touch "${crate}src/lib.rs"; done \
 && rm crates/rlvr/src/lib.rs \
 && printf 'fn main() {}\n' > crates/rlvr/src/main.rs \
 && printf 'fn main() {}\n' > crates/rlvr-exec-supervisor/src/main.rs \
 && cargo build --release --locked --bin rlvr \
 && rm -rf crates/*/src
COPY . .
# The copied sources may be older than the stub build: touch them so that cargo rebuilds the
# workspace's own crates (and only them).
RUN find crates -name '*.rs' -exec touch {} + \
 && python3 -m venv /opt/build \
 && RLVR_PYTHON=/opt/build/bin/python RLVR_WHEEL_LINKER=native scripts/build-wheel

FROM scratch AS wheels-build
COPY --from=build /src/target/wheels/ /

FROM scratch AS wheels-release
COPY dist/ /

# A stage of this file, the one WHEELS names (hadolint cannot resolve the variable).
# hadolint ignore=DL3006
FROM wheels-${WHEELS} AS wheels

FROM python:3.11-slim-bookworm AS runtime
# Set by BuildKit for each platform it builds (the classic builder leaves it empty: dpkg's).
ARG TARGETARCH
COPY scripts/python-path scripts/install-sandbox-python /opt/rlvr-setup/scripts/
COPY python/check_requirements.py /opt/rlvr-setup/python/
COPY deploy/sandbox-requirements.txt /opt/rlvr-setup/deploy/
RUN /opt/rlvr-setup/scripts/install-sandbox-python /usr/local/bin/python3
COPY --from=wheels / /tmp/wheels/
RUN architecture="${TARGETARCH:-$(dpkg --print-architecture)}" \
 && case "$architecture" in \
      amd64) machine=x86_64 ;; \
      arm64) machine=aarch64 ;; \
      *) echo "no rlvr wheel for $architecture" >&2; exit 1 ;; \
    esac \
 && pip install --no-cache-dir --no-deps /tmp/wheels/rlvr-*_"$machine".whl \
 && rm -rf /tmp/wheels \
 && rlvr --version
# The sandbox binds this interpreter's prefix (/usr/local) read-only into every program's root.
ENV RLVR_PYTHON=/usr/local/bin/python3
EXPOSE 8080
EXPOSE 9090
# /health needs no token; the image has CPython, so no curl is added for this.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health', timeout=4)"]
ENTRYPOINT ["rlvr"]
CMD ["serve", "--addr=0.0.0.0:8080", "--metrics-listen=0.0.0.0:9090", "--token-file=/run/secrets/rlvr-token"]
