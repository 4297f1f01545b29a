# One image for every service: the services' executables (the products of Package.swift built from Services/) and
# their resource bundles in /app.
# The container's command picks the service, e.g. `docker run IMAGE /app/accounts` (see docker-compose.yml). osmium
# (Debian's osmium-tool) is there for `places import --streets`.
#
# Build arguments (docker-compose.yml passes them from .env; deploy/base-images.sh writes them where the official
# images cannot be pulled):
#   BASE_IMAGE    what the image runs on (official: debian:bookworm-slim)
#   SWIFT_IMAGE   what compiles the services, in release, from the sources (official: swift:6.3-bookworm)
ARG BASE_IMAGE=debian:bookworm-slim
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS compiled
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends libpq-dev librabbitmq-dev libcrypt-dev libvips-dev libcurl4-openssl-dev pkg-config jq \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build

# Dependencies first, so that a change to our sources does not fetch them again. Package.resolved is optional
# (git ignores it); the bracket makes the COPY succeed without it.
COPY Package.swift Package.resolve[d] ./
RUN swift package resolve

COPY . .
# Only the services, each product with what it needs: `swift build` alone would build every target, the tests' support
# among them, which imports Swift Testing (it has no static library, so it cannot link with --static-swift-stdlib).
# NB: SwiftPM looks for a target's resources in `<package>_<Target>.resources` next to the executable, so the
# bundles go into /app beside the binaries. The executables go without their debug information, most of their size.
RUN products=$(swift package dump-package | jq -r '.targets as $targets | .products[] | select(.type | has("executable")) \
        | select(.targets[0] as $t | $targets[] | select(.name == $t) | .path | startswith("Services/")) | .name') \
    && for name in $products; do swift build -c release --static-swift-stdlib --product "$name" || exit 1; done \
    && bin=$(swift build -c release --static-swift-stdlib --show-bin-path) \
    && mkdir -p /app \
    && for name in $products; do strip --strip-debug -o "/app/$name" "$bin/$name"; done \
    && cp -R "$bin"/*.resources /app/

FROM ${BASE_IMAGE}
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends libpq5 librabbitmq4 libcrypt1 libvips42 libcurl4 osmium-tool ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tarrare \
    && useradd --system --uid 10001 --gid tarrare --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin tarrare
COPY --from=compiled /app /app
WORKDIR /app
USER 10001:10001
