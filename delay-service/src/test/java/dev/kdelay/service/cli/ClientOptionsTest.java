package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientOptionsTest {

  @TempDir Path dir;

  @Test
  void shouldGiveEachCliClientItsSecuritySettingsWhenTheyComeFromTheFileAndTheEnvironment()
      throws IOException {
    // given: the protocol in the file, the credentials in variables, one client's of its own
    Path file = dir.resolve("kdelay.properties");
    Files.writeString(file, "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n");
    Map<String, String> environment =
        Map.of(
            "DELAY_KAFKA_SASL_JAAS_CONFIG", "plain-jaas",
            "DELAY_KAFKA_CONSUMER_SASL_JAAS_CONFIG", "consumer-jaas",
            "DELAY_BOOTSTRAP_SERVERS", "kafka:9093");
    CommandLine line =
        CommandLine.parse(List.of("--config", file.toString()), ClientOptions.OPTIONS, Set.of());

    // when
    ClientOptions options = ClientOptions.from(line, environment);

    // then
    assertThat(options.producerProperties())
        .containsEntry("bootstrap.servers", "kafka:9093")
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.mechanism", "PLAIN")
        .containsEntry("sasl.jaas.config", "plain-jaas");
    assertThat(options.adminProperties())
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.jaas.config", "plain-jaas");
    assertThat(options.consumerProperties())
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.jaas.config", "consumer-jaas");
  }
}
