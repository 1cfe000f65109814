# IQ-Stream container image: the jlink distribution (scripts/make-dist.sh) on a small Debian base.
#
#   docker build -t iqstream .                         build the server with Maven + JDK here (stage dist-build)
#   ./iqstream image                                    the same image from ./iqstream dist's archive (stage
#                                                       dist-context: no Maven or JDK stage, no registry for them)
#   docker run --rm -p 8080:8080 --memory 1g -e IQSTREAM_JWT_SECRET=... iqstream
#
# Build arguments (all optional):
#   BUILD_IMAGE  the Maven + JDK (>= 21, with jlink) image of the build stage
#   RUN_IMAGE    the base of the final image: any glibc Linux with bash (the jlink runtime needs glibc)
#   DIST         build (default): build in the image; context: copy target/dist/iqstream/ made by ./iqstream dist
#   GIT_COMMIT   the commit --version prints when building in the image (the context has no .git)
# BuildKit is needed (the default builder since Docker 23; DOCKER_BUILDKIT=1 before): it builds only the stages
# the final image uses, and keeps Maven's downloads in a cache mount between builds.
#
# No secret is in the image: give the JWT key at run time, as IQSTREAM_JWT_SECRET (HS*), as a mounted secret file
# (-e IQSTREAM_JWT_SECRET_FILE=/run/secrets/jwt-secret), or as a mounted public key file
# (-v ./key.pem:/run/secrets/jwt.pem:ro -e IQSTREAM_JWT_PUBLIC_KEY=/run/secrets/jwt.pem). Without one the
# server starts in development mode with a random secret it prints. Memory (heap, direct memory, event-log
# budget) is sized from the container's limit (--memory). Stop = drain: SIGTERM, then up to --drain-timeout
# (60s by default) for running runs; give `docker stop -t` more than that.
ARG BUILD_IMAGE=maven:3.9-eclipse-temurin-21
ARG RUN_IMAGE=debian:bookworm-slim
ARG DIST=build

FROM ${BUILD_IMAGE} AS dist-build
ARG GIT_COMMIT=unknown
WORKDIR /src
# the POMs first: the dependency download stays cached while only sources change
COPY pom.xml iqstream ./
COPY config/ config/
COPY server/pom.xml server/
COPY clients/java/pom.xml clients/java/
COPY bench/pom.xml bench/
COPY micro/pom.xml micro/
COPY server/src/ server/src/
COPY scripts/make-dist.sh scripts/
COPY deploy/dist/ deploy/dist/
RUN --mount=type=cache,target=/root/.m2 \
    IQSTREAM_COMMIT="$GIT_COMMIT" IQSTREAM_DIST_OUT=/dist scripts/make-dist.sh

FROM scratch AS dist-context
COPY target/dist/iqstream/ /dist/iqstream/

FROM dist-${DIST} AS dist

FROM ${RUN_IMAGE}
RUN groupadd --system --gid 10001 iqstream \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin iqstream \
 && mkdir -p /var/lib/iqstream && chown 10001:10001 /var/lib/iqstream
COPY --from=dist --chown=0:0 /dist/iqstream/ /opt/iqstream/
ENV IQSTREAM_HOST=0.0.0.0 \
    IQSTREAM_PORT=8080 \
    IQSTREAM_DATA_DIR=/var/lib/iqstream \
    IQSTREAM_JVM_OPTS="-XX:-UsePerfData"
# durable streams' files (--data-dir): mount a volume here to keep them across containers
VOLUME /var/lib/iqstream
USER 10001:10001
EXPOSE 8080 9090
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["/opt/iqstream/bin/iqstream", "health"]
ENTRYPOINT ["/opt/iqstream/bin/iqstream", "serve"]
CMD []
