#!/usr/bin/env bash
# A container engine and the images kdelay's container tests and compose scenario run on, built on
# this machine: the build machines reach Debian's mirror and Maven Central but no image registry.
#
#   bash .ci/containers.sh            # engine, Docker API socket, base, JRE, Kafka, Prometheus images
#   bash .ci/containers.sh kdelay     # the same, then the kdelay image from the jar Maven built
#                                     # (mvn -pl delay-service -am package first)
#   source <(bash .ci/containers.sh env)   # DOCKER_HOST and friends for this shell
#
# What it does, each step skipped when already done (it is safe to run again):
#   1. apt-get install podman, runc, netavark, aardvark-dns, iptables (netavark's NAT),
#      docker-compose (Compose v1), curl, iproute2 (the script uses both), debootstrap when
#      missing;
#   2. /etc/containers/containers.conf: runc (crun refuses this machine kind's mixed cgroup
#      layout), ulimits within the machine's hard limits, netavark (DNS between containers);
#   3. the Docker API on unix:///run/podman/podman.sock (podman system service), for the docker
#      CLI, Compose and Testcontainers (after removing a bridge the CNI backend may have left);
#   4. images, built here, never pulled:
#        localhost/kdelay-ci/debian:bookworm   debootstrap --variant=minbase of Debian bookworm
#        localhost/kdelay-ci/jre:17            the same with openjdk-17-jre-headless
#        localhost/kdelay-ci/kafka:$KAFKA_VERSION  that JRE with Apache Kafka's jars from Maven
#                                              Central, started like apache/kafka (KAFKA_* variables)
#        localhost/kdelay-ci/prometheus:debian Debian's prometheus package, started as
#                                              prom/prometheus is (ENTRYPOINT prometheus)
#        kdelay:local                          ./Dockerfile on the JRE image (argument "kdelay")
#
# Runs as root (it installs packages and writes /etc). KDELAY_CI_REBUILD=1 rebuilds the images;
# KDELAY_DEBIAN_MIRROR overrides the mirror taken from apt's sources.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SOCKET=/run/podman/podman.sock
BASE_IMAGE=localhost/kdelay-ci/debian:bookworm
JRE_IMAGE=localhost/kdelay-ci/jre:17
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' pom.xml | head -1)
KAFKA_IMAGE=localhost/kdelay-ci/kafka:${KAFKA_VERSION}
PROMETHEUS_IMAGE=localhost/kdelay-ci/prometheus:debian
KDELAY_IMAGE=kdelay:local
CACHE=${KDELAY_CI_CACHE:-/var/cache/kdelay-ci}

if [ "${1:-}" = env ]; then
  # What the container tests and compose need to find the engine and the local images.
  cat <<EOF
export DOCKER_HOST=unix://$SOCKET
export TESTCONTAINERS_RYUK_DISABLED=true
# This machine kind looks like a container to Testcontainers, which would then reach published
# ports through the bridge's gateway; with netavark only localhost reaches them.
export TESTCONTAINERS_HOST_OVERRIDE=localhost
export KDELAY_TEST_KAFKA_IMAGE=$KAFKA_IMAGE
export KAFKA_IMAGE=$KAFKA_IMAGE
export JRE_IMAGE=$JRE_IMAGE
export PROMETHEUS_IMAGE=$PROMETHEUS_IMAGE
EOF
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "containers.sh: run as root (it installs packages and writes /etc/containers)" >&2
  exit 1
fi

SCRIPT_START=$(date +%s)
step() { # step NAME COMMAND...: runs it, then says how long it took
  local name=$1 start
  shift
  start=$(date +%s)
  echo "== $name"
  "$@"
  echo "== $name: $(($(date +%s) - start)) s"
}

# remove_replaced OLD_ID NAME: removes the image a rebuild of NAME untagged, unless still in use.
remove_replaced() {
  if [ -n "$1" ] && [ "$1" != "$(podman image inspect --format '{{.Id}}' "$2")" ]; then
    podman rmi "$1" > /dev/null 2>&1 || true
  fi
}

have_image() { [ -z "${KDELAY_CI_REBUILD:-}" ] && podman image exists "$1"; }

