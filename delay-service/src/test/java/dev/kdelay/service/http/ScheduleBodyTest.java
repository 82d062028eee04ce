package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ScheduleBodyTest {

  private static final long NOW = Instant.parse("2026-03-01T12:00:00Z").toEpochMilli();
  private static final ScheduleBody.ServiceLimits LIMITS =
      new ScheduleBody.ServiceLimits(64, 1024, Duration.ofDays(365).toMillis());

  @Test
  void shouldReadAOneShotWithEveryOptionWhenAllFieldsAreGiven() {
    // when
    DelayedMessage message =
        parse(
            """
            {"id": "order-42", "targetTopic": "orders", "targetKey": "customer-7",
             "targetPartition": 3, "fireAt": "2026-03-01T13:00:00Z", "payload": "hello",
             "headers": {"traceparent": "00-abc", "tenant": "t1"}}
            """);

    // then
    assertThat(message.id()).isEqualTo("order-42");
    assertThat(message.targetTopic()).isEqualTo("orders");
    assertThat(message.targetKey()).hasValue("customer-7");
    assertThat(message.targetPartition()).hasValue(3);
    assertThat(message.fireAt()).hasValue(Instant.parse("2026-03-01T13:00:00Z"));
    assertThat(message.payload()).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
    assertThat(message.headers())
        .extracting(
            header -> header.key() + "=" + new String(header.value(), StandardCharsets.UTF_8))
        .containsExactly("traceparent=00-abc", "tenant=t1");
  }

  @Test
  void shouldReadTimesAsNumbersOfMillisecondsAndDurationsWithUnits() {
    assertThat(
            parse("{\"id\":\"a\",\"targetTopic\":\"t\",\"fireAt\":1772370000000,\"payload\":\"\"}")
                .fireAt())
        .hasValue(Instant.ofEpochMilli(1772370000000L));
    assertThat(
            parse("{\"id\":\"a\",\"targetTopic\":\"t\",\"after\":1500,\"payload\":\"\"}").after())
        .hasValue(Duration.ofMillis(1500));
    assertThat(
            parse("{\"id\":\"a\",\"targetTopic\":\"t\",\"after\":\"PT30S\",\"payload\":\"\"}")
                .after())
        .hasValue(Duration.ofSeconds(30));
    assertThat(
            parse("{\"id\":\"a\",\"targetTopic\":\"t\",\"after\":\"5m\",\"payload\":\"\"}").after())
        .hasValue(Duration.ofMinutes(5));
  }

  @Test
  void shouldReadACronScheduleWithItsOptions() {
    // when
    DelayedMessage message =
        parse(
            """
            {"id": "nightly", "targetTopic": "reports", "cron": "15 2 * * *", "cronType": "unix",
             "zone": "Europe/Berlin", "startAt": "2026-04-01T00:00:00Z", "endAt": "2026-12-31T00:00:00Z",
             "maxFires": 30, "misfire": "skip", "payloadBase64": "AAEC"}
            """);

    // then
    assertThat(message.cron()).isPresent();
    assertThat(message.cron().get().expression()).isEqualTo("15 2 * * *");
    assertThat(message.cron().get().type()).isEqualTo(CronFlavor.UNIX);
    assertThat(message.cron().get().zone()).isEqualTo(ZoneId.of("Europe/Berlin"));
    assertThat(message.cron().get().startAt()).hasValue(Instant.parse("2026-04-01T00:00:00Z"));
    assertThat(message.cron().get().endAt()).hasValue(Instant.parse("2026-12-31T00:00:00Z"));
    assertThat(message.cron().get().maxFires()).hasValue(30);
    assertThat(message.cron().get().misfire()).isEqualTo(Misfire.SKIP);
    assertThat(message.payload()).containsExactly(0, 1, 2);
  }

  @Test
  void shouldScheduleATombstoneWhenThePayloadIsNull() {
    DelayedMessage message =
        parse("{\"id\":\"a\",\"targetTopic\":\"t\",\"after\":\"1s\",\"payload\":null}");
    assertThat(message.payload()).isNull();
  }

  @Test
  void shouldTreatAnExplicitNullLikeAnAbsentFieldWhenTheFieldIsOptional() {
    // when: every optional field but payload is given as null next to a one-shot
    DelayedMessage message =
        parse(
            """
            {"id": "a", "targetTopic": "t", "after": "1s", "payload": "p",
             "fireAt": null, "cron": null, "cronType": null, "zone": null, "startAt": null,
             "endAt": null, "maxFires": null, "misfire": null, "targetKey": null,
             "targetPartition": null, "payloadBase64": null, "headers": null}
            """);

    // then: the same message as without them
    assertThat(message.after()).hasValue(Duration.ofSeconds(1));
    assertThat(message.fireAt()).isEmpty();
    assertThat(message.cron()).isEmpty();
    assertThat(message.targetKey()).isEmpty();
    assertThat(message.targetPartition()).isEmpty();
    assertThat(message.payload()).isEqualTo("p".getBytes(StandardCharsets.UTF_8));
    assertThat(message.headers()).isEmpty();
  }

  @Test
  void shouldReadACronScheduleWhenTheOneShotTimesAreNull() {
    DelayedMessage message =
        parse(
            """
            {"id": "a", "targetTopic": "t", "fireAt": null, "after": null,
             "cron": "0 0 * * * ?", "zone": "UTC", "payloadBase64": "AA=="}
            """);
    assertThat(message.cron()).isPresent();
    assertThat(message.fireAt()).isEmpty();
    assertThat(message.after()).isEmpty();
    assertThat(message.payload()).containsExactly(0);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "not JSON                   | {oops                                                                  | BAD_REQUEST",
        "not an object              | [1, 2]                                                                 | BAD_REQUEST",
        "unknown field              | {'id':'a','targetTopic':'t','after':'1s','payload':'','fire_at':1}     | BAD_REQUEST",
        "no id                      | {'targetTopic':'t','after':'1s','payload':''}                          | BAD_ID",
        "id too long                | {'id':'$LONG','targetTopic':'t','after':'1s','payload':''}             | BAD_ID",
        "no target                  | {'id':'a','after':'1s','payload':''}                                   | MISSING_TARGET",
        "illegal target             | {'id':'a','targetTopic':'no/slash','after':'1s','payload':''}          | BAD_TARGET",
        "no time                    | {'id':'a','targetTopic':'t','payload':''}                              | MISSING_TIME",
        "two times                  | {'id':'a','targetTopic':'t','after':'1s','fireAt':1,'payload':''}      | CONFLICTING_TIMES",
        "cron option on a one-shot  | {'id':'a','targetTopic':'t','after':'1s','zone':'UTC','payload':''}    | CONFLICTING_TIMES",
        "bad instant                | {'id':'a','targetTopic':'t','fireAt':'tomorrow','payload':''}          | BAD_TIME",
        "negative duration          | {'id':'a','targetTopic':'t','after':'-PT1S','payload':''}              | BAD_TIME",
        "beyond the horizon         | {'id':'a','targetTopic':'t','fireAt':'2030-01-01T00:00:00Z','payload':''} | TOO_FAR",
        "bad cron                   | {'id':'a','targetTopic':'t','cron':'every day','payload':''}           | BAD_CRON",
        "bad cron type              | {'id':'a','targetTopic':'t','cron':'* * * * *','cronType':'cronie','payload':''} | BAD_CRON",
        "bad zone                   | {'id':'a','targetTopic':'t','cron':'0 0 * * * ?','zone':'Mars/Olympus','payload':''} | BAD_ZONE",
        "end before start           | {'id':'a','targetTopic':'t','cron':'0 0 * * * ?','startAt':'2026-05-01T00:00:00Z','endAt':'2026-04-01T00:00:00Z','payload':''} | BAD_TIME",
        "zero max fires             | {'id':'a','targetTopic':'t','cron':'0 0 * * * ?','maxFires':0,'payload':''} | BAD_HEADER",
        "bad misfire                | {'id':'a','targetTopic':'t','cron':'0 0 * * * ?','misfire':'never','payload':''} | BAD_HEADER",
        "no payload                 | {'id':'a','targetTopic':'t','after':'1s'}                              | BAD_REQUEST",
        "two payloads               | {'id':'a','targetTopic':'t','after':'1s','payload':'','payloadBase64':''} | BAD_REQUEST",
        "bad base64                 | {'id':'a','targetTopic':'t','after':'1s','payloadBase64':'***'}        | BAD_REQUEST",
        "payload too large          | {'id':'a','targetTopic':'t','after':'1s','payload':'$HUGE'}            | TOO_LARGE",
        "reserved header            | {'id':'a','targetTopic':'t','after':'1s','payload':'','headers':{'delay-id':'x'}} | BAD_HEADER",
        "header not text            | {'id':'a','targetTopic':'t','after':'1s','payload':'','headers':{'n':1}} | BAD_HEADER",
        "negative partition         | {'id':'a','targetTopic':'t','after':'1s','payload':'','targetPartition':-1} | BAD_PARTITION",
        "id of the wrong type       | {'id':7,'targetTopic':'t','after':'1s','payload':''}                   | BAD_REQUEST",
        "null id                    | {'id':null,'targetTopic':'t','after':'1s','payload':''}                | BAD_ID",
        "null target                | {'id':'a','targetTopic':null,'after':'1s','payload':''}                | MISSING_TARGET",
        "the only time is null      | {'id':'a','targetTopic':'t','fireAt':null,'payload':''}                | MISSING_TIME",
        "an id that says payload    | {'id':'payload','targetTopic':'t','fireAt':null,'payload':''}          | MISSING_TIME",
        "an id that says fireAt     | {'id':'fireAt','targetTopic':'t','after':'1s','cron':'* * * * * ?','payload':''} | CONFLICTING_TIMES",
        "the only payload is null   | {'id':'a','targetTopic':'t','after':'1s','payloadBase64':null}         | BAD_REQUEST",
        "unpaired surrogate in id   | {'id':'a\\uD800','targetTopic':'t','after':'1s','payload':''}        | BAD_ID",
        "illegal target, id says id | {'id':'id x','targetTopic':'no/slash','after':'1s','payload':''}       | BAD_TARGET",
        "null unknown field         | {'id':'a','targetTopic':'t','after':'1s','payload':'','fire_at':null}  | BAD_REQUEST",
      })
  void shouldRejectWithTheRequestTopicsCodeWhenTheBodyIsInvalid(
      String why, String body, String code) {
    String json =
        body.replace('\'', '"').replace("$LONG", "x".repeat(65)).replace("$HUGE", "x".repeat(1025));
    assertThatThrownBy(() -> parse(json))
        .as(why)
        .isInstanceOfSatisfying(
            ApiException.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.code()).isEqualTo(code);
              assertThat(e.getMessage()).isNotBlank();
            });
  }

  private static DelayedMessage parse(String json) {
    return ScheduleBody.parse(json.getBytes(StandardCharsets.UTF_8), LIMITS, NOW);
  }
}
