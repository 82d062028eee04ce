package dev.kdelay.service.failover;

import dev.kdelay.schemas.LogValues;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.utils.ThreadUtils;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes from the group, within a second, an instance whose process is gone, instead of waiting
 * out its session timeout.
 *
 * <p>A {@code kill -9}ed instance sends no leave: the group coordinator notices it only when its
 * session times out, and a broker with Apache Kafka's defaults accepts no session shorter than 6 s
 * ({@code group.min.session.timeout.ms}), so its tasks stood still for 6 to 7.5 s. The other
 * instances can tell sooner: each instance advertises its HTTP endpoint ({@code
 * application.server}), and a port that refuses connections on a host that answers means no process
 * listens there any more. Every {@code interval} each instance connects to the others' endpoints (a
 * TCP connect, nothing sent); a peer found gone twice in a row is removed from the group by its
 * {@code group.instance.id} ({@link Admin#removeMembersFromConsumerGroup}), which starts the
 * rebalance at once. That needs static membership: kdelay gives each instance the id {@link
 * #groupInstanceId}, which names the endpoint it advertises, so that a peer can tell which members
 * are the silent instance's.
 *
 * <p>Only a refused connection, a host with no route to it, or a name that no longer resolves count
 * (see {@link #tcp}). A connection that times out (a lost machine, a network partition between
 * instances that both still reach Kafka) is left to the session timeout: evicting a live instance
 * would only make it rejoin, and a probe that cannot tell would do it again and again. For the same
 * reason, when members evicted once come back while their endpoint still looks gone (they were
 * alive, the address is not theirs from here: two hosts advertising a loopback address), that
 * endpoint is never evicted again. A stopped process (SIGSTOP) still accepts connections, so it too
 * waits out the session timeout.
 */
public final class PeerEviction implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PeerEviction.class);

  /** How many probes in a row must find a peer gone before it is evicted. */
  static final int REFUSALS = 2;

  private static final Pattern ILLEGAL = Pattern.compile("[^a-zA-Z0-9._-]");

  /** Connects to a peer's endpoint. */
  public interface Probe {
    /**
     * @return true if the peer is gone: nothing listens on its port, or its address or name no
     *     longer exists
     */
    boolean refused(HostInfo peer);
  }

  private final Admin admin;
  private final String applicationId;
  private final HostInfo self;
  private final Supplier<Collection<HostInfo>> peers;
  private final Probe probe;
  private final Duration timeout;
  private final ScheduledExecutorService executor;

  // Touched by the checking thread only.
  private final Map<HostInfo, Integer> refusals = new HashMap<>();
  private final Set<String> evicted = new HashSet<>();
  private final Set<HostInfo> gaveUp = new HashSet<>();

  /**
   * @param admin removes members; not closed here
   * @param applicationId the group
   * @param self the endpoint this instance advertises, never probed
   * @param peers the endpoints the instances of the application advertise, this one's included
   * @param probe tells a gone peer
   * @param timeout how long each call to Kafka may take
   */
  public PeerEviction(
      Admin admin,
      String applicationId,
      HostInfo self,
      Supplier<Collection<HostInfo>> peers,
      Probe probe,
      Duration timeout) {
    this.admin = admin;
    this.applicationId = applicationId;
    this.self = self;
    this.peers = peers;
    this.probe = probe;
    this.timeout = timeout;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            ThreadUtils.createThreadFactory("kdelay-peer-eviction", true));
  }

  /**
   * The {@code group.instance.id} of an instance that advertises this endpoint: the endpoint, and a
   * part drawn at each start so that two processes are never one member. Kafka Streams appends the
   * thread's index.
   *
   * @return empty if the endpoint's name is too long for a member id
   */
  public static Optional<String> groupInstanceId(HostInfo endpoint, String nonce) {
    String id = prefix(endpoint) + nonce;
    return id.length() <= 200 ? Optional.of(id) : Optional.empty();
  }

  /** What every member id of the instance that advertises this endpoint begins with. */
  static String prefix(HostInfo endpoint) {
    return "kdelay."
        + ILLEGAL.matcher(endpoint.host()).replaceAll("_")
        + "_"
        + endpoint.port()
        + ".";
  }

  /**
   * A probe that connects over TCP, waiting at most {@code timeout}. Gone: the connection is
   * refused (nothing listens on the port), there is no route to the host, or its name no longer
   * resolves (a container or pod that is gone takes its address and its name with it). A connect
   * that times out cannot tell.
   */
  public static Probe tcp(Duration timeout) {
    return peer -> {
      try (Socket socket = new Socket()) {
        socket.connect(
            new InetSocketAddress(peer.host(), peer.port()), Math.toIntExact(timeout.toMillis()));
        return false;
      } catch (NoRouteToHostException | UnknownHostException e) {
        return true;
      } catch (ConnectException e) {
        // Refused, or this machine has no network to reach it by ("Network is unreachable"),
        // which says nothing of the peer. The text is the operating system's.
        return String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT).contains("refused");
      } catch (IOException | RuntimeException e) {
        return false; // timed out, or another failure: cannot tell
      }
    };
  }

  /** Probes every {@code interval} from now on. */
  public void start(Duration interval) {
    executor.scheduleWithFixedDelay(
        this::checkOnce, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** One round: probes every peer and evicts those found gone {@link #REFUSALS} times in a row. */
  void checkOnce() {
    Set<HostInfo> current;
    try {
      current = new HashSet<>(peers.get());
    } catch (RuntimeException e) {
      return; // Kafka Streams not running or rebalancing: no metadata to go by
    }
    current.remove(self);
    current.removeIf(peer -> peer.port() < 0); // an instance that advertises no endpoint
    refusals.keySet().retainAll(current);
    for (HostInfo peer : current) {
      if (!probe.refused(peer)) {
        refusals.remove(peer);
        continue;
      }
      if (refusals.merge(peer, 1, Integer::sum) == REFUSALS && !gaveUp.contains(peer)) {
        try {
          evict(peer);
        } catch (RuntimeException e) {
          if (Thread.currentThread().isInterrupted()) {
            return; // closed meanwhile
          }
          log.warn(
              "event=peer-eviction-failed peer={}:{} error={}",
              peer.host(),
              peer.port(),
              LogValues.quote(e));
          refusals.remove(peer); // try again from the start
        }
      }
    }
  }

  private void evict(HostInfo peer) {
    String prefix = prefix(peer);
    ConsumerGroupDescription group;
    try {
      group = await(admin.describeConsumerGroups(List.of(applicationId)).all()).get(applicationId);
    } catch (GroupIdNotFoundException e) {
      return; // no members at all
    }
    Set<String> members =
        group.members().stream()
            .map(MemberDescription::groupInstanceId)
            .flatMap(Optional::stream)
            .filter(id -> id.startsWith(prefix))
            .collect(Collectors.toSet());
    if (members.isEmpty()) {
      return; // already out of the group
    }
    if (members.stream().anyMatch(evicted::contains)) {
      gaveUp.add(peer);
      log.warn(
          "event=peer-eviction-stopped peer={}:{} hint=\"members evicted because their endpoint"
              + " refused connections came back while it still refuses them: the address it"
              + " advertises does not reach it from here (set delay.http.advertised.host); it is"
              + " left to the session timeout from now on\"",
          peer.host(),
          peer.port());
      return;
    }
    try {
      await(
          admin
              .removeMembersFromConsumerGroup(
                  applicationId,
                  new RemoveMembersFromConsumerGroupOptions(
                      members.stream().map(MemberToRemove::new).toList()))
              .all());
    } catch (UnknownMemberIdException e) {
      // Another instance evicted them first, or their session ran out meanwhile.
      evicted.addAll(members);
      return;
    }
    evicted.addAll(members);
    log.info(
        "event=peer-evicted peer={}:{} members={} hint=\"its endpoint refused connections {} times"
            + " in a row: the process is gone; its tasks move now rather than after the session"
            + " timeout\"",
        peer.host(),
        peer.port(),
        LogValues.quote(String.join(",", members)),
        REFUSALS);
  }

  private <T> T await(KafkaFuture<T> future) {
    return AdminCalls.await(future, timeout);
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
