package dev.kdelay.service.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretKeysTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "sasl.jaas.config",
        "producer.sasl.jaas.config",
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.truststore.password",
        "ssl.keystore.key",
        "sasl.oauthbearer.client.credentials.client.secret",
        "basic.auth.user.info",
        "delay.sasl.jaas.configg",
        "delay.http.auth.token",
        "DELAY_KAFKA_SSL_KEY_PASSWORD"
      })
  void shouldHideTheValueWhenTheKeyHoldsASecret(String key) {
    assertThat(SecretKeys.isSecret(key)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "bootstrap.servers",
        "security.protocol",
        "sasl.mechanism",
        "ssl.keystore.location",
        "ssl.keystore.type",
        "delay.http.auth.tokens.file",
        "delay.requests.topic"
      })
  void shouldShowTheValueWhenTheKeyHoldsNoSecret(String key) {
    assertThat(SecretKeys.isSecret(key)).isFalse();
  }
}
