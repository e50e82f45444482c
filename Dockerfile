# The assistant service as a container image: a static binary on a
# distroless base, running as an unprivileged user. Build from the
# repository root:  docker build -t assistant:local .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/assistant ./cmd/assistant

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/assistant /usr/local/bin/assistant
# SQLite mode keeps its file here; with PostgreSQL nothing is written.
ENV ASSISTANT_DATA_DIR=/data ASSISTANT_ADDR=:8080
WORKDIR /data
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/assistant"]
CMD ["serve"]
