# ragd container image: a static binary (every hosted provider, the offline models and the web UI inside) on
# distroless, run as the non-root user 65532, data in the /data volume, UI and API on port 8080.
#
#   docker build -t ragd --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse --short=12 HEAD) .
#   docker run -p 8080:8080 -v ragd-data:/data ragd
#
# An offline-only image (no hosted model SDK linked): --build-arg TAGS=ragd_offline.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
ARG TAGS=
RUN CGO_ENABLED=0 go build -tags "$TAGS" -trimpath \
      -ldflags "-s -w -X github.com/ragd/ragd/internal/buildinfo.version=$VERSION -X github.com/ragd/ragd/internal/buildinfo.commit=$COMMIT" \
      -o /out/ragd ./cmd/ragd \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ragd /usr/local/bin/ragd
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV RAGD_ADDR=0.0.0.0:8080 \
    RAGD_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["/usr/local/bin/ragd", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/ragd"]
CMD ["serve"]
