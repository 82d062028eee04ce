package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ProfileSummaryTest {

  @Test
  void shouldReadAsyncProfilerCollapsedStacksOfTheChosenThreadsInnermostFirst() {
    // given: three stacks of the stream thread, one of another thread, 2 ms per sample
    List<String> collapsed =
        List.of(
            "[app-StreamThread-1 tid=42];java/lang/Thread.run;org/rocksdb/RocksDB.write;"
                + "org/rocksdb/RocksDB.write0;rocksdb::MemTable::Add 3",
            "[app-StreamThread-1 tid=42];java/lang/Thread.run;"
                + "org/apache/kafka/clients/producer/KafkaProducer.send 1",
            "[app-StreamThread-1 tid=42];java/lang/Thread.run;org/rocksdb/RocksDB.get 2",
            "[kafka-producer-network-thread tid=43];java/lang/Thread.run;epoll_wait 50",
            "");

    // when
    ProfileSummary.Summary summary =
        ProfileSummary.summarize(
            ProfileSummary.fromCollapsed(collapsed, 2), Pattern.compile(".*StreamThread-[0-9]+"));

    // then: only the stream thread, weighted by the interval, native frames in their place
    assertThat(summary.total()).isEqualTo(12);
    assertThat(summary.categories())
        .containsEntry("RocksDB put/delete/write", 6L)
        .containsEntry("RocksDB get", 4L)
        .containsEntry("producer send", 2L);
    assertThat(summary.self()).containsEntry("rocksdb::MemTable::Add", 6L);
    assertThat(summary.inclusive()).containsEntry("java.lang.Thread.run", 12L);
  }
}
