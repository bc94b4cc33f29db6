#!/usr/bin/env bash
# Sets the release version where it is stamped: the root package.json "version" (the one
# source), the workspace packages, the chart's version and appVersion (the default image tag)
# and the Dockerfiles' VERSION default (the image label; deploy/docker/build-images.sh passes
# the package.json version). deploy/test/version.test.ts fails while any of them differ.
# Usage: tools/set-version.sh <version>   then `make chart-docs` and a CHANGELOG.md section.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
v=${1:-}
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "usage: tools/set-version.sh <semver version>, e.g. 0.2.0" >&2; exit 2; }
cd "$root"
for f in package.json packages/*/package.json deploy/package.json e2e/package.json; do
  sed -i -E '0,/^  "version": "[^"]*"/s//  "version": "'"$v"'"/' "$f"
done
sed -i -E "s/^version: .*/version: $v/; s/^appVersion: .*/appVersion: '$v'/" deploy/charts/cloudmap-mcs/Chart.yaml
sed -i -E "s/^ARG VERSION=.*/ARG VERSION=$v/" Dockerfile.export Dockerfile.import
echo "version $v set; now run make chart-docs and add a CHANGELOG.md section" >&2
