# kquota as a container image: the CLI and nothing else it does not need at run time.
#
#   docker build -t kquota:0.1.0 .
#   docker run --rm -v "$PWD:/work" kquota:0.1.0 validate
#
# Two stages: the first builds kquota's wheel and the wheels of its dependencies; the second
# installs them into a fresh base without pip's cache, a compiler or the sources, and runs as
# a non-root user. No secret is baked in: credentials reach kquota at run time through the
# environment, as kquota.yaml's ${VAR} references expect (docs/container.md).
#
# Pin the base by digest for a reproducible build (the tag moves with Python's patch
# releases); the digest is the one `docker buildx imagetools inspect python:3.11-slim-bookworm`
# prints:
#   docker build --build-arg PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:<digest> .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN python -m pip wheel --no-cache-dir --disable-pip-version-check --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="kquota" \
      org.opencontainers.image.description="GitOps for Apache Kafka client quotas" \
      org.opencontainers.image.source="https://github.com/kquota/kquota" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The wheels are mounted from the build stage for this one step, so no layer keeps them.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m pip install --no-cache-dir --disable-pip-version-check --no-index \
      --find-links=/wheels kquota \
 && useradd --system --uid 10001 --user-group --home-dir /work --create-home kquota
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["kquota"]
CMD ["--help"]
