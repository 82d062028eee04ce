package dev.kdelay.service.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.topology.StreamsTuning;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigSourcesTest {

  @TempDir Path dir;

  @Test
  void shouldUseDefaultsWhenNothingIsGiven() {
    ServiceConfig config = ConfigSources.load(Optional.empty(), Map.of());

    assertThat(config.delay().bootstrapServers()).isEmpty();
    assertThat(config.delay().requestsTopic()).isEqualTo("delay-requests");
  }

  @Test
  void shouldReadKeysAndKafkaPropertiesWhenAFileIsGiven() throws IOException {
    // given
    Path file =
        write(
            "delay.requests.topic=orders-later\n"
                + "delay.http.port=9000\n"
                + "security.protocol=SASL_SSL\n");

    // when
    ServiceConfig config = ConfigSources.load(Optional.of(file), Map.of());

    // then
    assertThat(config.delay().requestsTopic()).isEqualTo("orders-later");
    assertThat(config.httpPort()).isEqualTo(9000);
    assertThat(config.delay().kafkaProperties()).containsEntry("security.protocol", "SASL_SSL");
  }

  @Test
  void shouldPreferTheEnvironmentWhenBothSetAKey() throws IOException {
    Path file = write("delay.requests.topic=from-file\ndelay.dlq.topic=dlq-from-file\n");

    ServiceConfig config =
        ConfigSources.load(
            Optional.of(file), Map.of("DELAY_REQUESTS_TOPIC", "from-env", "PATH", "/usr/bin"));

    assertThat(config.delay().requestsTopic()).isEqualTo("from-env");
    assertThat(config.delay().dlqTopic()).isEqualTo("dlq-from-file");
  }

  @Test
  void shouldPassKafkaPropertiesThroughWhenPrefixedDelayKafka() throws IOException {
    Path file = write("security.protocol=PLAINTEXT\n");

    ServiceConfig config =
        ConfigSources.load(
            Optional.of(file),
            Map.of(
                "DELAY_KAFKA_SECURITY_PROTOCOL", "SSL",
                "DELAY_KAFKA_SASL_MECHANISM", "PLAIN"));

    assertThat(config.delay().kafkaProperties())
        .containsEntry("security.protocol", "SSL")
        .containsEntry("sasl.mechanism", "PLAIN");
    assertThat(StreamsTuning.streamsProperties(config.delay()))
        .containsEntry("security.protocol", "SSL");
  }

  @Test
  void shouldAcceptAndForgetARetiredKeyWhileRefusingAMisspeltOne() throws IOException {
    // given: a key kdelay no longer uses, from a file and from the environment
    Path file = write("delay.bucket.width.ms=60000\n");

    // when
    ServiceConfig fromFile = ConfigSources.load(Optional.of(file), Map.of());
    ServiceConfig fromEnvironment =
        ConfigSources.load(Optional.empty(), Map.of("DELAY_BUCKET_WIDTH_MS", "60000"));

    // then: accepted, and not carried into the configuration
    assertThat(fromFile.originals()).doesNotContainKey("delay.bucket.width.ms");
    assertThat(fromEnvironment.delay().originals()).doesNotContainKey("delay.bucket.width.ms");
    assertThat(ServiceConfig.configDef().names()).doesNotContain("delay.bucket.width.ms");
    assertThatThrownBy(
            () -> ConfigSources.load(Optional.empty(), Map.of("DELAY_BUCKET_WIDTH", "60000")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.bucket.width (from environment variable DELAY_BUCKET_WIDTH)")
        .hasMessageContaining("unknown kdelay configuration key");
  }

  @Test
  void shouldNameKeyValueSourceAndAllowedWhenAValueIsBad() {
    assertThatThrownBy(
            () -> ConfigSources.load(Optional.empty(), Map.of("DELAY_HTTP_PORT", "99999")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.http.port=99999")
        .hasMessageContaining("environment variable DELAY_HTTP_PORT")
        .hasMessageContaining("[0,...,65535]");
  }

  @Test
  void shouldNameTheTypeWhenAValueIsNotANumber() throws IOException {
    Path file = write("delay.topic.partitions=many\n");

    assertThatThrownBy(() -> ConfigSources.load(Optional.of(file), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.topic.partitions=many")
        .hasMessageContaining("file " + file)
        .hasMessageContaining("int");
  }

  @Test
  void shouldReportEveryBadValueWhenSeveralAreBad() {
    assertThatThrownBy(
            () ->
                ConfigSources.load(
                    Optional.empty(),
                    Map.of(
                        "DELAY_TARGET_TOPIC_ALLOW", "orders-(",
                        "DELAY_PROCESSING_GUARANTEE", "maybe_once")))
        .hasMessageContaining("delay.target.topic.allow=orders-(")
        .hasMessageContaining("not a valid regular expression")
        .hasMessageContaining("delay.processing.guarantee=maybe_once")
        .hasMessageContaining("exactly_once_v2");
  }

  @Test
  void shouldRejectAnUnknownKeyWhenAVariableIsMisspelt() {
    assertThatThrownBy(
            () ->
                ConfigSources.load(
                    Optional.empty(), Map.of("DELAY_BOOTSTRAP_SERVER", "kafka:9092")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "delay.bootstrap.server (from environment variable DELAY_BOOTSTRAP_SERVER)")
        .hasMessageContaining("unknown kdelay configuration key")
        .hasMessageContaining("delay.bootstrap.servers");
  }

  @Test
  void shouldNameTheVariableButNotItsValueWhenAMisspeltVariableCarriesASecret() {
    String jaas =
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"kdelay\""
            + " password=\"s3cr3t-pa55\";";

    assertThatThrownBy(
            () -> ConfigSources.load(Optional.empty(), Map.of("DELAY_SASL_JAAS_CONFIGG", jaas)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("environment variable DELAY_SASL_JAAS_CONFIGG")
        .hasMessageContaining("unknown kdelay configuration key")
        .hasMessageNotContaining("s3cr3t-pa55")
        .hasMessageNotContaining("PlainLoginModule");
  }

  @Test
  void shouldNotShowAnyValueWhenAnUnknownKeyComesFromTheFile() throws IOException {
    Path file = write("delay.http.auth.tokn=write 0123456789abcdef\n");

    assertThatThrownBy(() -> ConfigSources.load(Optional.of(file), Map.of()))
        .hasMessageContaining("delay.http.auth.tokn (from file " + file + ")")
        .hasMessageNotContaining("0123456789abcdef");
  }

  @Test
  void shouldNotEchoTheValueWhenASecretKeyHasABadValue() {
    // given: a kdelay key holding a secret, with a validator that quotes what it rejects
    ConfigDef definition =
        new ConfigDef()
            .define(
                "delay.webhook.secret",
                ConfigDef.Type.STRING,
                null,
                (name, value) -> {
                  if (value != null) {
                    throw new ConfigException(name, value, "too short");
                  }
                },
                ConfigDef.Importance.LOW,
                "a secret");
    ConfigSources.Settings settings = new ConfigSources.Settings();
    settings.put("delay.webhook.secret", "hunter2", "environment variable DELAY_WEBHOOK_SECRET");

    // when / then
    assertThatThrownBy(() -> settings.validate(definition))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.webhook.secret=[hidden]")
        .hasMessageContaining("too short")
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void shouldNotEchoTheValueWhenAKeyNamedLikeASecretHasABadValue() {
    ConfigDef definition =
        new ConfigDef()
            .define(
                "delay.api.token",
                ConfigDef.Type.INT,
                ConfigDef.Importance.LOW,
                "a number that is secret");
    ConfigSources.Settings settings = new ConfigSources.Settings();
    settings.put("delay.api.token", "not-a-number-42", "file kdelay.properties");

    assertThatThrownBy(() -> settings.validate(definition))
        .hasMessageContaining("delay.api.token=[hidden] (from file kdelay.properties)")
        .hasMessageNotContaining("not-a-number-42");
  }

  @Test
  void shouldFailClearlyWhenTheFileIsMissing() {
    Path missing = dir.resolve("missing.properties");

    assertThatThrownBy(() -> ConfigSources.load(Optional.of(missing), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("Cannot read configuration file " + missing);
  }

  @Test
  void shouldMapVariablesWhenTheyHaveOurPrefix() {
    assertThat(ConfigSources.keyOfVariable("DELAY_STATE_DIR")).contains("delay.state.dir");
    assertThat(ConfigSources.keyOfVariable("DELAY_KAFKA_SSL_TRUSTSTORE_LOCATION"))
        .contains("ssl.truststore.location");
    assertThat(ConfigSources.keyOfVariable("DELAY_")).isEmpty();
    assertThat(ConfigSources.keyOfVariable("HOME")).isEmpty();
  }

  private Path write(String content) throws IOException {
    Path file = dir.resolve("kdelay.properties");
    Files.writeString(file, content);
    return file;
  }
}
