# kdelay's image: the service's shaded jar, as Maven built it, on a Java 17 runtime.
#
#   mvn -B -ntp -pl delay-service -am package -DskipTests    # delay-service/target/delay-service.jar
#   docker build -t kdelay:local .
#   docker run -e DELAY_BOOTSTRAP_SERVERS=broker:9092 -p 8080:8080 kdelay:local
#
# JRE_IMAGE is any Java 17 runtime with bash (for the health check) and useradd: Temurin's by
# default; CI, which reaches no registry, builds a Debian one (.ci/containers.sh) and passes
# --build-arg JRE_IMAGE=localhost/kdelay-ci/jre:17. Nothing is downloaded at build or run time.
ARG JRE_IMAGE=eclipse-temurin:17-jre
FROM ${JRE_IMAGE}
RUN useradd --system --uid 10001 --home-dir /var/lib/kdelay kdelay \
    && mkdir -p /var/lib/kdelay \
    && chown kdelay /var/lib/kdelay
COPY delay-service/target/delay-service.jar /opt/kdelay/delay-service.jar
USER kdelay
WORKDIR /var/lib/kdelay
# State stores under the volume the compose file mounts here; metrics, health and admin on 8080.
ENV DELAY_STATE_DIR=/var/lib/kdelay/streams \
    DELAY_HTTP_PORT=8080
EXPOSE 8080
# Ready: the instance has its tasks and serves (GET /health/ready, which needs no token). bash's
# /dev/tcp rather than curl, which not every JRE image has. Podman keeps a HEALTHCHECK only in
# Docker-format images (podman build --format docker).
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${DELAY_HTTP_PORT} && printf 'GET /health/ready HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=50", "-jar", "/opt/kdelay/delay-service.jar"]
CMD ["run"]
