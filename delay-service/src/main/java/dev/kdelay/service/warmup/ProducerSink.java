package dev.kdelay.service.warmup;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResultCollection;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResultCollection;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Utils;

/**
 * A stand-in broker on the loopback interface that accepts what a transactional Kafka producer
 * sends and keeps none of it: so that the warm-up ({@link FirePathWarmup}) runs the producer's own
 * code (record batches, the accumulator, the sender, transactions) without writing to the cluster.
 *
 * <p>Why: Kafka Streams' test driver, which the warm-up runs the topology under, stands a mock in
 * for the producer, so none of the Kafka producer's code was compiled before the instance's first
 * fires. An instance's first burst then ran the producer interpreted, or compiled without profiles,
 * while the JIT compilers took the CPU the stream thread needed to compile it.
 *
 * <p>It answers the requests a transactional producer makes, and only those: API versions, metadata
 * (every topic asked for exists, with {@link #PARTITIONS} partitions led by this broker),
 * coordinator lookup, producer id, partitions added to a transaction, produce (each partition
 * counts its offsets; the records are dropped) and the transaction's end. Any other request closes
 * the connection. It advertises no features, so the producer uses the first version of the
 * transaction protocol.
 *
 * <p>Plaintext, without authentication, on an ephemeral loopback port, for the seconds of a
 * warm-up: a local process that finds it can only have its records dropped.
 */
final class ProducerSink implements AutoCloseable {

  /** The partitions every topic has here. */
  static final int PARTITIONS = 6;

  /** The largest request read; a larger one closes its connection. */
  private static final int MAX_REQUEST_BYTES = 64 * 1024 * 1024;

  private static final int NODE_ID = 0;

  private static final Set<ApiKeys> ANSWERED =
      Set.of(
          ApiKeys.API_VERSIONS,
          ApiKeys.METADATA,
          ApiKeys.FIND_COORDINATOR,
          ApiKeys.INIT_PRODUCER_ID,
          ApiKeys.ADD_PARTITIONS_TO_TXN,
          ApiKeys.PRODUCE,
          ApiKeys.END_TXN);

  private final ServerSocket server;
  private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
  private final Map<String, Uuid> topicIds = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> offsets = new ConcurrentHashMap<>();
  private final AtomicLong producerIds = new AtomicLong(1_000);
  private final AtomicLong records = new AtomicLong();

  private ProducerSink(ServerSocket server) {
    this.server = server;
  }

  /** Opens the sink on an ephemeral loopback port and starts accepting connections. */
  static ProducerSink open() throws IOException {
    ServerSocket server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    ProducerSink sink = new ProducerSink(server);
    daemon("kdelay-warmup-sink", sink::accept).start();
    return sink;
  }

  /** The address to give a producer as {@code bootstrap.servers}. */
  String bootstrapServers() {
    return host() + ":" + server.getLocalPort();
  }

  /** Produce batches' records accepted so far (counted from the batches' headers). */
  long records() {
    return records.get();
  }

  @Override
  public void close() {
    Utils.closeQuietly(server, "warm-up sink");
    for (Socket connection : connections) {
      Utils.closeQuietly(connection, "warm-up sink connection");
    }
  }

  private String host() {
    return server.getInetAddress().getHostAddress();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket connection = server.accept();
        connections.add(connection);
        daemon("kdelay-warmup-sink-connection", () -> serve(connection)).start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket connection) {
    try (connection;
        DataInputStream in = new DataInputStream(connection.getInputStream());
        DataOutputStream out = new DataOutputStream(connection.getOutputStream())) {
      connection.setTcpNoDelay(true);
      while (true) {
        int size = in.readInt();
        if (size < 0 || size > MAX_REQUEST_BYTES) {
          return;
        }
        byte[] request = new byte[size];
        in.readFully(request);
        ByteBuffer response = answer(ByteBuffer.wrap(request));
        if (response == null) {
          return;
        }
        out.writeInt(response.remaining());
        out.write(
            response.array(), response.arrayOffset() + response.position(), response.remaining());
        out.flush();
      }
    } catch (IOException | RuntimeException e) {
      // The producer closed the connection, or sent what this sink does not answer.
    } finally {
      connections.remove(connection);
    }
  }

