package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.RestoreProgress;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams.State;
import org.junit.jupiter.api.Test;

class HealthTest {

  private final RestoreProgress restore = new RestoreProgress();
  private State state = State.RUNNING;
  private boolean warming;
  private final Health health = new Health(() -> Optional.of(state), restore, () -> warming);

  @Test
  void shouldBeLiveAndReadyWhenRunningWithNothingToRestore() {
    assertThat(health.live().status()).isEqualTo(200);
    assertThat(health.ready().status()).isEqualTo(200);
    assertThat(health.ready().bodyText()).contains("\"status\":\"UP\"", "\"state\":\"RUNNING\"");
  }

  @Test
  void shouldBeLiveButNotReadyWhileRebalancing() {
    state = State.REBALANCING;
    assertThat(health.live().status()).isEqualTo(200);
    ApiResponse ready = health.ready();
    assertThat(ready.status()).isEqualTo(503);
    assertThat(ready.bodyText()).contains("\"status\":\"DOWN\"", "REBALANCING");
  }

  @Test
  void shouldNotBeReadyWhileAStoreIsRestoredAndSayWhich() {
    // given
    TopicPartition changelog = new TopicPartition("app-delay-tasks-changelog", 2);
    restore.onRestoreStart(changelog, "delay-tasks", 0, 1_000);
    restore.onBatchRestored(changelog, "delay-tasks", 400, 400);

    // when
    ApiResponse ready = health.ready();

    // then
    assertThat(ready.status()).isEqualTo(503);
    assertThat(ready.bodyText())
        .contains("\"store\":\"delay-tasks\"", "\"partition\":2", "\"restored\":400");

    // and when it ends
    restore.onRestoreEnd(changelog, "delay-tasks", 1_000);
    assertThat(health.ready().status()).isEqualTo(200);
  }

  @Test
  void shouldBeLiveButNotReadyWhileTheFirePathWarmsUp() {
    warming = true;
    assertThat(health.live().status()).isEqualTo(200);
    assertThat(health.ready().status()).isEqualTo(503);
    assertThat(health.ready().bodyText()).contains("warming up");

    warming = false;
    assertThat(health.ready().status()).isEqualTo(200);
  }

  @Test
  void shouldNotBeLiveWhenKafkaStreamsFailed() {
    state = State.ERROR;
    assertThat(health.live().status()).isEqualTo(503);
    assertThat(health.live().bodyText()).contains("ERROR");
    assertThat(health.ready().status()).isEqualTo(503);
  }
}
