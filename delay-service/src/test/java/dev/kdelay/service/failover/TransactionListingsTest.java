package dev.kdelay.service.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

/**
 * How a check of orphaned transactions reads the brokers' answers: what came is kept, and a broker
 * that failed or did not answer in time is named, not a reason to drop the others' listings.
 */
class TransactionListingsTest {

  private final TransactionListing listing =
      new TransactionListing("app-1", 7L, TransactionState.ONGOING);

  @Test
  void shouldKeepTheAnswersOfTheBrokersThatAnsweredAndNameTheOthers() {
    // given: broker 1 answered, broker 2 failed as Kafka's admin client fails for a broker that
    // went away mid-call, brokers 3, 4 and 5 never answer
    KafkaFutureImpl<Collection<TransactionListing>> failed = new KafkaFutureImpl<>();
    failed.completeExceptionally(
        new IllegalArgumentException("Unexpected key set: [BrokerKey(brokerId=2)]"));
    Map<Integer, KafkaFuture<Collection<TransactionListing>>> byBroker =
        Map.of(
            1, KafkaFuture.completedFuture(List.of(listing)),
            2, failed,
            3, new KafkaFutureImpl<>(),
            4, new KafkaFutureImpl<>(),
            5, new KafkaFutureImpl<>());

    // when
    long start = System.nanoTime();
    OrphanedTransactions.Listings listings =
        OrphanedTransactions.Listings.of(byBroker, Duration.ofSeconds(1));
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    // then: one timeout for all the brokers (three in a row would take 3 s)
    assertThat(listings.answered()).containsExactly(listing);
    assertThat(listings.unanswered()).containsOnlyKeys(2, 3, 4, 5);
    assertThat(listings.unanswered().get(2)).contains("Unexpected key set");
    assertThat(listings.complete()).isFalse();
    assertThat(took).isLessThan(Duration.ofSeconds(3));
  }

  @Test
  void shouldBeCompleteWhenEveryBrokerAnswered() {
    // when
    OrphanedTransactions.Listings listings =
        OrphanedTransactions.Listings.of(
            Map.of(
                1, KafkaFuture.completedFuture(List.of(listing)),
                2, KafkaFuture.completedFuture(List.of())),
            Duration.ofSeconds(1));

    // then
    assertThat(listings.complete()).isTrue();
    assertThat(listings.answered()).containsExactly(listing);
  }
}
