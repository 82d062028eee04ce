package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.TenantIds;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tenants ({@code delay.tenants}): each schedules through its own request topic, its ids are its
 * own, its targets are its own and its dead letters go to its own topic; what leaves kdelay carries
 * the id as the tenant sent it and names the tenant. The shared request topic acts for all.
 */
class TenantsTest {

  private static final Map<String, Object> TWO_TENANTS =
      Map.of(DelayConfig.TENANTS_CONFIG, "teama,teamb");
  private static final Instant DUE = START.plusSeconds(10);

  @TempDir Path stateDir;

  @Test
  void shouldRefuseATenantsNewScheduleBeyondItsPendingLimitButNeverAReplacementOrACancel() {
    Map<String, Object> teamaHoldsTwo =
        Map.of(
            DelayConfig.TENANTS_CONFIG,
            "teama,teamb",
            "delay.tenant.teama.max.pending",
            "4",
            DelayConfig.REQUESTS_PARTITIONS_CONFIG,
            2);
    try (DelayDriver driver = new DelayDriver(stateDir, teamaHoldsTwo)) {
      // given: teama holds two (its share of four over two partitions), one of them paused
      driver.requestAs("teama", "a-1", "1", schedule("teama.orders", DUE));
      driver.requestAs(
          "teama",
          "a-2",
          "2",
          header(DelayHeaders.TARGET_TOPIC, "teama.orders"),
          header(DelayHeaders.CRON, "0 0 * * * ?"));
      driver.requestAs("teama", "a-2", null, header(DelayHeaders.ACTION, "pause"));

      // when: a third, a replacement of the first, teamb's and the shared namespace's
      driver.requestAs("teama", "a-3", "3", schedule("teama.orders", DUE));
      driver.requestAs("teama", "a-1", "1 again", schedule("teama.orders", DUE));
      driver.requestAs("teamb", "b-1", "b", schedule("teamb.orders", DUE));
      driver.request("shared-1", "s", schedule("teamb.orders", DUE));

      // then: only the third is refused, into teama's dead letters
      List<TestRecord<byte[], byte[]>> dead = driver.output("delay-dlq.teama").readRecordsToList();
      assertThat(dead).extracting(r -> text(r.key())).containsExactly("a-3");
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR))
          .isEqualTo(RejectionReason.TOO_MANY_PENDING.name());
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("holds 2 pending schedules", "max.pending=4 over 2 partitions");

      // when: teama cancels one, and schedules the third again
      driver.requestAs("teama", "a-2", null, header(DelayHeaders.ACTION, "cancel"));
      driver.requestAs("teama", "a-3", "3", schedule("teama.orders", DUE));
      driver.advanceTo(DUE.plusMillis(50));

