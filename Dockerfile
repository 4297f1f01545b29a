# One image for every service: all the executables of Package.swift and their resource bundles in /app.
# The container's command picks the service, e.g. `docker run IMAGE /app/accounts` (see docker-compose.yml). osmium
# (Debian's osmium-tool) is there for `places import --streets`.
#
# Build arguments (docker-compose.yml passes them from .env; deploy/base-images.sh writes them where the official
# images cannot be pulled):
#   BASE_IMAGE    what the image runs on (official: debian:bookworm-slim)
#   SWIFT_IMAGE   what compiles the services (official: swift:6.3-bookworm)
#   BINARIES      `compiled`: built here, in release, from the sources; `prebuilt`: taken from .local/image/app, which
#                 deploy/stage-binaries.sh fills from a build made outside (the tests' own, so it is built once)
ARG BASE_IMAGE=debian:bookworm-slim
ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG BINARIES=compiled

FROM ${SWIFT_IMAGE} AS compiled
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends libpq-dev librabbitmq-dev libcrypt-dev libvips-dev pkg-config jq \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build

# Dependencies first, so that a change to our sources does not fetch them again. Package.resolved is optional
# (git ignores it); the bracket makes the COPY succeed without it.
COPY Package.swift Package.resolve[d] ./
RUN swift package resolve

COPY . .
# NB: SwiftPM looks for a target's resources in `<package>_<Target>.resources` next to the executable, so the
# bundles go into /app beside the binaries. The executables go without their debug information, most of their size.
RUN swift build -c release --static-swift-stdlib \
    && bin=$(swift build -c release --static-swift-stdlib --show-bin-path) \
    && mkdir -p /app \
    && for name in $(swift package dump-package | jq -r '.products[] | select(.type | has("executable")) | .name'); do \
        strip --strip-debug -o "/app/$name" "$bin/$name"; \
    done \
    && cp -R "$bin"/*.resources /app/

FROM scratch AS prebuilt
COPY .local/image/app /app

FROM ${BINARIES} AS binaries

FROM ${BASE_IMAGE}
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends libpq5 librabbitmq4 libcrypt1 libvips42 osmium-tool ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tarrare \
    && useradd --system --uid 10001 --gid tarrare --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin tarrare
COPY --from=binaries /app /app
WORKDIR /app
USER 10001:10001
