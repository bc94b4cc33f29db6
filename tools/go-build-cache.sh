# Sourced by the build.sh of each Go wrapper module (e2e/controlplane, deploy/tools/helm,
# deploy/tools/kustomize): builds binaries from the Go module proxy into a cache outside the
# clone, under $CLOUDMAP_MCS_CACHE (default ~/.cache/cloudmap-mcs)/<name>/<version>-<key>/bin,
# where <key> hashes the module's go.mod and go.sum, its build.sh, this file and the Go
# toolchain. A warm cache does no rebuild; a caller that finds a build running waits for it.
#
#   here=<module dir>; say() { ...; }      # set by the caller before sourcing
#   go_cache_begin <name> <version> <bin>...   # sets bin_dir and go_cache_cold
#   if ((go_cache_cold)); then
#     go_cache_build <bin> <package> <ldflags> # once per bin (cwd is $here)
#     go_cache_commit
#   fi
#   echo "$bin_dir"                            # or "$bin_dir/<bin>"

go_cache_lib=${BASH_SOURCE[0]}
go_cache_root=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}

go_cache_warm() {
  local b
  for b in "${go_cache_bins[@]}"; do [[ -x "$bin_dir/$b" ]] || return 1; done
  say "using cached binaries in $bin_dir"
}

# Warm: go_cache_cold=0. Cold: go_cache_cold=1 with the build lock held (one caller builds,
# the others wait for it and then find the cache warm) and the working directory at $here.
go_cache_begin() {
  local name=$1 version=$2 key out
  shift 2
  go_cache_bins=("$@")
  key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" "$go_cache_lib" \
    <(go env GOVERSION GOOS GOARCH) | sha256sum | cut -c1-12)
  out="$go_cache_root/$name/$version-$key"
  bin_dir="$out/bin"
  go_cache_cold=0
  go_cache_warm && return

  mkdir -p "$out"
  exec 9>"$out/.lock"
  if ! flock -n 9; then
    say "another build of $name $version is running; waiting for it"
    flock 9
  fi
  go_cache_warm && return

  go_cache_cold=1
  go_cache_built=0
  go_cache_tmp="$out/bin.tmp"
  rm -rf "$go_cache_tmp"
  mkdir -p "$go_cache_tmp"
  cd "$here"
}

go_cache_build() {
  local bin=$1 package=$2 ldflags=$3 start
  if ((go_cache_built == 0)); then
    say "downloading modules"
    go mod download
  fi
  go_cache_built=$((go_cache_built + 1))
  start=$SECONDS
  say "[$go_cache_built/${#go_cache_bins[@]}] building $bin"
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$go_cache_tmp/$bin" "$package"
  say "[$go_cache_built/${#go_cache_bins[@]}] built $bin in $((SECONDS - start))s"
}

go_cache_commit() {
  rm -rf "$bin_dir"
  mv "$go_cache_tmp" "$bin_dir"
}
