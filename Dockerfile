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
# From the hashed lock, as scripts/venv-from-lock installs everywhere else: pip and setuptools,
# then the wheel of every dependency, each file checked against the lock's hashes (a file the
# index serves that the lock does not name is refused), then kquota's own wheel, built by the
# locked setuptools with nothing unpinned fetched.
COPY requirements/bootstrap.txt requirements/demo.txt ./requirements/
RUN python -m pip install --no-cache-dir --disable-pip-version-check --require-hashes \
      --no-deps -r requirements/bootstrap.txt \
 && python -m pip download --no-cache-dir --disable-pip-version-check --require-hashes \
      --no-deps --only-binary=:all: --dest /wheels -r requirements/demo.txt
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN python -m pip wheel --no-cache-dir --disable-pip-version-check --no-deps \
      --no-build-isolation --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="kquota" \
      org.opencontainers.image.description="GitOps for Apache Kafka client quotas" \
      org.opencontainers.image.source="https://github.com/kquota/kquota" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The wheels are mounted from the build stage for this one step, so no layer keeps them. The
# dependencies are installed against the lock's hashes again, kquota without resolving any,
# and `pip check` proves the set satisfies every requirement.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    --mount=type=bind,from=build,source=/src/requirements,target=/requirements \
    python -m pip install --no-cache-dir --disable-pip-version-check --no-index \
      --find-links=/wheels --require-hashes --no-deps -r /requirements/demo.txt \
 && python -m pip install --no-cache-dir --disable-pip-version-check --no-index --no-deps \
      /wheels/kquota-*.whl \
 && python -m pip check \
 && useradd --system --uid 10001 --user-group --home-dir /work --create-home kquota
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["kquota"]
CMD ["--help"]