install_packages() {
  # netavark and aardvark-dns: the containers of a compose file find each other by service name
  # (the CNI backend, Debian's default without them, has no DNS). iptables: netavark sets up the
  # bridge's NAT with it, and fails every container with a network without it ("netavark: No such
  # file or directory"); podman only recommends it, and a machine without it was seen.
  local wanted=(podman runc docker-compose debootstrap netavark aardvark-dns catatonit curl iproute2
    iptables)
  local missing=()
  for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2> /dev/null | grep -q 'install ok installed' \
      || missing+=("$package")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "already installed: ${wanted[*]} (podman $(podman --version | awk '{print $3}'))"
    return
  fi
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  mkdir -p "$CACHE"
  # Not the recommended packages: rootless helpers and buildah are not needed as root.
  { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    > "$CACHE/apt.log" 2>&1 || { tail -30 "$CACHE/apt.log" >&2; return 1; }
  echo "installed (log: $CACHE/apt.log)"
}

write_config() {
  local conf=/etc/containers/containers.conf
  local want
  want=$(
    cat <<'EOF'
# Written by kdelay's .ci/containers.sh. runc: crun refuses this machine kind's mixed cgroup
# layout. ulimits: podman's defaults exceed the machine's hard limits. netavark: DNS between
# containers (compose's service names).
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"

[network]
network_backend = "netavark"
EOF
  )
  if [ -f "$conf" ] && [ "$(cat "$conf")" = "$want" ]; then
    echo "unchanged: $conf"
    return
  fi
  if [ -f "$conf" ] && ! grep -q "kdelay's .ci/containers.sh" "$conf"; then
    cp "$conf" "$conf.before-kdelay"
    echo "kept the previous file as $conf.before-kdelay"
  fi
  mkdir -p /etc/containers
  printf '%s\n' "$want" > "$conf"
  echo "wrote $conf"
  CONFIG_CHANGED=1
}

stale_cni_bridge() {
  # A bridge the CNI backend left (podman used it before netavark was configured) holds the same
  # subnet as netavark's and steals its routes: published ports then answer "no route to host".
  if [ "$(podman info --format '{{.Host.NetworkBackend}}')" = netavark ] \
    && ip link show cni-podman0 > /dev/null 2>&1; then
    ip link delete cni-podman0
    echo "deleted the CNI backend's stale bridge cni-podman0"
  else
    echo "none"
  fi
}

start_socket() {
  local pidfile=/run/kdelay-ci/podman-service.pid running
  running=$(cat "$pidfile" 2> /dev/null || true)
  if [ -n "$running" ] && [ -n "${CONFIG_CHANGED:-}" ] && kill -0 "$running" 2> /dev/null; then
    # It read the old configuration: restart it (the service this script started, by its pid).
    kill "$running"
    sleep 1
    echo "stopped the service started with the previous configuration (pid $running)"
  fi
  if [ -S "$SOCKET" ] && curl -sf --unix-socket "$SOCKET" http://d/_ping > /dev/null; then
    echo "already serving: $SOCKET"
    return
  fi
  mkdir -p "$(dirname "$SOCKET")" /var/log/kdelay-ci /run/kdelay-ci
  # Detached from this shell, so that it outlives the script: the tests and compose use it later.
  setsid podman system service --time=0 "unix://$SOCKET" \
    > /var/log/kdelay-ci/podman-service.log 2>&1 < /dev/null &
  echo $! > "$pidfile"
  for _ in $(seq 1 100); do
    if curl -sf --unix-socket "$SOCKET" http://d/_ping > /dev/null 2>&1; then
      echo "started: podman system service on $SOCKET (pid $!, log /var/log/kdelay-ci/podman-service.log)"
      return
    fi
    sleep 0.1
  done
  echo "podman system service did not answer on $SOCKET; see /var/log/kdelay-ci/podman-service.log" >&2
  return 1
}

debian_mirror() {
  if [ -n "${KDELAY_DEBIAN_MIRROR:-}" ]; then
    echo "$KDELAY_DEBIAN_MIRROR"
    return
  fi
  # The mirror apt already uses for Debian itself (not the security archive).
  {
    grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}'
  } | grep -E '/debian/?$' | head -1 || true
}