  /** The response to one request, with its header; null for a request this sink does not answer. */
  private ByteBuffer answer(ByteBuffer buffer) {
    RequestHeader header = RequestHeader.parse(buffer);
    ApiKeys api = header.apiKey();
    if (!ANSWERED.contains(api)) {
      return null;
    }
    short version = header.apiVersion();
    ApiMessage request =
        AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(buffer)).request.data();
    ApiMessage response =
        switch (api) {
          case API_VERSIONS -> apiVersions();
          case METADATA -> metadata((MetadataRequestData) request);
          case FIND_COORDINATOR -> coordinator((FindCoordinatorRequestData) request, version);
          case INIT_PRODUCER_ID ->
              new InitProducerIdResponseData()
                  .setProducerId(producerIds.getAndIncrement())
                  .setProducerEpoch((short) 0);
          case ADD_PARTITIONS_TO_TXN -> partitionsAdded((AddPartitionsToTxnRequestData) request);
          case PRODUCE -> produced((ProduceRequestData) request);
          case END_TXN -> new EndTxnResponseData();
          default -> throw new IllegalStateException("not answered: " + api);
        };
    ResponseHeader responseHeader =
        new ResponseHeader(header.correlationId(), api.responseHeaderVersion(version));
    return RequestUtils.serialize(
        responseHeader.data(), responseHeader.headerVersion(), response, version);
  }

  private static ApiVersionsResponseData apiVersions() {
    ApiVersionsResponseData.ApiVersionCollection apis =
        new ApiVersionsResponseData.ApiVersionCollection();
    for (ApiKeys api : ANSWERED) {
      apis.add(ApiVersionsResponse.toApiVersion(api));
    }
    return new ApiVersionsResponseData()
        .setApiKeys(apis)
        .setFinalizedFeaturesEpoch(ApiVersionsResponse.UNKNOWN_FINALIZED_FEATURES_EPOCH);
  }

  private MetadataResponseData metadata(MetadataRequestData request) {
    MetadataResponseData.MetadataResponseBrokerCollection brokers =
        new MetadataResponseData.MetadataResponseBrokerCollection();
    brokers.add(
        new MetadataResponseData.MetadataResponseBroker()
            .setNodeId(NODE_ID)
            .setHost(host())
            .setPort(server.getLocalPort()));
    MetadataResponseData.MetadataResponseTopicCollection topics =
        new MetadataResponseData.MetadataResponseTopicCollection();
    if (request.topics() != null) {
      for (MetadataRequestData.MetadataRequestTopic asked : request.topics()) {
        MetadataResponseData.MetadataResponseTopic topic =
            new MetadataResponseData.MetadataResponseTopic()
                .setName(asked.name())
                .setTopicId(topicIds.computeIfAbsent(asked.name(), name -> Uuid.randomUuid()));
        for (int partition = 0; partition < PARTITIONS; partition++) {
          topic
              .partitions()
              .add(
                  new MetadataResponseData.MetadataResponsePartition()
                      .setPartitionIndex(partition)
                      .setLeaderId(NODE_ID)
                      .setLeaderEpoch(0)
                      .setReplicaNodes(List.of(NODE_ID))
                      .setIsrNodes(List.of(NODE_ID)));
        }
        topics.add(topic);
      }
    }
    return new MetadataResponseData()
        .setBrokers(brokers)
        .setClusterId("kdelay-warmup")
        .setControllerId(NODE_ID)
        .setTopics(topics);
  }

  private FindCoordinatorResponseData coordinator(
      FindCoordinatorRequestData request, short version) {
    FindCoordinatorResponseData response = new FindCoordinatorResponseData();
    if (version < 4) {
      return response.setNodeId(NODE_ID).setHost(host()).setPort(server.getLocalPort());
    }
    for (String key : request.coordinatorKeys()) {
      response
          .coordinators()
          .add(
              new FindCoordinatorResponseData.Coordinator()
                  .setKey(key)
                  .setNodeId(NODE_ID)
                  .setHost(host())
                  .setPort(server.getLocalPort()));
    }
    return response;
  }

  private static AddPartitionsToTxnResponseData partitionsAdded(
      AddPartitionsToTxnRequestData request) {
    AddPartitionsToTxnTopicResultCollection results = new AddPartitionsToTxnTopicResultCollection();
    for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic topic : request.v3AndBelowTopics()) {
      AddPartitionsToTxnPartitionResultCollection partitions =
          new AddPartitionsToTxnPartitionResultCollection();
      for (int partition : topic.partitions()) {
        partitions.add(new AddPartitionsToTxnPartitionResult().setPartitionIndex(partition));
      }
      results.add(
          new AddPartitionsToTxnTopicResult()
              .setName(topic.name())
              .setResultsByPartition(partitions));
    }
    return new AddPartitionsToTxnResponseData().setResultsByTopicV3AndBelow(results);
  }

  private ProduceResponseData produced(ProduceRequestData request) {
    ProduceResponseData.TopicProduceResponseCollection topics =
        new ProduceResponseData.TopicProduceResponseCollection();
    for (ProduceRequestData.TopicProduceData topic : request.topicData()) {
      ProduceResponseData.TopicProduceResponse answered =
          new ProduceResponseData.TopicProduceResponse()
              .setName(topic.name())
              .setTopicId(topic.topicId());
      for (ProduceRequestData.PartitionProduceData partition : topic.partitionData()) {
        int count = recordCount(partition);
        records.addAndGet(count);
        String key = topic.name() + "/" + topic.topicId() + "/" + partition.index();
        long base = offsets.computeIfAbsent(key, k -> new AtomicLong()).getAndAdd(count);
        answered
            .partitionResponses()
            .add(
                new ProduceResponseData.PartitionProduceResponse()
                    .setIndex(partition.index())
                    .setBaseOffset(base));
      }
      topics.add(answered);
    }
    return new ProduceResponseData().setResponses(topics);
  }

  private static int recordCount(ProduceRequestData.PartitionProduceData partition) {
    int count = 0;
    if (partition.records() instanceof MemoryRecords batches) {
      for (var batch : batches.batches()) {
        Integer inBatch = batch.countOrNull();
        count += inBatch == null ? 0 : inBatch;
      }
    }
    return count;
  }

  private static Thread daemon(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    return thread;
  }
}
