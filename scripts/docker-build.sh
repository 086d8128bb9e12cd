#!/bin/sh
# Build the container image (Dockerfile) and smoke-test it, where a container
# daemon answers; elsewhere say so and skip (exit 0).
set -eu

cd "$(dirname "$0")/.."
if ! command -v docker >/dev/null 2>&1; then
	echo "docker-build: skipped: no docker client installed"
	exit 0
fi
if ! docker info >/dev/null 2>&1; then
	echo "docker-build: skipped: no container daemon answers (docker info failed)"
	exit 0
fi

tag=${TAG:-tmux-mcp:dev}
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
docker build --build-arg "VERSION=$version" -t "$tag" .
docker run --rm "$tag" --version
# doctor inside the container: its own tmux, no server running yet.
docker run --rm "$tag" doctor
docker image ls "$tag"
