package dev.kdelay.benchmarks;

import dev.kdelay.service.broker.BrokerProfile;
import dev.kdelay.service.broker.EmbeddedKafka;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The benchmark's broker: kdelay's own {@link EmbeddedKafka}, the single-node KRaft broker that
 * {@code bin/kdelay} starts, run in a JVM of its own on the ports the benchmark chooses, with the
 * settings of the profile it is given: Apache Kafka's defaults ({@code stock}, what managed Kafka
 * users have) or kdelay's recommended ones ({@code tuned}, what {@code bin/kdelay} runs).
 *
 * <p>The benchmark uses {@code EmbeddedKafka} as is rather than a copy, so it measures the broker
 * users get.
 *
 * <p>Protocol: prints {@code READY <bootstrap servers>} once the broker runs; stops on {@code STOP}
 * or when standard input closes (the benchmark is gone).
 *
 * <pre>{@code
 * java -cp ... dev.kdelay.benchmarks.BenchmarkBroker DATA_DIR BROKER_PORT CONTROLLER_PORT stock|tuned
 * }</pre>
 */
public final class BenchmarkBroker {

  private BenchmarkBroker() {}

  /**
   * Runs the broker until told to stop.
   *
   * @param args the data directory, the broker port, the controller port and the {@link
   *     BrokerProfile}
   * @throws IOException if standard input fails
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 4) {
      System.err.println("usage: BenchmarkBroker DATA_DIR BROKER_PORT CONTROLLER_PORT stock|tuned");
      System.exit(2);
    }
    EmbeddedKafka.Listeners listeners =
        new EmbeddedKafka.Listeners(
            "127.0.0.1", Integer.parseInt(args[1]), Integer.parseInt(args[2]));
    try (EmbeddedKafka broker =
        EmbeddedKafka.start(Path.of(args[0]), listeners, BrokerProfile.parse(args[3]))) {
      System.out.println("READY " + broker.bootstrapServers());
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.trim().equals("STOP")) {
          break;
        }
      }
    }
    System.exit(0);
  }
}
