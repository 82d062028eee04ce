package dev.kdelay.service.failover;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link PeerEviction} against a real broker: a peer whose endpoint refuses connections twice in a
 * row loses its static members at once; a peer that cannot be told gone keeps them.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class PeerEvictionIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final HostInfo SELF = new HostInfo("127.0.0.1", 8080);
  private static final HostInfo PEER = new HostInfo("10.0.0.7", 8080);

  private final String applicationId = "evict-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> clients = new ArrayList<>();
  private final List<Consumer<byte[], byte[]>> members = new ArrayList<>();
  private final AtomicBoolean refusing = new AtomicBoolean();
  private String bootstrapServers;
  private Admin admin;
  private PeerEviction eviction;

  @BeforeEach
  void connect(KafkaTestCluster kafka) throws Exception {
    bootstrapServers = kafka.bootstrapServers();
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    admin.createTopics(List.of(new NewTopic(applicationId, 2, (short) 1))).all().get();
    eviction =
        new PeerEviction(
            admin, applicationId, SELF, () -> List.of(SELF, PEER), peer -> refusing.get(), TIMEOUT);
  }

  @AfterEach
  void disconnect() throws Exception {
    eviction.close();
    for (AutoCloseable client : clients) {
      client.close();
    }
    admin.close(Duration.ofSeconds(5));
  }

  @Test
  void shouldEvictTheMembersOfAPeerRefusedTwiceInARow() throws Exception {
    // given: this instance's member and the peer's, static, as kdelay names them
    String self = PeerEviction.groupInstanceId(SELF, "aaaaaaaa").orElseThrow() + "-1";
    String peer = PeerEviction.groupInstanceId(PEER, "bbbbbbbb").orElseThrow() + "-1";
    joinGroup(self);
    joinGroup(peer);
    awaitMembers(Set.of(self, peer));

    // when: refused once
    refusing.set(true);
    eviction.checkOnce();

    // then: one refusal is not enough
    assertThat(members()).containsExactlyInAnyOrder(self, peer);

    // when: refused again
    eviction.checkOnce();

    // then: the peer is out of the group at once, long before its session timeout of 45 s
    assertThat(members()).containsExactly(self);
  }

  @Test
  void shouldNotEvictAPeerWhoseRefusalsAreNotInARow() throws Exception {
    // given
    String peer = PeerEviction.groupInstanceId(PEER, "bbbbbbbb").orElseThrow() + "-1";
    joinGroup(peer);
    awaitMembers(Set.of(peer));

    // when: refused, answered, refused
    refusing.set(true);
    eviction.checkOnce();
    refusing.set(false);
    eviction.checkOnce();
    refusing.set(true);
    eviction.checkOnce();

    // then
    assertThat(members()).containsExactly(peer);
  }

  @Test
  void shouldStopEvictingAnEndpointWhoseEvictedMembersComeBackWhileItRefuses() throws Exception {
    // given: a peer evicted because its endpoint refused, which is alive all the same (the address
    // it advertises does not reach it from here)
    String peer = PeerEviction.groupInstanceId(PEER, "bbbbbbbb").orElseThrow() + "-1";
    joinGroup(peer);
    awaitMembers(Set.of(peer));
    refusing.set(true);
    eviction.checkOnce();
    eviction.checkOnce();
    assertThat(members()).isEmpty();
    awaitMembers(Set.of(peer)); // it rejoins with the same member id

    // when: the endpoint answers once, then refuses twice in a row again
    refusing.set(false);
    eviction.checkOnce();
    refusing.set(true);
    eviction.checkOnce();
    eviction.checkOnce();

    // then: it is left to its session timeout, not evicted again and again
    assertThat(members()).containsExactly(peer);
  }

  @Test
  void shouldTellAGonePeerFromOneThatCannotBeTold() throws Exception {
    PeerEviction.Probe probe = PeerEviction.tcp(Duration.ofMillis(200));
    int closedPort;
    try (ServerSocket listening = new ServerSocket(0)) {
      assertThat(probe.refused(new HostInfo("127.0.0.1", listening.getLocalPort()))).isFalse();
      closedPort = listening.getLocalPort();
    }
    assertThat(probe.refused(new HostInfo("127.0.0.1", closedPort))).isTrue();
    // a name that no longer resolves: a container or pod that is gone
    assertThat(probe.refused(new HostInfo("no-such-host.invalid", 8080))).isTrue();
    // a port that does not refuse is not gone, even one whose accept queue is full (the connect
    // then succeeds or times out, depending on the kernel: either way it cannot tell)
    try (ServerSocket full = new ServerSocket(0, 1)) {
      List<java.net.Socket> queued = new ArrayList<>();
      try {
        for (int i = 0; i < 8; i++) {
          java.net.Socket socket = new java.net.Socket();
          queued.add(socket);
          socket.connect(full.getLocalSocketAddress(), 100);
        }
      } catch (java.net.SocketTimeoutException expected) {
        // the queue is full now
      } finally {
        assertThat(
                PeerEviction.tcp(Duration.ofMillis(100))
                    .refused(new HostInfo("127.0.0.1", full.getLocalPort())))
            .isFalse();
        for (java.net.Socket socket : queued) {
          socket.close();
        }
      }
    }
  }

  @Test
  void shouldNameTheAdvertisedEndpointInAMemberIdKafkaAccepts() throws IOException {
    assertThat(PeerEviction.groupInstanceId(new HostInfo("::1", 8443), "0123abcd"))
        .contains("kdelay.__1_8443.0123abcd");
    assertThat(PeerEviction.prefix(new HostInfo("kdelay-2.kdelay.svc", 80)))
        .isEqualTo("kdelay.kdelay-2.kdelay.svc_80.");
    assertThat(PeerEviction.groupInstanceId(new HostInfo("h".repeat(300), 80), "0123abcd"))
        .isEmpty();
  }

  /** A static member of the group; {@link #awaitMembers} polls it until it has joined. */
  private void joinGroup(String groupInstanceId) {
    Consumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG, applicationId,
                ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, groupInstanceId),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    clients.add(consumer);
    members.add(consumer);
    consumer.subscribe(List.of(applicationId));
  }

  private void awaitMembers(Set<String> expected) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (!members().equals(expected)) {
      assertThat(System.nanoTime() - deadline)
          .as("members %s joined in time", expected)
          .isNegative();
      members.forEach(consumer -> consumer.poll(Duration.ofMillis(20)));
    }
  }

  private Set<String> members() throws Exception {
    try {
      return describedMembers();
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException) {
        return Set.of(); // nobody has joined yet
      }
      throw e;
    }
  }

  private Set<String> describedMembers() throws Exception {
    return admin
        .describeConsumerGroups(List.of(applicationId))
        .all()
        .get()
        .get(applicationId)
        .members()
        .stream()
        .map(MemberDescription::groupInstanceId)
        .flatMap(java.util.Optional::stream)
        .collect(Collectors.toSet());
  }
}
