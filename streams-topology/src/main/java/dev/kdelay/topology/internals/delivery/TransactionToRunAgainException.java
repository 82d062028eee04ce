package dev.kdelay.topology.internals.delivery;

import org.apache.kafka.common.errors.RetriableException;

/**
 * The answer to a record whose transaction failed through no fault of any of its records: the
 * transaction coordinator aborted it, or a broker did not answer in time (under transactions v2 the
 * producer reports that as {@code TransactionAbortableException}, which Kafka Streams would take as
 * fatal to the stream thread). Being retriable, it makes kdelay's {@link DeliveryFailureHandler}
 * answer retry: Kafka Streams aborts the transaction, revives the thread's tasks from their
 * changelogs and runs the work again, and no stream thread is replaced.
 */
public final class TransactionToRunAgainException extends RetriableException {

  private static final long serialVersionUID = 1L;

  public TransactionToRunAgainException(String message) {
    super(message);
  }
}