      // then: there was room, and every schedule held fired
      assertThat(driver.output("delay-dlq.teama").readRecordsToList()).isEmpty();
      assertThat(driver.output("teama.orders").readRecordsToList())
          .extracting(r -> text(r.value()))
          .containsExactlyInAnyOrder("1 again", "3");
      assertThat(driver.output("teamb.orders").readRecordsToList()).hasSize(2);
      // and once fired, the two leave room for two more
      driver.requestAs("teama", "a-4", "4", schedule("teama.orders", DUE.plusSeconds(60)));
      driver.requestAs("teama", "a-5", "5", schedule("teama.orders", DUE.plusSeconds(60)));
      assertThat(driver.output("delay-dlq.teama").readRecordsToList()).isEmpty();
    }
  }

  @Test
  void shouldKeepEachTenantsIdsItsOwnWhenTwoUseTheSameId() {
    try (DelayDriver driver = new DelayDriver(stateDir, TWO_TENANTS)) {
      // given: both tenants schedule order-1, each to its own topic
      driver.requestAs("teama", "order-1", "a's", schedule("teama.orders", DUE));
      driver.requestAs("teamb", "order-1", "b's", schedule("teamb.orders", DUE));

      // when: teamb cancels its order-1, and the clock passes the due time
      driver.requestAs("teamb", "order-1", null, header(DelayHeaders.ACTION, "cancel"));
      driver.advanceTo(DUE.plusMillis(50));

      // then: teama's still fired, as teama sent it
      List<TestRecord<byte[], byte[]>> fired = driver.output("teama.orders").readRecordsToList();
      assertThat(fired).hasSize(1);
      TestRecord<byte[], byte[]> a = fired.get(0);
      assertThat(text(a.key())).isEqualTo("order-1");
      assertThat(text(a.value())).isEqualTo("a's");
      assertThat(headerText(a.headers(), DelayHeaders.ID)).isEqualTo("order-1");
      assertThat(headerText(a.headers(), DelayHeaders.TENANT)).isEqualTo("teama");
      assertThat(headerText(a.headers(), DelayHeaders.IDEMPOTENCY_KEY))
          .isEqualTo(DelayHeaders.idempotencyKey("order-1", DUE.toEpochMilli()));
      // and teamb's did not
      assertThat(driver.output("teamb.orders").readRecordsToList()).isEmpty();
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldRefuseATargetOutsideTheTenantsOwnIntoItsOwnDeadLetterTopic() {
    try (DelayDriver driver = new DelayDriver(stateDir, TWO_TENANTS)) {
      // when: teama targets teamb's topic, and another deployment topic; teamb its own
      driver.requestAs("teama", "x", "v", schedule("teamb.orders", DUE));
      driver.requestAs("teama", "y", "v", schedule(driver.config.requestsTopic() + ".teamb", DUE));
      driver.requestAs("teamb", "z", "v", schedule("teamb.orders", DUE));
      driver.advanceTo(DUE.plusMillis(50));

      // then: teama's two are dead letters in teama's own topic, keyed as teama sent them
      List<TestRecord<byte[], byte[]>> teama = driver.output("delay-dlq.teama").readRecordsToList();
      assertThat(teama).extracting(record -> text(record.key())).containsExactly("x", "y");
      assertThat(teama)
          .allSatisfy(
              record -> {
                assertThat(headerText(record.headers(), DelayHeaders.ERROR))
                    .isEqualTo(RejectionReason.TARGET_NOT_ALLOWED.name());
                assertThat(headerText(record.headers(), DelayHeaders.TENANT)).isEqualTo("teama");
              });
      assertThat(headerText(teama.get(0).headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("tenant teama");
      assertThat(headerText(teama.get(1).headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("kdelay's own topics");
      // and nothing else went anywhere
      assertThat(driver.deadLetters()).isEmpty();
      assertThat(driver.output("delay-dlq.teamb").readRecordsToList()).isEmpty();
      assertThat(driver.output("teamb.orders").readRecordsToList())
          .extracting(record -> headerText(record.headers(), DelayHeaders.TENANT))
          .containsExactly("teamb");
    }
  }

  @Test
  void shouldLetATenantsOwnAllowlistWidenWhereItMayTarget() {
    Map<String, Object> settings = new HashMap<>(TWO_TENANTS);
    settings.put("delay.tenant.teama.target.topic.allow", "orders\\..*");
    try (DelayDriver driver = new DelayDriver(stateDir, settings)) {
      driver.requestAs("teama", "x", "v", schedule("orders.eu", DUE));
      driver.requestAs("teama", "y", "v", schedule("teama.orders", DUE));
      driver.requestAs("teamb", "z", "v", schedule("orders.eu", DUE));
      driver.advanceTo(DUE.plusMillis(50));

      assertThat(driver.output("orders.eu").readRecordsToList())
          .extracting(record -> text(record.key()))
          .containsExactly("x");
      assertThat(driver.output("delay-dlq.teama").readRecordsToList())
          .extracting(record -> text(record.key()))
          .containsExactly("y");
      assertThat(driver.output("delay-dlq.teamb").readRecordsToList())
          .extracting(record -> text(record.key()))
          .containsExactly("z");
    }
  }

  @Test
  void shouldRefuseAPayloadLargerThanItsTenantMaySend() {
    Map<String, Object> settings = new HashMap<>(TWO_TENANTS);
    settings.put("delay.tenant.teama.max.payload.bytes", "4");
    try (DelayDriver driver = new DelayDriver(stateDir, settings)) {
      driver.requestAs("teama", "small", "1234", schedule("teama.t", DUE));
      driver.requestAs("teama", "large", "12345", schedule("teama.t", DUE));
      driver.requestAs("teamb", "large", "12345", schedule("teamb.t", DUE));
      driver.advanceTo(DUE.plusMillis(50));

      assertThat(driver.output("teama.t").readRecordsToList())
          .extracting(record -> text(record.key()))
          .containsExactly("small");
      assertThat(driver.output("teamb.t").readRecordsToList()).hasSize(1);
      List<TestRecord<byte[], byte[]>> dead = driver.output("delay-dlq.teama").readRecordsToList();
      assertThat(dead).extracting(record -> text(record.key())).containsExactly("large");
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR))
          .isEqualTo(RejectionReason.TOO_LARGE.name());
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("delay.tenant.teama.max.payload.bytes");
    }
  }

  @Test
  void shouldNeverTakeATenantFromARequestsOwnHeader() {
    try (DelayDriver driver = new DelayDriver(stateDir, TWO_TENANTS)) {
      Header forged = header(DelayHeaders.TENANT, "teamb");
      // a good request and a bad one from teama, each claiming to be teamb's
      driver.requestAs(
          "teama",
          "good",
          "v",
          forged,
          header(DelayHeaders.TARGET_TOPIC, "teama.t"),
          header(DelayHeaders.FIRE_AT, Long.toString(DUE.toEpochMilli())));
      driver.requestAs("teama", "bad", "v", forged, header(DelayHeaders.TARGET_TOPIC, "teama.t"));
      driver.advanceTo(DUE.plusMillis(50));

      TestRecord<byte[], byte[]> fired = driver.output("teama.t").readRecordsToList().get(0);
      assertThat(fired.headers().headers(DelayHeaders.TENANT))
          .extracting(h -> text(h.value()))
          .containsExactly("teama");
      List<TestRecord<byte[], byte[]>> dead = driver.output("delay-dlq.teama").readRecordsToList();
      assertThat(dead).hasSize(1);
      assertThat(dead.get(0).headers().headers(DelayHeaders.TENANT))
          .extracting(h -> text(h.value()))
          .containsExactly("teama");
      assertThat(driver.output("delay-dlq.teamb").readRecordsToList()).isEmpty();
    }
  }

  @Test
  void shouldLetTheSharedTopicAddressATenantsIdAndRefuseAnUnknownTenant() {
    try (DelayDriver driver = new DelayDriver(stateDir, TWO_TENANTS)) {
      // given: teama's and the shared topic's "job", and teamb's
      driver.requestAs("teama", "job", "a's", schedule("teama.t", DUE));
      driver.requestAs("teamb", "job", "b's", schedule("teamb.t", DUE));
      driver.request("job", "shared", schedule(DelayDriver.TARGET, DUE));

      // when: the shared topic cancels teama's job by its qualified id, and names an unknown tenant
      driver.request(TenantIds.qualified("teama", "job"), null);
      driver.request(TenantIds.qualified("nobody", "job"), null);
      driver.advanceTo(DUE.plusMillis(50));

      // then: teama's is gone; teamb's and the shared one fired, the shared one as before
      assertThat(driver.output("teama.t").readRecordsToList()).isEmpty();
      assertThat(driver.output("teamb.t").readRecordsToList()).hasSize(1);
      TestRecord<byte[], byte[]> shared = driver.fired().get(0);
      assertThat(text(shared.key())).isEqualTo("job");
      assertThat(shared.headers().lastHeader(DelayHeaders.TENANT)).isNull();
      // and the unknown tenant is refused in the shared dead-letter topic
      List<TestRecord<byte[], byte[]>> dead = driver.deadLetters();
      assertThat(dead).hasSize(1);
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR))
          .isEqualTo(RejectionReason.BAD_ID.name());
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("'nobody' is not a tenant");
    }
  }

  @Test
  void shouldFireATenantsCronScheduleAsItsOwn() {
    try (DelayDriver driver = new DelayDriver(stateDir, TWO_TENANTS)) {
      driver.requestAs(
          "teama",
          "every-second",
          "tick",
          header(DelayHeaders.TARGET_TOPIC, "teama.ticks"),
          header(DelayHeaders.CRON, "* * * * * ?"),
          header(DelayHeaders.MAX_FIRES, "3"));
      driver.advanceTo(START.plusSeconds(4));

      List<TestRecord<byte[], byte[]>> ticks = driver.output("teama.ticks").readRecordsToList();
      assertThat(ticks).hasSize(3);
      assertThat(ticks)
          .allSatisfy(
              tick -> {
                assertThat(text(tick.key())).isEqualTo("every-second");
                assertThat(headerText(tick.headers(), DelayHeaders.TENANT)).isEqualTo("teama");
              });
      assertThat(ticks)
          .extracting(tick -> headerText(tick.headers(), DelayHeaders.OCCURRENCE))
          .containsExactly("1", "2", "3");
    }
  }

  @Test
  void shouldRefuseTenantNamesAndKeysThatCannotBeRead() {
    assertThatThrownBy(() -> config(Map.of(DelayConfig.TENANTS_CONFIG, "TeamA")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lowercase letters and digits");
    assertThatThrownBy(() -> config(Map.of(DelayConfig.TENANTS_CONFIG, "a,b,a")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("twice");
    assertThatThrownBy(
            () ->
                config(
                    Map.of(
                        DelayConfig.TENANTS_CONFIG,
                        "a",
                        "delay.tenant.b.target.topic.allow",
                        ".*")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("names no tenant");
    assertThatThrownBy(
            () ->
                config(
                    Map.of(
                        DelayConfig.TENANTS_CONFIG, "a", "delay.tenant.a.target.topic.allow", "(")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("not a valid regular expression");
    assertThatThrownBy(
            () ->
                config(
                    Map.of(
                        DelayConfig.TENANTS_CONFIG, "a", "delay.tenant.a.max.payload.bytes", "-1")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("a number of bytes");
    for (String pending : List.of("0", "many", "-5")) {
      assertThatThrownBy(
              () ->
                  config(
                      Map.of(
                          DelayConfig.TENANTS_CONFIG, "a", "delay.tenant.a.max.pending", pending)))
          .as(pending)
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("a number of schedules, at least 1");
    }
    assertThat(
            config(Map.of(DelayConfig.TENANTS_CONFIG, "a", "delay.tenant.a.max.pending", "10"))
                .tenants()
                .named("a")
                .orElseThrow()
                .maxPendingPerPartition(4))
        .isEqualTo(3);
    assertThat(config(Map.of()).tenants().isEmpty()).isTrue();
    assertThat(config(Map.of(DelayConfig.TENANTS_CONFIG, " a , b2 ")).tenants().requestsTopics())
        .containsExactly("delay-requests.a", "delay-requests.b2");
  }

  private DelayConfig config(Map<String, Object> overrides) {
    return DelayDriver.config(stateDir, overrides);
  }

  private static Header[] schedule(String topic, Instant due) {
    return new Header[] {
      header(DelayHeaders.TARGET_TOPIC, topic),
      header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli()))
    };
  }
}
