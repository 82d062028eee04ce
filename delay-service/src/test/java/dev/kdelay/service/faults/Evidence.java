package dev.kdelay.service.faults;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes what a scenario sent and saw as CSV beside the instances' logs, so that a failure can be
 * diagnosed after the fact: {@code ledger.csv} (every expected and forbidden occurrence) and {@code
 * fired.csv} (every record the {@code read_committed} consumer received, in arrival order).
 */
final class Evidence {

  private Evidence() {}

  static void write(Path dir, Ledger ledger, List<Received> fired) {
    List<String> ledgerLines = new ArrayList<>();
    ledgerLines.add("kind,idempotency_key,request_partition,due_ms,sent_ms,acked_ms");
    for (Map.Entry<String, Ledger.Task> entry : ledger.expected().entrySet()) {
      Ledger.Task task = entry.getValue();
      ledgerLines.add(
          "expected,"
              + task.idempotencyKey()
              + ","
              + task.requestPartition()
              + ","
              + task.dueMs()
              + ","
              + task.sentAtMs()
              + ","
              + task.ackedAtMs());
    }
    ledger.forbidden().forEach(key -> ledgerLines.add("forbidden," + key + ",,,,"));
    ledger.uncertainKeys().forEach(key -> ledgerLines.add("uncertain," + key + ",,,,"));
    List<String> firedLines = new ArrayList<>();
    firedLines.add("idempotency_key,topic,partition,offset,timestamp,fired_at_ms,received_at_ms");
    for (Received received : fired) {
      firedLines.add(
          String.join(
              ",",
              String.valueOf(received.header(DelayHeaders.IDEMPOTENCY_KEY)),
              received.record().topic(),
              Integer.toString(received.record().partition()),
              Long.toString(received.record().offset()),
              Long.toString(received.record().timestamp()),
              String.valueOf(received.header(DelayHeaders.FIRED_AT)),
              Long.toString(received.receivedAtMs())));
    }
    try {
      Files.createDirectories(dir);
      Files.write(dir.resolve("ledger.csv"), ledgerLines);
      Files.write(dir.resolve("fired.csv"), firedLines);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