bootstrap_image() { # bootstrap_image IMAGE [PACKAGES [podman import --change...]]
  local image=$1 include=${2:-}
  shift $(($# < 2 ? $# : 2))
  if have_image "$image"; then
    echo "exists: $image"
    return
  fi
  local dir mirror
  mirror=$(debian_mirror)
  if [ -z "$mirror" ]; then
    echo "no Debian mirror in apt's sources: set KDELAY_DEBIAN_MIRROR" >&2
    return 1
  fi
  dir=$(mktemp -d /var/tmp/kdelay-rootfs.XXXXXX)
  mkdir -p "$CACHE/debs"
  echo "debootstrap bookworm from $mirror${include:+ with $include}"
  debootstrap --variant=minbase --cache-dir="$CACHE/debs" ${include:+--include="$include"} \
    bookworm "$dir" "$mirror" > "$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; rm -rf "$dir"; return 1; }
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin
  local changes=(--change 'CMD ["/bin/bash"]')
  for change in "$@"; do
    changes+=(--change "$change")
  done
  local previous
  previous=$(podman image inspect --format '{{.Id}}' "$image" 2> /dev/null || true)
  tar -C "$dir" -c . | podman import -q "${changes[@]}" - "$image" > /dev/null
  remove_replaced "$previous" "$image"
  rm -rf "$dir"
  echo "built: $image ($(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec))"
}

kafka_image() {
  if have_image "$KAFKA_IMAGE"; then
    echo "exists: $KAFKA_IMAGE"
    return
  fi
  local dir=.ci/kafka-image
  mkdir -p "$CACHE"
  rm -rf "$dir/target"
  # kafka_2.13 is the broker, kafka-tools the command-line tools the compose health check uses.
  mvn -B -ntp -Dstyle.color=never -f "$dir/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=target/libs \
    > "$CACHE/kafka-jars.log" 2>&1 || { tail -30 "$CACHE/kafka-jars.log" >&2; return 1; }
  echo "$(find "$dir/target/libs" -name '*.jar' | wc -l) jars of Kafka $KAFKA_VERSION"
  local previous
  previous=$(podman image inspect --format '{{.Id}}' "$KAFKA_IMAGE" 2> /dev/null || true)
  podman build -q --format docker --build-arg JRE_IMAGE="$JRE_IMAGE" \
    --build-arg KAFKA_VERSION="$KAFKA_VERSION" -t "$KAFKA_IMAGE" "$dir" > /dev/null
  remove_replaced "$previous" "$KAFKA_IMAGE"
  rm -rf "$dir/target"
  echo "built: $KAFKA_IMAGE"
}

kdelay_image() {
  local jar=delay-service/target/delay-service.jar
  if [ ! -f "$jar" ]; then
    echo "no $jar: build it first (mvn -B -ntp -pl delay-service -am package -DskipTests)" >&2
    return 1
  fi
  # Always rebuilt: the jar changes with every build. The layers below it are reused.
  local previous
  previous=$(podman image inspect --format '{{.Id}}' "$KDELAY_IMAGE" 2> /dev/null || true)
  podman build -q --format docker --build-arg JRE_IMAGE="$JRE_IMAGE" -t "$KDELAY_IMAGE" . > /dev/null
  remove_replaced "$previous" "$KDELAY_IMAGE"
  echo "built: $KDELAY_IMAGE from $jar"
}

step "packages" install_packages
step "containers.conf" write_config
step "stale CNI bridge" stale_cni_bridge
step "Docker API socket" start_socket
step "image $BASE_IMAGE" bootstrap_image "$BASE_IMAGE"
step "image $JRE_IMAGE" bootstrap_image "$JRE_IMAGE" openjdk-17-jre-headless
step "image $KAFKA_IMAGE" kafka_image
# Debian's Prometheus, for the compose file's prometheus service (Grafana, which Debian does not
# package, stays for users). Its data goes where Debian's build puts it, /var/lib/prometheus.
step "image $PROMETHEUS_IMAGE" bootstrap_image "$PROMETHEUS_IMAGE" prometheus \
  'ENTRYPOINT ["/usr/bin/prometheus"]' 'CMD []' 'WORKDIR /var/lib/prometheus' 'USER prometheus' \
  'EXPOSE 9090'
if [ "${1:-}" = kdelay ]; then
  step "image $KDELAY_IMAGE" kdelay_image
fi
echo "containers.sh: done in $(($(date +%s) - SCRIPT_START)) s. For this shell: source <(bash .ci/containers.sh env)"
