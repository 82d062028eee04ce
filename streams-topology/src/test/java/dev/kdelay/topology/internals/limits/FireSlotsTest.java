package dev.kdelay.topology.internals.limits;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.FireRateLimits;
import dev.kdelay.topology.FireRateLimitsInEffect;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FireSlotsTest {

  private static final long NOW = 1_800_000_000_000L;

  private KeyValueStore<String, Long> store;

  @BeforeEach
  void openStore() {
    store =
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(FireSlots.STORE), Serdes.String(), Serdes.Long())
            .withLoggingDisabled()
            .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  @Test
  void shouldHoldATenantsFiresToAllItsTopicsWithinItsLimitAndNoOtherTenants() {
    FireSlots slots = new FireSlots(limits("tenant:teama=10/1"), 1, store);

    // teama's fires to two topics share its 10 a second, one every 100 ms
    List<OptionalLong> teama =
        List.of(
            slots.take("teama.x", "teama", NOW),
            slots.take("teama.y", "teama", NOW),
            slots.take("teama.x", "teama", NOW));
    // teamb's, and the shared namespace's, go at once
    List<OptionalLong> others =
        List.of(
            slots.take("teama.x", "teamb", NOW),
            slots.take("teama.x", "", NOW),
            slots.take("teamb.x", "teamb", NOW));

    assertThat(teama)
        .containsExactly(
            OptionalLong.empty(), OptionalLong.of(NOW + 100), OptionalLong.of(NOW + 200));
    assertThat(others).containsOnly(OptionalLong.empty());
  }

  @Test
  void shouldGiveATenantsFireTheFirstSlotWithinBothItsTopicsAndItsTenantsLimit() {
    FireSlots slots = new FireSlots(limits("shared=2/1,tenant:teama=10/1"), 1, store);

    // the topic allows one every 500 ms, the tenant one every 100 ms: the topic decides
    List<OptionalLong> toShared =
        List.of(slots.take("shared", "teama", NOW), slots.take("shared", "teama", NOW));
    // and the tenant's clock moved on from the slot the topic gave: its next fire elsewhere waits
    // 100 ms after that slot, not after now
    OptionalLong elsewhere = slots.take("teama.x", "teama", NOW);
    // another tenant's fire to the topic waits behind teama's, for the topic's limit only
    OptionalLong teamb = slots.take("shared", "teamb", NOW);

    assertThat(toShared).containsExactly(OptionalLong.empty(), OptionalLong.of(NOW + 500));
    assertThat(elsewhere).isEqualTo(OptionalLong.of(NOW + 600));
    assertThat(teamb).isEqualTo(OptionalLong.of(NOW + 1_000));
  }

  @Test
  void shouldKeepATenantsClockAcrossAReopen() {
    FireSlots first = new FireSlots(limits("tenant:teama=1/1"), 1, store);
    assertThat(first.take("teama.x", "teama", NOW)).isEmpty();
    assertThat(first.take("teama.y", "teama", NOW)).isEqualTo(OptionalLong.of(NOW + 1_000));
    first.save();

    FireSlots reopened = new FireSlots(limits("tenant:teama=1/1"), 1, store);

    assertThat(reopened.take("teama.z", "teama", NOW + 10)).isEqualTo(OptionalLong.of(NOW + 2_000));
    assertThat(store.get(FireRateLimits.tenant("teama"))).isNotNull();
  }

  @Test
  void shouldLetADeferredFireGoAtItsSlotAndSettleLateOnesAgainAnIntervalApart() {
    FireSlots slots = new FireSlots(limits("t=1/1"), 1, store);
    assertThat(slots.take("t", NOW)).isEmpty();
    assertThat(slots.take("t", NOW)).hasValue(NOW + 1_000); // a
    assertThat(slots.take("t", NOW)).hasValue(NOW + 2_000); // b
    assertThat(slots.take("t", NOW)).hasValue(NOW + 3_000); // c
    assertThat(slots.take("t", NOW)).hasValue(NOW + 4_000); // d

    // on time at its slot (within a punctuation or so): it goes
    assertThat(slots.atSlot("t", "", "a", NOW + 1_005, NOW + 1_000)).isEmpty();

    // when: the thread comes back 1.5 s after b's slot, past c's too
    long back = NOW + 3_500;

    // then: b goes now, c an interval later; d, due at its slot then, waits behind c
    assertThat(slots.atSlot("t", "", "b", back, NOW + 2_000)).isEmpty();
    assertThat(slots.atSlot("t", "", "c", back, NOW + 3_000)).hasValue(back + 1_000);
    assertThat(slots.atSlot("t", "", "d", NOW + 4_000, NOW + 4_000)).hasValue(back + 2_000);
    // and a settled one goes at the slot it was settled at
    assertThat(slots.atSlot("t", "", "c", back + 1_000, back + 1_000)).isEmpty();
    // a fire that comes due now takes a slot after every one settled again
    assertThat(slots.take("t", back + 1_000)).hasValue(back + 3_000);
  }

  @Test
  void shouldFireATopicWithoutALimitAtOnce() {
    FireSlots slots = new FireSlots(limits("limited=1"), 1, store);

    for (int i = 0; i < 1_000; i++) {
      assertThat(slots.take("free", NOW)).isEmpty();
    }
  }

  @Test
  void shouldLetTheBurstGoAtOnceAndSpaceTheRestOneIntervalApart() {
    FireSlots slots = new FireSlots(limits("t=10/3"), 1, store);

    List<OptionalLong> taken = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      taken.add(slots.take("t", NOW));
    }

    // 10 a second is one every 100 ms; a burst of 3 lets the clock run 200 ms ahead of now
    assertThat(taken)
        .containsExactly(
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.of(NOW + 100),
            OptionalLong.of(NOW + 200),
            OptionalLong.of(NOW + 300));
  }

  @Test
  void shouldFireAtOnceAgainAfterAQuietSpell() {
    FireSlots slots = new FireSlots(limits("t=2/1"), 1, store);

    assertThat(slots.take("t", NOW)).isEmpty();
    assertThat(slots.take("t", NOW)).hasValue(NOW + 500);
    // the slot at NOW + 500 was handed out: a fire due at NOW + 700 waits for the next one
    assertThat(slots.take("t", NOW + 700)).hasValue(NOW + 1_000);
    assertThat(slots.take("t", NOW + 5_000)).isEmpty();
  }

  @Test
  void shouldGiveEachPartitionItsShareOfTheLimit() {
    // 12 a second over 4 partitions: 3 a second each, a burst of 8 / 4 = 2 each
    FireSlots slots = new FireSlots(limits("t=12/8"), 4, store);

    assertThat(slots.take("t", NOW)).isEmpty();
    assertThat(slots.take("t", NOW)).isEmpty();
    assertThat(slots.take("t", NOW)).hasValue(NOW + 334);
    assertThat(slots.take("t", NOW)).hasValue(NOW + 667);
  }

  @Test
  void shouldContinueFromTheSavedClockWhenOpenedAgain() {
    FireSlots before = new FireSlots(limits("t=1/1"), 1, store);
    assertThat(before.take("t", NOW)).isEmpty();
    assertThat(before.take("t", NOW)).hasValue(NOW + 1_000);
    assertThat(before.take("t", NOW)).hasValue(NOW + 2_000);
    assertThat(store.get("t")).as("nothing saved before save()").isNull();
    before.save();

    // a restart, or the partition's move to another instance, with its store restored
    FireSlots after = new FireSlots(limits("t=1/1"), 1, store);

    assertThat(after.take("t", NOW + 10)).hasValue(NOW + 3_000);
  }

  @Test
  void shouldSpaceFiresThatComeDueAfterAChangeAtTheNewRate() {
    FireRateLimitsInEffect limits = new FireRateLimitsInEffect(FireRateLimits.parse("t=1/1"));
    FireSlots slots = new FireSlots(limits, 1, store);
    assertThat(slots.take("t", NOW)).isEmpty();
    assertThat(slots.take("t", NOW)).hasValue(NOW + 1_000);

    // when: the limit is raised to 10 a second while one fire waits for its slot
    limits.set(FireRateLimits.parse("t=10/1"));

    // then: the next fire comes one new interval after the last slot handed out
    assertThat(slots.take("t", NOW)).hasValue(NOW + 2_000);
    assertThat(slots.take("t", NOW)).hasValue(NOW + 2_100);
  }

  @Test
  void shouldQueueBehindWhatALiftedLimitDeferredThenFireAtOnceAndForgetTheClock() {
    FireRateLimitsInEffect limits = new FireRateLimitsInEffect(FireRateLimits.parse("t=1/1"));
    FireSlots slots = new FireSlots(limits, 1, store);
    assertThat(slots.take("t", NOW)).isEmpty();
    assertThat(slots.take("t", NOW)).hasValue(NOW + 1_000);
    slots.save();
    assertThat(store.get("t")).isNotNull();

    // when: the limit is lifted while a fire waits for its slot
    limits.set(FireRateLimits.NONE);

    // then: fires that come due meanwhile go behind it, a millisecond apart
    assertThat(slots.take("t", NOW + 10)).hasValue(NOW + 2_000);
    assertThat(slots.take("t", NOW + 10)).hasValue(NOW + 2_001);
    // and once its clock has passed, fires go out at once and the clock is forgotten
    assertThat(slots.take("t", NOW + 2_002)).isEmpty();
    slots.save();
    assertThat(store.get("t")).isNull();
    assertThat(slots.take("t", NOW + 2_002)).isEmpty();
  }

  @Test
  void shouldNeitherOverflowNorWrapAtTheEdgesOfTheLimits() {
    // the lowest rate with the largest burst: a tolerance longer than time
    FireSlots widest = new FireSlots(limits("t=0.000001/2147483647"), 1, store);
    for (int i = 0; i < 1_000; i++) {
      assertThat(widest.take("t", NOW)).isEmpty();
    }
    // the lowest rate, one at a time: each slot about 11.6 days after the one before, never wrapped
    FireSlots slowest = new FireSlots(limits("u=0.000001/1"), 1, store);
    long previous = NOW;
    assertThat(slowest.take("u", NOW)).isEmpty();
    for (int i = 0; i < 100; i++) {
      long slot = slowest.take("u", NOW).orElseThrow();
      assertThat(slot).isGreaterThan(previous);
      previous = slot;
    }
    // the highest rate and burst, over 12 partitions: an interval of a microsecond, never zero
    FireSlots fastest = new FireSlots(limits("v=1000000000/1000000000"), 12, store);
    for (int i = 0; i < 10_000; i++) {
      assertThat(fastest.take("v", NOW)).isEmpty();
    }
    // and one at a time: the next fire a microsecond later, in the next millisecond's slot
    FireSlots single = new FireSlots(limits("w=1000000000/1"), 12, store);
    assertThat(single.take("w", NOW)).isEmpty();
    assertThat(single.take("w", NOW)).hasValue(NOW + 1);
  }

  @Test
  void shouldFireEverythingAtOnceWithoutLimitsOrStore() {
    FireSlots slots = FireSlots.none();

    assertThat(slots.take("t", NOW)).isEmpty();
    slots.save();
  }

  private static FireRateLimitsInEffect limits(String setting) {
    return new FireRateLimitsInEffect(FireRateLimits.parse(setting));
  }
}
