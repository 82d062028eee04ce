# syntax=docker/dockerfile:1
#
# kdelay built from this repository: a Maven stage builds the service's shaded jar, a JRE stage runs
# it. docker-compose.yml builds it as kdelay:local.
#
#   docker build -t kdelay:local .
#   docker run -e DELAY_BOOTSTRAP_SERVERS=broker:9092 -p 8080:8080 kdelay:local

FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
# The Maven repository is a build cache, kept between builds; tests run in CI, not here.
RUN --mount=type=cache,target=/root/.m2 \
    mvn -B -ntp -DskipTests -pl delay-service -am package

FROM eclipse-temurin:17-jre
RUN useradd --system --uid 10001 --home-dir /var/lib/kdelay kdelay \
    && mkdir -p /var/lib/kdelay \
    && chown kdelay /var/lib/kdelay
COPY --from=build /src/delay-service/target/delay-service.jar /opt/kdelay/delay-service.jar
USER kdelay
WORKDIR /var/lib/kdelay
# State stores under the volume the compose file mounts here; metrics, health and admin on 8080.
ENV DELAY_STATE_DIR=/var/lib/kdelay/streams \
    DELAY_HTTP_PORT=8080
EXPOSE 8080
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=50", "-jar", "/opt/kdelay/delay-service.jar"]
CMD ["run"]
