package dev.kdelay.topology.internals.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.DelayConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TargetPolicyTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "_schemas",
        "_confluent-command",
        "billing-app-ledger-store-changelog",
        "billing-app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition",
        "billing-app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
        "connect-offsets",
        "connect-configs",
        "connect-status"
      })
  void shouldRefuseOtherApplicationsInternalTopicsWhenTheAllowlistIsTheDefault(String topic) {
    assertThat(policy(Map.of()).refusal(topic))
        .get()
        .asString()
        .contains("name it in delay.target.topic.allow");
  }

  @ParameterizedTest
  @ValueSource(strings = {"orders", "orders.timeouts", "change-log", "repartitioned", "my_topic"})
  void shouldAllowOrdinaryTopicsWhenTheAllowlistIsTheDefault(String topic) {
    assertThat(policy(Map.of()).refusal(topic)).isEmpty();
  }

  @Test
  void shouldAllowAnotherApplicationsInternalTopicWhenTheAllowlistNamesIt() {
    TargetPolicy policy =
        policy(Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, "_schemas|billing-app-.*-changelog"));

    assertThat(policy.refusal("_schemas")).isEmpty();
    assertThat(policy.refusal("billing-app-ledger-changelog")).isEmpty();
    assertThat(policy.refusal("connect-offsets")).get().asString().contains("does not match");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        ".*",
        "^.*$",
        ".+",
        "(?s).*",
        ".*-(changelog|repartition|topic)|_.*|connect-.*|orders",
        "[^!]*"
      })
  void shouldNotCountAPatternThatMatchesAnyInternalTopicAsNamingOne(String allow) {
    TargetPolicy policy = policy(Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, allow));

    for (String internal :
        List.of(
            "_schemas",
            "billing-app-ledger-store-changelog",
            "billing-app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition",
            "billing-app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000006-topic",
            "connect-offsets")) {
      assertThat(policy.refusal(internal))
          .as("%s under %s", internal, allow)
          .get()
          .asString()
          .contains("name it in delay.target.topic.allow");
    }
    assertThat(policy.refusal("orders")).isEmpty();
  }

  @Test
  void shouldCountAPatternThatSpellsOutAnApplicationAsNamingItsInternalTopics() {
    TargetPolicy policy =
        policy(
            Map.of(
                DelayConfig.TARGET_TOPIC_ALLOW_CONFIG,
                "billing-app-.*|_confluent-.*|connect-status"));

    assertThat(policy.refusal("billing-app-ledger-store-changelog")).isEmpty();
    assertThat(policy.refusal("billing-app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000006-topic"))
        .isEmpty();
    assertThat(policy.refusal("_confluent-command")).isEmpty();
    assertThat(policy.refusal("connect-status")).isEmpty();
    assertThat(policy.refusal("shipping-app-ledger-store-changelog"))
        .get()
        .asString()
        .contains("does not match");
  }

  @Test
  void shouldRefuseKdelaysOwnTopicsWhateverTheAllowlistSays() {
    TargetPolicy policy =
        policy(Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, ".*-changelog|_.*|.+"));

    assertThat(policy.refusal("kdelay-delay-tasks-changelog"))
        .get()
        .asString()
        .contains("kdelay's own");
    assertThat(policy.refusal("__consumer_offsets")).get().asString().contains("Kafka-internal");
    // the topic of fire-rate limits: a task written there would change how fast kdelay fires
    assertThat(policy.refusal("delay-requests-limits")).get().asString().contains("kdelay's own");
  }

  @Test
  void shouldKnowItsOwnTopicsByTheApplicationIdInEffect() {
    // given: application.id passed through to Kafka Streams, which wins over delay.application.id
    TargetPolicy policy =
        policy(
            Map.of(
                DelayConfig.TARGET_TOPIC_ALLOW_CONFIG,
                "scheduler-prod-.*|kdelay-.*",
                "application.id",
                "scheduler-prod"));

    assertThat(policy.refusal("scheduler-prod-delay-schedules-changelog"))
        .get()
        .asString()
        .contains("kdelay's own");
    assertThat(policy.refusal("kdelay-delay-schedules-changelog")).isEmpty();
  }

  private static TargetPolicy policy(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>(overrides);
    settings.putIfAbsent(DelayConfig.APPLICATION_ID_CONFIG, "kdelay");
    return new TargetPolicy(new DelayConfig(settings));
  }
}
