# rlvr serve image: `docker build -t rlvr:0.1.0 .` (deploy/k8s runs rlvr:0.1.0).
#
# Two stages. `build` compiles the platform wheel with scripts/build-wheel, the script the test
# suite runs (python/tests/test_wheel.py installs its wheel into a fresh venv without Rust and
# scores a job with it). `runtime` is a slim CPython: scripts/install-sandbox-python gives the
# sandbox interpreter numpy and pandas (the same script scripts/setup runs for CI), then the
# wheel puts `rlvr` on PATH. python/tests/test_image.py checks that these steps call those
# scripts and that every file they copy exists, so the image's content is what CI tested even
# where no container engine runs. The pod's capabilities: docs/serve.md, "Kubernetes".

FROM rust:1.95-slim-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN python3 -m venv /opt/build \
 && RLVR_PYTHON=/opt/build/bin/python scripts/build-wheel

FROM python:3.11-slim-bookworm AS runtime
COPY scripts/python-path scripts/install-sandbox-python /opt/rlvr-setup/scripts/
COPY python/check_requirements.py /opt/rlvr-setup/python/
COPY deploy/sandbox-requirements.txt /opt/rlvr-setup/deploy/
RUN /opt/rlvr-setup/scripts/install-sandbox-python /usr/local/bin/python3
COPY --from=build /src/target/wheels/ /tmp/wheels/
RUN pip install --no-cache-dir --no-deps /tmp/wheels/rlvr-*.whl \
 && rm -rf /tmp/wheels \
 && rlvr --version
# The sandbox binds this interpreter's prefix (/usr/local) read-only into every program's root.
ENV RLVR_PYTHON=/usr/local/bin/python3
EXPOSE 8080
ENTRYPOINT ["rlvr"]
CMD ["serve", "--addr=0.0.0.0:8080"]
