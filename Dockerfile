# tmux-mcp in a container: a static binary on Alpine with tmux installed.
#   scripts/docker-build.sh            (builds and smoke-tests it where a daemon answers)
#   docker run -i --rm tmux-mcp:dev    (an MCP client launches it like this)
#
# The server drives the tmux inside the container unless it is given a host
# socket, e.g. -v /tmp/tmux-1000:/tmp/tmux-1000 -e TMUX_MCP_SOCKET=default.
# Reaching a host's tmux that way needs the same tmux version as the host
# (the client-server protocol changes between releases) and the same uid
# (tmux refuses clients of another user): run with --user "$(id -u):$(id -g)".

FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/tmux-mcp/tmux-mcp/internal/cli.version=${VERSION}" \
	-o /out/tmux-mcp ./cmd/tmux-mcp

FROM alpine:3.22
RUN apk add --no-cache tmux
COPY --from=build /out/tmux-mcp /usr/local/bin/tmux-mcp
# notices the licences of embedded code ask a binary to carry (the Go fonts)
COPY --from=build /src/docs/third_party/ /usr/share/licenses/tmux-mcp/
# The official MCP registry checks that an OCI package names its server.
LABEL io.modelcontextprotocol.server.name="io.github.tmux-mcp/tmux-mcp"
USER 1000:1000
ENTRYPOINT ["/usr/local/bin/tmux-mcp"]
