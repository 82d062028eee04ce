package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.apache.kafka.common.acl.AclOperation;
import org.junit.jupiter.api.Test;

class TopicLimitsReaderTest {

  @Test
  void shouldCountATopicWritableWhenTheClusterDoesNotSayWhatIsAllowed() {
    assertThat(TopicLimitsReader.writable(null)).isTrue();
  }

  @Test
  void shouldCountATopicWritableWhenWriteOrAllIsAllowed() {
    assertThat(TopicLimitsReader.writable(Set.of(AclOperation.READ, AclOperation.WRITE))).isTrue();
    assertThat(TopicLimitsReader.writable(Set.of(AclOperation.ALL))).isTrue();
  }

  @Test
  void shouldCountATopicNotWritableWhenTheAllowedOperationsLackWrite() {
    assertThat(TopicLimitsReader.writable(Set.of(AclOperation.READ, AclOperation.DESCRIBE)))
        .isFalse();
    assertThat(TopicLimitsReader.writable(Set.of())).isFalse();
  }
}
