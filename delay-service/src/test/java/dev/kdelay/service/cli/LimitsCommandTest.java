package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.limits.LimitsTopic;
import dev.kdelay.topology.FireRateLimits.Limit;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LimitsCommandTest {

  @Test
  void shouldListWhenGivenNoVerbOrOnlyOptions() {
    assertThat(LimitsCommand.parse(List.of()).verb()).isEqualTo("list");
    assertThat(LimitsCommand.parse(List.of("--bootstrap-servers", "k:9092")).verb())
        .isEqualTo("list");
    assertThat(LimitsCommand.parse(List.of("list")).verb()).isEqualTo("list");
  }

  @Test
  void shouldReadASetAndAClear() {
    LimitsCommand set = LimitsCommand.parse(List.of("set", "orders", "1000/50"));
    LimitsCommand none = LimitsCommand.parse(List.of("set", "orders", "none"));
    LimitsCommand clear = LimitsCommand.parse(List.of("clear", "orders"));

    assertThat(set.line().positionals()).containsExactly("orders", "1000/50");
    assertThat(none.line().positionals()).containsExactly("orders", "none");
    assertThat(clear.verb()).isEqualTo("clear");
  }

  @Test
  void shouldRefuseWhatTheInstancesWouldIgnore() {
    assertThatThrownBy(() -> LimitsCommand.parse(List.of("set", "orders", "fast")))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("not a rate, or rate/burst");
    assertThatThrownBy(() -> LimitsCommand.parse(List.of("set", "orders", "0")))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("above 0");
    assertThatThrownBy(() -> LimitsCommand.parse(List.of("set", "orders")))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("TOPIC and RATE");
    for (String notATopic : List.of("orders topic", "tenant:Billing", "tenant:", "a:b")) {
      assertThatThrownBy(() -> LimitsCommand.parse(List.of("set", notATopic, "10")))
          .as(notATopic)
          .isInstanceOf(UsageException.class)
          .hasMessageContaining("not a topic name, nor tenant:");
    }
    assertThat(LimitsCommand.parse(List.of("set", "tenant:billing", "20/20")).verb())
        .isEqualTo("set");
    assertThatThrownBy(() -> LimitsCommand.parse(List.of("clear")))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("needs TOPIC");
    assertThatThrownBy(() -> LimitsCommand.parse(List.of("lift", "orders")))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("unknown limits verb");
  }

  @Test
  void shouldReadARecordValueAsTheInstancesDo() {
    assertThat(LimitsTopic.readValue("250")).contains(new Limit(250, 250));
    assertThat(LimitsTopic.readValue(" 2.5/10 ")).contains(new Limit(2.5, 10));
    assertThat(LimitsTopic.readValue("None")).isEqualTo(Optional.empty());
  }
}
