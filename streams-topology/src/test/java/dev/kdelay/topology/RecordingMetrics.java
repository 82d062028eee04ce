package dev.kdelay.topology;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.RejectionReason;
import java.util.ArrayList;
import java.util.List;

/** A {@link DelayMetrics} that remembers every call, for assertions. */
final class RecordingMetrics implements DelayMetrics {

  /** A request's outcome: its action (null if unknown) and, for a rejection, the reason. */
  record Outcome(Action action, RejectionReason rejection) {}

  final List<Outcome> requests = new ArrayList<>();
  final List<Long> latenesses = new ArrayList<>();
  final List<RejectionReason> undeliverable = new ArrayList<>();
  final List<Integer> punctuations = new ArrayList<>();
  final List<PartitionGauges> opened = new ArrayList<>();
  final List<PartitionGauges> closed = new ArrayList<>();
  int rerouted;
  int waited;
  int cancelled;
  int skipped;

  @Override
  public void requestApplied(Action action) {
    requests.add(new Outcome(action, null));
  }

  @Override
  public void requestRejected(Action action, RejectionReason reason) {
    requests.add(new Outcome(action, reason));
  }

  @Override
  public void requestRerouted() {
    rerouted++;
  }

  @Override
  public void requestWaited() {
    waited++;
  }

  @Override
  public void taskFired(long latenessMs) {
    latenesses.add(latenessMs);
  }

  @Override
  public void taskUndeliverable(RejectionReason reason) {
    undeliverable.add(reason);
  }

  @Override
  public void occurrenceSkipped() {
    skipped++;
  }

  @Override
  public void taskCancelled() {
    cancelled++;
  }

  @Override
  public void punctuated(long durationNanos, int fired) {
    punctuations.add(fired);
  }

  @Override
  public void partitionOpened(PartitionGauges gauges) {
    opened.add(gauges);
  }

  @Override
  public void partitionClosed(PartitionGauges gauges) {
    closed.add(gauges);
  }

  /** The gauges of the one partition a test driver runs. */
  PartitionGauges gauges() {
    return opened.get(opened.size() - 1);
  }
}
