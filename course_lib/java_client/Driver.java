// The Java Kafka client (kafka-clients of the lab's Kafka release) driven over JSON lines on stdin/stdout, as Jepsen
// and Maelstrom drive clients written in other languages. Our own code: one small file, compiled
// at first use by course_lib/java_client/build.py against the cached Kafka jars.
//
// Request  (one line):  {"id": 7, "op": "producer.send", "handle": "p1", "topic": "t", ...}
// Response (one line):  {"id": 7, "ok": true, "result": ...}
//                   or  {"id": 7, "ok": false, "error": {"class": "...", "message": "...",
//                                                       "causes": [{"class": ..., "message": ...}]}}
//
// Calls on one client run in order on that client's own thread; different clients and futures
// calls run concurrently, so one blocking call (a poll, a future's get, a close with a timeout)
// does not stop the others. Client configs are passed through as given: every value is
// accepted or refused by the client's own ConfigDef. Byte strings travel as base64.
//
// stdout carries only responses: System.out is pointed at stderr, where the client's logs go.
//
// Commands ("handle" names a client made by *.create; offsets are [{topic, partition, offset,
// metadata?}], partitions [{topic, partition}], timeouts timeout_ms; Java's method names):
//   ping | exit | close {handle, timeout_ms?} | future.get {future, timeout_ms?}
//   future.outcomes {futures: [...]} -> [{state: pending|done|failed, value?, error?}]
//   producer.create {config} -> handle; producer.send {topic, partition?, timestamp?, key?, value?,
//     headers?: [[key, value]]} -> future; producer.send_many {topic, count, value_bytes, partition?}
//     (a timed loop); producer.flush | initTransactions | beginTransaction | commitTransaction |
//     abortTransaction | sendOffsetsToTransaction {offsets, consumer | group_id} | partitionsFor {topic}
//   consumer.create {config}; consumer.subscribe {topics} | assign {partitions} | unsubscribe |
//     assignment | poll {timeout_ms} | commitSync {offsets?, timeout_ms?} | commitAsync {offsets?}
//     -> future | seek {topic, partition, offset} | seekToBeginning / seekToEnd {partitions} |
//     position {topic, partition} | committed {partitions} | groupMetadata | endOffsets /
//     beginningOffsets {partitions}
//   admin.listShareGroupOffsets {groups} -> {group: {value: [{topic, partition, offsets: {startOffset,
//       leaderEpoch, lag}}]} or {error}}
//   admin.describeTransactions {ids} -> {id: {value: {state, producerEpoch, transactionTimeoutMs,
//       transactionStartTimeMs, topicPartitions}} or {error}}; admin.listTransactions {states?,
//       pattern?, timeout_ms?} -> [{transactionalId, producerId, state}] or an error
//   admin.describeShareGroups {groups} -> {group: {groupId, state, groupEpoch, members: [{memberId,
//     clientId, memberEpoch, assignment: partitions}]}}
//   admin.create {config}; admin.createTopics {topics: [{name, partitions?, replication_factor?,
//     configs?}]} | deleteTopics {topics} | describeTopics {topics} | listOffsets {partitions:
//     [{topic, partition, spec: earliest|latest|max_timestamp|<ms>}], isolation_level}
//   admin.createTopics' topics may carry assignments {partition: [broker]} (no partitions, no
//     replication_factor then); admin.createPartitions {topics: [{name, total, assignments?}],
//     validate_only?} -> {topic: {value} or {error}}
//   admin.describeLogDirs {brokers} -> {broker: {value: {dir: {error, totalBytes, usableBytes,
//     replicas: [{topic, partition, size, offsetLag, isFuture}]}}} or {error}};
//     admin.alterReplicaLogDirs {moves: [{topic, partition, broker, dir}]} -> {"topic:partition:broker": ...}
//   admin.describeMetadataQuorum -> {leaderId, leaderEpoch, highWatermark, voters, observers: [{replicaId,
//     logEndOffset}]}; admin.electLeaders {type: PREFERRED|UNCLEAN, partitions} -> [{topic, partition, error?}]
//   admin.alterPartitionReassignments {reassignments: [{topic, partition, replicas (null: cancel)}]} ->
//     {"topic:partition": ...}; admin.listPartitionReassignments {partitions} -> [{topic, partition,
//     replicas, addingReplicas, removingReplicas}]
//   admin.listConfigResources {types} -> [{type, name}]; admin.describeConfigs {resources: [{type, name}]}
//     -> {"TYPE:name": {value: {config: {value, source, readOnly, sensitive, type}}} or {error}};
//     admin.incrementalAlterConfigs {resources: [{type, name, ops: [{name, value, op}]}], validate_only?}
//   admin.alterShareGroupOffsets {group, offsets} -> {"topic:partition": ...};
//     admin.deleteShareGroupOffsets {group, topics} -> {topic: ...}
//   shareConsumer.create {config} (KafkaShareConsumer, KIP-932); shareConsumer.subscribe {topics} |
//     poll {timeout_ms} (records with deliveryCount) | acknowledge {topic, partition, offset,
//     type: ACCEPT|RELEASE|REJECT|RENEW} | commitSync {timeout_ms?} -> [{topic, partition, error?}] |
//     commitAsync | acknowledgementCommits -> [{partitions: [{topic, partition, offsets}], error?}]
//     (what Java reported to the acknowledgement commit callback since the last asking)

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.DescribeTransactionsResult;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

public final class Driver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Base64.Encoder B64 = Base64.getEncoder();
    private static final Base64.Decoder UNB64 = Base64.getDecoder();

    private final PrintStream out;
    private final Map<String, Object> clients = new ConcurrentHashMap<>();
    private final Map<String, Future<?>> futures = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final Map<String, ExecutorService> lanes = new ConcurrentHashMap<>();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "driver-request");
        t.setDaemon(true);
        return t;
    });

    private Driver(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err); // nothing but responses may reach stdout
        new Driver(out).serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
    }

    private void serve(BufferedReader in) throws Exception {
        String line;
        JsonNode exitId = null;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode req;
            try {
                req = JSON.readTree(line);
            } catch (Exception e) {
                respond(NODES.nullNode(), null, e);
                continue;
            }
            if ("exit".equals(req.path("op").asText())) {
                exitId = req.get("id");
                break;
            }
            laneOf(req).execute(() -> handle(req));
        }
        // exit, or stdin closed (the Python side went away): answer what is under way, then close
        // the clients left open, so that none of them outlives the driver
        pool.shutdown();
        lanes.values().forEach(ExecutorService::shutdown);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (ExecutorService e : lanes.values()) e.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        pool.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        for (Object c : clients.values()) {
            try { // not closed by the caller: unfinished sends fail at once, the rest get 5 s
                if (c instanceof KafkaProducer) ((KafkaProducer<?, ?>) c).close(Duration.ZERO);
                else if (c instanceof KafkaConsumer) ((KafkaConsumer<?, ?>) c).close(CloseOptions.timeout(Duration.ofSeconds(5)));
                else ((Admin) c).close(Duration.ofSeconds(5));
            } catch (Exception ignored) {
                // the process ends anyway
            }
        }
        if (exitId != null) respond(exitId, NODES.nullNode(), null);
        out.flush();
        System.exit(0);
    }

    /** Calls on one client run one at a time, in the order they came (a KafkaConsumer refuses
     * two threads at once; a producer's calls keep their order); calls on futures and new clients
     * run on the shared pool. */
    private ExecutorService laneOf(JsonNode req) {
        if (!req.hasNonNull("handle")) return pool;
        return lanes.computeIfAbsent(req.get("handle").asText(), h -> Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "driver-" + h);
            t.setDaemon(true);
            return t;
        }));
    }

    private void handle(JsonNode req) {
        try {
            respond(req.get("id"), dispatch(req.path("op").asText(), req), null);
        } catch (Throwable e) {
            respond(req.get("id"), null, e);
        }
    }

    private synchronized void respond(JsonNode id, JsonNode result, Throwable error) {
        ObjectNode r = NODES.objectNode();
        r.set("id", id == null ? NODES.nullNode() : id);
        r.put("ok", error == null);
        if (error == null) r.set("result", result == null ? NODES.nullNode() : result);
        else r.set("error", error(error));
        out.println(r.toString());
        out.flush();
    }

    /** The exception a caller would catch (an ExecutionException's cause), with its cause chain. */
    static ObjectNode error(Throwable e) {
        while ((e instanceof ExecutionException || e instanceof java.util.concurrent.CompletionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        ObjectNode n = NODES.objectNode();
        n.put("class", e.getClass().getName());
        n.put("message", e.getMessage());
        ArrayNode causes = n.putArray("causes");
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            causes.addObject().put("class", c.getClass().getName()).put("message", c.getMessage());
            if (causes.size() > 10) break;
        }
        return n;
    }

    /** kafka-clients' version, from the properties file its jar carries: AppInfoParser, which
     *  reads the same file, moved to common.utils.internals in 4.4.0, so naming it would tie the
     *  driver to one release. */
    private static String clientsVersion() throws java.io.IOException {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) return "unknown";
            p.load(in);
        }
        return p.getProperty("version", "unknown");
    }

    // ---- dispatch ---------------------------------------------------------------------------
    private JsonNode dispatch(String op, JsonNode r) throws Exception {
        switch (op) {
            case "ping": {
                ObjectNode n = NODES.objectNode();
                n.put("kafka_clients", clientsVersion());
                n.put("java", System.getProperty("java.version"));
                return n;
            }
            case "producer.create":
                return NODES.textNode(register("p", new KafkaProducer<byte[], byte[]>(
                        props(r, "org.apache.kafka.common.serialization.ByteArraySerializer", "serializer"))));
            case "consumer.create":
                return NODES.textNode(register("c", new KafkaConsumer<byte[], byte[]>(
                        props(r, "org.apache.kafka.common.serialization.ByteArrayDeserializer", "deserializer"))));
            case "shareConsumer.create":
                return NODES.textNode(register("s", new KafkaShareConsumer<byte[], byte[]>(
                        props(r, "org.apache.kafka.common.serialization.ByteArrayDeserializer", "deserializer"))));
            case "admin.create":
                return NODES.textNode(register("a", Admin.create(props(r, null, null))));
            case "close": {
                Object c = clients.get(r.path("handle").asText());
                if (c == null) throw new IllegalArgumentException("no client " + r.path("handle"));
                Duration timeout = r.hasNonNull("timeout_ms") ? Duration.ofMillis(r.get("timeout_ms").asLong()) : null;
                // the handle stays: a call after close reaches the client, which refuses it itself
                if (c instanceof KafkaProducer) {
                    if (timeout == null) ((KafkaProducer<?, ?>) c).close();
                    else ((KafkaProducer<?, ?>) c).close(timeout);
                } else if (c instanceof KafkaShareConsumer) {
                    if (timeout == null) ((KafkaShareConsumer<?, ?>) c).close();
                    else ((KafkaShareConsumer<?, ?>) c).close(timeout);
                } else if (c instanceof KafkaConsumer) {
                    if (timeout == null) ((KafkaConsumer<?, ?>) c).close();
                    else ((KafkaConsumer<?, ?>) c).close(CloseOptions.timeout(timeout));
                } else {
                    if (timeout == null) ((Admin) c).close();
                    else ((Admin) c).close(timeout);
                }
                return null;
            }
            case "future.get": {
                Future<?> f = future(r);
                Object v = r.hasNonNull("timeout_ms") ? f.get(r.get("timeout_ms").asLong(), TimeUnit.MILLISECONDS) : f.get();
                return value(v);
            }
            case "future.outcomes": { // non-blocking: the state of each future named
                ArrayNode a = NODES.arrayNode();
                for (JsonNode id : r.path("futures")) a.add(outcome(futures.get(id.asText())));
                return a;
            }
            default:
                break;
        }
        if (op.startsWith("producer.")) return producer(op.substring(9), producer(r), r);
        if (op.startsWith("consumer.")) return consumer(op.substring(9), consumer(r), r);
        if (op.startsWith("shareConsumer.")) return shareConsumer(op.substring(14), shareConsumer(r), r);
        if (op.startsWith("admin.")) return admin(op.substring(6), (Admin) client(r, Admin.class), r);
        throw new IllegalArgumentException("unknown op " + op);
    }

    private String register(String prefix, Object client) {
        String h = prefix + ids.incrementAndGet();
        clients.put(h, client);
        return h;
    }

    private Object client(JsonNode r, Class<?> kind) {
        Object c = clients.get(r.path("handle").asText());
        if (c == null || !kind.isInstance(c)) {
            throw new IllegalArgumentException("no " + kind.getSimpleName() + " " + r.path("handle") + " (closed?)");
        }
        return c;
    }

    @SuppressWarnings("unchecked")
    private KafkaProducer<byte[], byte[]> producer(JsonNode r) {
        return (KafkaProducer<byte[], byte[]>) client(r, KafkaProducer.class);
    }

    @SuppressWarnings("unchecked")
    private KafkaConsumer<byte[], byte[]> consumer(JsonNode r) {
        return (KafkaConsumer<byte[], byte[]>) client(r, KafkaConsumer.class);
    }

    @SuppressWarnings("unchecked")
    private KafkaShareConsumer<byte[], byte[]> shareConsumer(JsonNode r) {
        return (KafkaShareConsumer<byte[], byte[]>) client(r, KafkaShareConsumer.class);
    }

    private Future<?> future(JsonNode r) {
        Future<?> f = futures.get(r.path("future").asText());
        if (f == null) throw new IllegalArgumentException("no future " + r.path("future"));
        return f;
    }

    private String keep(Future<?> f) {
        String id = "f" + ids.incrementAndGet();
        futures.put(id, f);
        return id;
    }

    /** The config as given (values as strings: the client's ConfigDef parses and checks them). */
    private static Properties props(JsonNode r, String serde, String kind) {
        Properties p = new Properties();
        for (Map.Entry<String, JsonNode> e : r.path("config").properties()) {
            JsonNode v = e.getValue();
            if (v.isArray()) { // a LIST setting (bootstrap.servers, ...): Java's comma-separated form
                List<String> items = new ArrayList<>();
                v.forEach(i -> items.add(i.asText()));
                p.put(e.getKey(), String.join(",", items));
            } else {
                p.put(e.getKey(), v.isTextual() ? v.asText() : v.toString());
            }
        }
        if (serde != null) {
            p.putIfAbsent("key." + kind, serde);
            p.putIfAbsent("value." + kind, serde);
        }
        return p;
    }

    // ---- producer ---------------------------------------------------------------------------
    private JsonNode producer(String op, KafkaProducer<byte[], byte[]> p, JsonNode r) throws Exception {
        switch (op) {
            case "send":
                return NODES.textNode(keep(p.send(record(r))));
            case "send_many": {
                // a loop in Java, so that JSON per record does not dominate a throughput number
                long count = r.path("count").asLong();
                byte[] value = new byte[r.path("value_bytes").asInt(1024)];
                java.util.Arrays.fill(value, (byte) 'x');
                Integer partition = r.hasNonNull("partition") ? r.get("partition").asInt() : null;
                String topic = r.path("topic").asText();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                long t0 = System.nanoTime();
                for (long i = 0; i < count; i++) sent.add(p.send(new ProducerRecord<>(topic, partition, null, value)));
                long failed = 0;
                ObjectNode first = null;
                for (Future<RecordMetadata> f : sent) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        failed++;
                        if (first == null) first = error(e);
                    }
                }
                ObjectNode n = NODES.objectNode();
                n.put("records", count);
                n.put("failed", failed);
                n.put("seconds", (System.nanoTime() - t0) / 1e9);
                n.set("first_error", first);
                return n;
            }
            case "flush":
                p.flush();
                return null;
            case "initTransactions":
                p.initTransactions();
                return null;
            case "beginTransaction":
                p.beginTransaction();
                return null;
            case "commitTransaction":
                p.commitTransaction();
                return null;
            case "abortTransaction":
                p.abortTransaction();
                return null;
            case "sendOffsetsToTransaction": {
                ConsumerGroupMetadata meta;
                if (r.hasNonNull("consumer")) {
                    Object c = clients.get(r.get("consumer").asText());
                    if (!(c instanceof KafkaConsumer)) throw new IllegalArgumentException("no consumer " + r.get("consumer"));
                    meta = ((KafkaConsumer<?, ?>) c).groupMetadata();
                } else { // the group id alone, as kafka-python's send_offsets_to_transaction takes it
                    meta = groupOnly(r.path("group_id").asText());
                }
                p.sendOffsetsToTransaction(offsets(r.path("offsets")), meta);
                return null;
            }
            case "partitionsFor": {
                ArrayNode a = NODES.arrayNode();
                p.partitionsFor(r.path("topic").asText()).forEach(i -> a.add(i.partition()));
                return a;
            }
            default:
                throw new IllegalArgumentException("unknown producer op " + op);
        }
    }

    @SuppressWarnings("removal")
    private static ConsumerGroupMetadata groupOnly(String groupId) {
        return new ConsumerGroupMetadata(groupId);
    }

    private static ProducerRecord<byte[], byte[]> record(JsonNode r) {
        List<Header> headers = new ArrayList<>();
        for (JsonNode h : r.path("headers")) headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
        return new ProducerRecord<>(
                r.path("topic").asText(),
                r.hasNonNull("partition") ? r.get("partition").asInt() : null,
                r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null,
                bytes(r.get("key")),
                bytes(r.get("value")),
                headers);
    }

    // ---- consumer ---------------------------------------------------------------------------
    private JsonNode consumer(String op, KafkaConsumer<byte[], byte[]> c, JsonNode r) throws Exception {
        switch (op) {
            case "subscribe":
                c.subscribe(texts(r.path("topics")));
                return null;
            case "assign":
                c.assign(partitions(r.path("partitions")));
                return null;
            case "unsubscribe":
                c.unsubscribe();
                return null;
            case "assignment":
                return partitions(c.assignment());
            case "poll": {
                ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(r.path("timeout_ms").asLong(0)));
                ArrayNode a = NODES.arrayNode();
                for (ConsumerRecord<byte[], byte[]> rec : recs) a.add(consumerRecord(rec));
                return a;
            }
            case "commitSync": {
                Duration t = r.hasNonNull("timeout_ms") ? Duration.ofMillis(r.get("timeout_ms").asLong()) : null;
                if (r.hasNonNull("offsets")) {
                    if (t == null) c.commitSync(offsets(r.get("offsets")));
                    else c.commitSync(offsets(r.get("offsets")), t);
                } else if (t == null) c.commitSync();
                else c.commitSync(t);
                return null;
            }
            case "commitAsync": {
                // the callback runs inside a later poll/commitSync/close of this consumer
                CompletableFuture<Map<TopicPartition, OffsetAndMetadata>> f = new CompletableFuture<>();
                org.apache.kafka.clients.consumer.OffsetCommitCallback cb = (offsets, exc) -> {
                    if (exc != null) f.completeExceptionally(exc);
                    else f.complete(offsets);
                };
                if (r.hasNonNull("offsets")) c.commitAsync(offsets(r.get("offsets")), cb);
                else c.commitAsync(cb);
                return NODES.textNode(keep(f));
            }
            case "seek":
                c.seek(new TopicPartition(r.path("topic").asText(), r.path("partition").asInt()), r.path("offset").asLong());
                return null;
            case "seekToBeginning":
                c.seekToBeginning(partitions(r.path("partitions")));
                return null;
            case "seekToEnd":
                c.seekToEnd(partitions(r.path("partitions")));
                return null;
            case "position": {
                TopicPartition tp = new TopicPartition(r.path("topic").asText(), r.path("partition").asInt());
                return NODES.numberNode(r.hasNonNull("timeout_ms")
                        ? c.position(tp, Duration.ofMillis(r.get("timeout_ms").asLong())) : c.position(tp));
            }
            case "committed": {
                Map<TopicPartition, OffsetAndMetadata> m = r.hasNonNull("timeout_ms")
                        ? c.committed(partitionSet(r.path("partitions")), Duration.ofMillis(r.get("timeout_ms").asLong()))
                        : c.committed(partitionSet(r.path("partitions")));
                return value(m);
            }
            case "groupMetadata": {
                ConsumerGroupMetadata m = c.groupMetadata();
                ObjectNode n = NODES.objectNode();
                n.put("groupId", m.groupId());
                n.put("generationId", m.generationId());
                n.put("memberId", m.memberId());
                n.put("groupInstanceId", m.groupInstanceId().orElse(null));
                return n;
            }
            case "endOffsets":
            case "beginningOffsets": {
                List<TopicPartition> tps = partitions(r.path("partitions"));
                Map<TopicPartition, Long> m = op.equals("endOffsets") ? c.endOffsets(tps) : c.beginningOffsets(tps);
                ArrayNode a = NODES.arrayNode();
                m.forEach((tp, off) -> a.add(tp(tp).put("offset", off)));
                return a;
            }
            default:
                throw new IllegalArgumentException("unknown consumer op " + op);
        }
    }

    private static ObjectNode consumerRecord(ConsumerRecord<byte[], byte[]> rec) {
        ObjectNode n = tp(new TopicPartition(rec.topic(), rec.partition()));
        n.put("offset", rec.offset());
        n.put("timestamp", rec.timestamp());
        n.put("timestampType", rec.timestampType().name);
        n.put("key", b64(rec.key()));
        n.put("value", b64(rec.value()));
        ArrayNode hs = n.putArray("headers");
        for (Header h : rec.headers()) hs.addArray().add(h.key()).add(b64(h.value()));
        Optional<Integer> epoch = rec.leaderEpoch();
        n.put("leaderEpoch", epoch.orElse(null));
        return n;
    }

    // ---- share consumer (KIP-932) --------------------------------------------------------------
    /** Each share consumer's records of its last poll: Java acknowledges the record objects it
     * returned (by offset only those whose delivery failed), so acknowledge finds them here. */
    private final Map<Object, Map<String, ConsumerRecord<byte[], byte[]>>> lastPolled = new ConcurrentHashMap<>();

    private static String recordKey(String topic, int partition, long offset) {
        return topic + "/" + partition + "/" + offset;
    }

    /** What each share consumer's acknowledgement commit callback was given, not yet asked for.
     * Java calls it on the consumer's own thread, inside its poll, commitSync, commitAsync or close. */
    private final Map<Object, List<ObjectNode>> commitReports = new ConcurrentHashMap<>();

    private void reportCommits(KafkaShareConsumer<byte[], byte[]> c) {
        List<ObjectNode> reports = commitReports.computeIfAbsent(c, k -> new ArrayList<>());
        c.setAcknowledgementCommitCallback((offsets, exception) -> {
            ObjectNode n = NODES.objectNode();
            ArrayNode parts = n.putArray("partitions");
            offsets.forEach((tip, set) -> {
                ArrayNode o = parts.addObject().put("topic", tip.topic()).put("partition", tip.partition())
                        .putArray("offsets");
                set.stream().sorted().forEach(o::add);
            });
            if (exception != null) n.set("error", error(exception));
            synchronized (reports) { reports.add(n); }
        });
    }

    private JsonNode shareConsumer(String op, KafkaShareConsumer<byte[], byte[]> c, JsonNode r) throws Exception {
        switch (op) {
            case "subscribe":
                reportCommits(c);
                c.subscribe(texts(r.path("topics")));
                return null;
            case "commitAsync":
                c.commitAsync();
                return null;
            case "acknowledgementCommits": {
                ArrayNode a = NODES.arrayNode();
                List<ObjectNode> reports = commitReports.getOrDefault(c, new ArrayList<>());
                synchronized (reports) { a.addAll(reports); reports.clear(); }
                return a;
            }
            case "poll": {
                ArrayNode a = NODES.arrayNode();
                Map<String, ConsumerRecord<byte[], byte[]>> polled = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(r.path("timeout_ms").asLong(0)))) {
                    polled.put(recordKey(rec.topic(), rec.partition(), rec.offset()), rec);
                    ObjectNode n = consumerRecord(rec);
                    n.put("deliveryCount", rec.deliveryCount().map(Short::intValue).orElse(null));
                    a.add(n);
                }
                lastPolled.put(c, polled);
                return a;
            }
            case "acknowledge": {
                String topic = r.path("topic").asText();
                int partition = r.path("partition").asInt();
                long offset = r.path("offset").asLong();
                AcknowledgeType type = AcknowledgeType.valueOf(r.path("type").asText());
                ConsumerRecord<byte[], byte[]> rec = lastPolled.getOrDefault(c, Map.of())
                        .get(recordKey(topic, partition, offset));
                if (rec != null) c.acknowledge(rec, type);
                else c.acknowledge(topic, partition, offset, type); // not polled: Java's own refusal
                return null;
            }
            case "commitSync": {
                ArrayNode a = NODES.arrayNode();
                var result = r.hasNonNull("timeout_ms")
                        ? c.commitSync(Duration.ofMillis(r.get("timeout_ms").asLong())) : c.commitSync();
                result.forEach((tip, error) -> {
                    ObjectNode n = a.addObject().put("topic", tip.topic()).put("partition", tip.partition());
                    error.ifPresent(e -> n.set("error", error(e)));
                });
                return a;
            }
            default:
                throw new IllegalArgumentException("unknown share consumer op " + op);
        }
    }

    // ---- admin ------------------------------------------------------------------------------
    private JsonNode admin(String op, Admin a, JsonNode r) throws Exception {
        long timeoutMs = r.path("timeout_ms").asLong(30000);
        switch (op) {
            case "createTopics": {
                List<NewTopic> topics = new ArrayList<>();
                for (JsonNode t : r.path("topics")) {
                    NewTopic nt = t.hasNonNull("assignments")
                            ? new NewTopic(t.path("name").asText(), assignments(t.get("assignments")))
                            : new NewTopic(t.path("name").asText(),
                            t.hasNonNull("partitions") ? Optional.of(t.get("partitions").asInt()) : Optional.empty(),
                            t.hasNonNull("replication_factor") ? Optional.of((short) t.get("replication_factor").asInt()) : Optional.empty());
                    Map<String, String> configs = new HashMap<>();
                    t.path("configs").properties().forEach(e -> configs.put(e.getKey(), e.getValue().asText()));
                    topics.add(nt.configs(configs));
                }
                return perKey(a.createTopics(topics).values(), timeoutMs);
            }
            case "deleteTopics": {
                List<String> names = new ArrayList<>();
                r.path("topics").forEach(t -> names.add(t.asText()));
                return perKey(a.deleteTopics(names).topicNameValues(), timeoutMs);
            }
            case "describeShareGroups": {
                return perKey(a.describeShareGroups(texts(r.path("groups"))).describedGroups(), timeoutMs);
            }
            case "describeTransactions": {
                List<String> ids = texts(r.path("ids"));
                DescribeTransactionsResult result = a.describeTransactions(ids);
                Map<String, KafkaFuture<?>> futures = new HashMap<>();
                for (String id : ids) futures.put(id, result.description(id));
                return perKey(futures, timeoutMs);
            }
            case "listTransactions": {
                // kafka-transactions list: every broker's coordinator, filtered by state and id pattern
                ListTransactionsOptions options = new ListTransactionsOptions();
                List<TransactionState> states = new ArrayList<>();
                for (String st : texts(r.path("states"))) states.add(TransactionState.parse(st));
                if (!states.isEmpty()) options.filterStates(states);
                if (r.hasNonNull("pattern")) options.filterOnTransactionalIdPattern(r.path("pattern").asText());
                ArrayNode rows = NODES.arrayNode();
                for (TransactionListing l : a.listTransactions(options).all().get(timeoutMs, TimeUnit.MILLISECONDS)) {
                    rows.addObject().put("transactionalId", l.transactionalId()).put("producerId", l.producerId())
                            .put("state", l.state().toString());
                }
                return rows;
            }
            case "listShareGroupOffsets": {
                // all the group's partitions (no spec); kafka-share-groups --describe --offsets
                Map<String, ListShareGroupOffsetsSpec> specs = new HashMap<>();
                for (String g : texts(r.path("groups"))) specs.put(g, new ListShareGroupOffsetsSpec());
                ListShareGroupOffsetsResult result = a.listShareGroupOffsets(specs);
                Map<String, KafkaFuture<?>> futures = new HashMap<>();
                for (String g : specs.keySet()) futures.put(g, result.partitionsToOffsetInfo(g));
                return perKey(futures, timeoutMs);
            }
            case "describeTopics": {
                List<String> names = new ArrayList<>();
                r.path("topics").forEach(t -> names.add(t.asText()));
                return perKey(a.describeTopics(names).topicNameValues(), timeoutMs);
            }
            case "listOffsets": {
                Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
                for (JsonNode p : r.path("partitions")) {
                    JsonNode s = p.path("spec");
                    OffsetSpec spec = s.isNumber() ? OffsetSpec.forTimestamp(s.asLong())
                            : s.asText().equals("earliest") ? OffsetSpec.earliest()
                            : s.asText().equals("max_timestamp") ? OffsetSpec.maxTimestamp()
                            : OffsetSpec.latest();
                    specs.put(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt()), spec);
                }
                ListOffsetsOptions opts = new ListOffsetsOptions(
                        "read_committed".equals(r.path("isolation_level").asText()) ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED);
                ArrayNode out = NODES.arrayNode();
                ListOffsetsResult result = a.listOffsets(specs, opts);
                for (TopicPartition tp : specs.keySet()) {
                    ObjectNode n = tp(tp);
                    try {
                        ListOffsetsResult.ListOffsetsResultInfo info = result.partitionResult(tp).get(timeoutMs, TimeUnit.MILLISECONDS);
                        n.put("offset", info.offset());
                        n.put("timestamp", info.timestamp());
                        n.put("leaderEpoch", info.leaderEpoch().orElse(null));
                    } catch (ExecutionException | TimeoutException ex) {
                        n.set("error", error(ex));
                    }
                    out.add(n);
                }
                return out;
            }
            case "createPartitions": {
                Map<String, NewPartitions> grow = new HashMap<>();
                for (JsonNode t : r.path("topics")) {
                    int total = t.path("total").asInt();
                    List<List<Integer>> given = new ArrayList<>();
                    for (JsonNode replicas : t.path("assignments")) given.add(ints(replicas));
                    grow.put(t.path("name").asText(), t.hasNonNull("assignments")
                            ? NewPartitions.increaseTo(total, given) : NewPartitions.increaseTo(total));
                }
                var options = new CreatePartitionsOptions().validateOnly(r.path("validate_only").asBoolean(false));
                return perKey(a.createPartitions(grow, options).values(), timeoutMs);
            }
            case "describeLogDirs": {
                ObjectNode n = NODES.objectNode();
                var result = a.describeLogDirs(ints(r.path("brokers"))).descriptions();
                for (var e : result.entrySet()) {
                    ObjectNode one = n.putObject(String.valueOf(e.getKey()));
                    try {
                        ObjectNode dirs = one.putObject("value");
                        for (var d : e.getValue().get(timeoutMs, TimeUnit.MILLISECONDS).entrySet()) {
                            dirs.set(d.getKey(), logDir(d.getValue()));
                        }
                    } catch (ExecutionException | TimeoutException ex) {
                        one.remove("value");
                        one.set("error", error(ex));
                    }
                }
                return n;
            }
            case "alterReplicaLogDirs": {
                Map<TopicPartitionReplica, String> moves = new HashMap<>();
                for (JsonNode m : r.path("moves")) {
                    moves.put(new TopicPartitionReplica(m.path("topic").asText(), m.path("partition").asInt(),
                            m.path("broker").asInt()), m.path("dir").asText());
                }
                return perKey(a.alterReplicaLogDirs(moves).values(), timeoutMs);
            }
            case "describeMetadataQuorum": {
                QuorumInfo q = a.describeMetadataQuorum().quorumInfo().get(timeoutMs, TimeUnit.MILLISECONDS);
                ObjectNode n = NODES.objectNode().put("leaderId", q.leaderId()).put("leaderEpoch", q.leaderEpoch())
                        .put("highWatermark", q.highWatermark());
                n.set("voters", replicaStates(q.voters()));
                n.set("observers", replicaStates(q.observers()));
                return n;
            }
            case "electLeaders": {
                var elected = a.electLeaders(ElectionType.valueOf(r.path("type").asText()),
                        partitionSet(r.path("partitions"))).partitions().get(timeoutMs, TimeUnit.MILLISECONDS);
                ArrayNode out = NODES.arrayNode();
                elected.forEach((tp, failure) -> {
                    ObjectNode n = out.addObject().put("topic", tp.topic()).put("partition", tp.partition());
                    failure.ifPresent(e -> n.set("error", error(e)));
                });
                return out;
            }
            case "alterPartitionReassignments": {
                Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
                for (JsonNode m : r.path("reassignments")) {
                    moves.put(new TopicPartition(m.path("topic").asText(), m.path("partition").asInt()),
                            m.hasNonNull("replicas") ? Optional.of(new NewPartitionReassignment(ints(m.get("replicas"))))
                                    : Optional.empty());
                }
                return perKey(a.alterPartitionReassignments(moves).values(), timeoutMs);
            }
            case "listPartitionReassignments": {
                var ongoing = a.listPartitionReassignments(partitionSet(r.path("partitions"))).reassignments()
                        .get(timeoutMs, TimeUnit.MILLISECONDS);
                ArrayNode out = NODES.arrayNode();
                for (Map.Entry<TopicPartition, PartitionReassignment> e : ongoing.entrySet()) {
                    ObjectNode n = tp(e.getKey());
                    n.set("replicas", intArray(e.getValue().replicas()));
                    n.set("addingReplicas", intArray(e.getValue().addingReplicas()));
                    n.set("removingReplicas", intArray(e.getValue().removingReplicas()));
                    out.add(n);
                }
                return out;
            }
            case "listConfigResources": {
                java.util.Set<ConfigResource.Type> types = new java.util.HashSet<>();
                for (String t : texts(r.path("types"))) types.add(ConfigResource.Type.valueOf(t));
                ArrayNode out = NODES.arrayNode();
                for (ConfigResource c : a.listConfigResources(types, new ListConfigResourcesOptions()).all()
                        .get(timeoutMs, TimeUnit.MILLISECONDS)) {
                    out.addObject().put("type", c.type().name()).put("name", c.name());
                }
                return out;
            }
            case "describeConfigs": {
                List<ConfigResource> resources = new ArrayList<>();
                for (JsonNode c : r.path("resources")) resources.add(configResource(c));
                return perKey(a.describeConfigs(resources).values(), timeoutMs);
            }
            case "incrementalAlterConfigs": {
                Map<ConfigResource, java.util.Collection<AlterConfigOp>> changes = new HashMap<>();
                for (JsonNode c : r.path("resources")) {
                    List<AlterConfigOp> ops = new ArrayList<>();
                    for (JsonNode o : c.path("ops")) {
                        ops.add(new AlterConfigOp(new ConfigEntry(o.path("name").asText(),
                                o.hasNonNull("value") ? o.get("value").asText() : null),
                                AlterConfigOp.OpType.valueOf(o.path("op").asText())));
                    }
                    changes.put(configResource(c), ops);
                }
                var options = new AlterConfigsOptions().validateOnly(r.path("validate_only").asBoolean(false));
                return perKey(a.incrementalAlterConfigs(changes, options).values(), timeoutMs);
            }
            case "alterShareGroupOffsets": {
                Map<TopicPartition, Long> offsets = new HashMap<>();
                for (JsonNode p : r.path("offsets")) {
                    offsets.put(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt()),
                            p.path("offset").asLong());
                }
                var result = a.alterShareGroupOffsets(r.path("group").asText(), offsets);
                Map<TopicPartition, KafkaFuture<?>> futures = new HashMap<>();
                for (TopicPartition tp : offsets.keySet()) futures.put(tp, result.partitionResult(tp));
                return perKey(futures, timeoutMs);
            }
            case "deleteShareGroupOffsets": {
                java.util.Set<String> topics = new java.util.HashSet<>(texts(r.path("topics")));
                var result = a.deleteShareGroupOffsets(r.path("group").asText(), topics);
                Map<String, KafkaFuture<?>> futures = new HashMap<>();
                for (String t : topics) futures.put(t, result.topicResult(t));
                return perKey(futures, timeoutMs);
            }
            default:
                throw new IllegalArgumentException("unknown admin op " + op);
        }
    }

    /** {key: {"value": ...} or {"error": ...}}: each part of an admin call succeeds or fails alone. */
    private static ObjectNode perKey(Map<?, ? extends KafkaFuture<?>> m, long timeoutMs) throws Exception {
        ObjectNode n = NODES.objectNode();
        for (Map.Entry<?, ? extends KafkaFuture<?>> e : m.entrySet()) {
            ObjectNode one = n.putObject(key(e.getKey()));
            try {
                one.set("value", value(e.getValue().get(timeoutMs, TimeUnit.MILLISECONDS)));
            } catch (ExecutionException | TimeoutException ex) {
                one.set("error", error(ex));
            }
        }
        return n;
    }

    /** A per-key answer's key as text: "topic:partition", "topic:partition:broker", "TYPE:name"
     *  (a topic name holds no colon), anything else as itself. */
    private static String key(Object k) {
        if (k instanceof TopicPartition) return ((TopicPartition) k).topic() + ":" + ((TopicPartition) k).partition();
        if (k instanceof TopicPartitionReplica) {
            TopicPartitionReplica t = (TopicPartitionReplica) k;
            return t.topic() + ":" + t.partition() + ":" + t.brokerId();
        }
        if (k instanceof ConfigResource) return ((ConfigResource) k).type().name() + ":" + ((ConfigResource) k).name();
        return String.valueOf(k);
    }

    private static ConfigResource configResource(JsonNode c) {
        return new ConfigResource(ConfigResource.Type.valueOf(c.path("type").asText()), c.path("name").asText());
    }

    private static ObjectNode logDir(LogDirDescription d) {
        ObjectNode n = NODES.objectNode();
        n.set("error", d.error() == null ? NODES.nullNode() : error(d.error()));
        n.put("totalBytes", d.totalBytes().isPresent() ? d.totalBytes().getAsLong() : -1);
        n.put("usableBytes", d.usableBytes().isPresent() ? d.usableBytes().getAsLong() : -1);
        ArrayNode replicas = n.putArray("replicas");
        for (Map.Entry<TopicPartition, ReplicaInfo> e : d.replicaInfos().entrySet()) {
            replicas.add(tp(e.getKey()).put("size", e.getValue().size()).put("offsetLag", e.getValue().offsetLag())
                    .put("isFuture", e.getValue().isFuture()));
        }
        return n;
    }

    private static ArrayNode replicaStates(List<QuorumInfo.ReplicaState> states) {
        ArrayNode a = NODES.arrayNode();
        for (QuorumInfo.ReplicaState s : states) {
            a.addObject().put("replicaId", s.replicaId()).put("logEndOffset", s.logEndOffset());
        }
        return a;
    }

    private static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(i -> out.add(i.asInt()));
        return out;
    }

    private static ArrayNode intArray(List<Integer> ints) {
        ArrayNode a = NODES.arrayNode();
        ints.forEach(a::add);
        return a;
    }

    /** {"0": [1, 2], ...} -> the replica assignments NewTopic takes */
    private static Map<Integer, List<Integer>> assignments(JsonNode byPartition) {
        Map<Integer, List<Integer>> m = new HashMap<>();
        byPartition.properties().forEach(e -> m.put(Integer.parseInt(e.getKey()), ints(e.getValue())));
        return m;
    }

    // ---- values -----------------------------------------------------------------------------
    private static ObjectNode outcome(Future<?> f) {
        ObjectNode n = NODES.objectNode();
        if (f == null) return n.put("state", "unknown");
        if (!f.isDone()) return n.put("state", "pending");
        try {
            n.set("value", value(f.get()));
            n.put("state", "done");
        } catch (Exception e) {
            n.put("state", "failed");
            n.set("error", error(e));
        }
        return n;
    }

    @SuppressWarnings("unchecked")
    private static JsonNode value(Object v) {
        if (v == null) return NODES.nullNode();
        if (v instanceof RecordMetadata) {
            RecordMetadata m = (RecordMetadata) v;
            ObjectNode n = tp(new TopicPartition(m.topic(), m.partition()));
            n.put("offset", m.hasOffset() ? m.offset() : -1);
            n.put("timestamp", m.hasTimestamp() ? m.timestamp() : -1);
            return n;
        }
        if (v instanceof OffsetAndMetadata) {
            OffsetAndMetadata o = (OffsetAndMetadata) v;
            return NODES.objectNode().put("offset", o.offset()).put("metadata", o.metadata())
                    .put("leaderEpoch", o.leaderEpoch().orElse(null));
        }
        if (v instanceof TransactionDescription) {
            TransactionDescription d = (TransactionDescription) v;
            ObjectNode n = NODES.objectNode().put("state", d.state().toString()).put("producerEpoch", d.producerEpoch())
                    .put("transactionTimeoutMs", d.transactionTimeoutMs());
            n.put("transactionStartTimeMs", d.transactionStartTimeMs().isPresent() ? d.transactionStartTimeMs().getAsLong() : -1);
            ArrayNode tps = n.putArray("topicPartitions");
            for (TopicPartition tp : d.topicPartitions()) tps.add(tp(tp));
            return n;
        }
        if (v instanceof ShareGroupDescription) {
            ShareGroupDescription d = (ShareGroupDescription) v;
            ObjectNode n = NODES.objectNode();
            n.put("groupId", d.groupId());
            n.put("state", d.groupState().toString());
            n.put("groupEpoch", d.groupEpoch());
            ArrayNode ms = n.putArray("members");
            for (ShareMemberDescription m : d.members()) {
                ObjectNode mn = ms.addObject().put("memberId", m.consumerId()).put("clientId", m.clientId())
                        .put("memberEpoch", m.memberEpoch());
                mn.set("assignment", partitions(m.assignment().topicPartitions()));
            }
            return n;
        }
        if (v instanceof TopicDescription) {
            TopicDescription d = (TopicDescription) v;
            ObjectNode n = NODES.objectNode();
            n.put("name", d.name());
            n.put("internal", d.isInternal());
            n.put("topicId", d.topicId() == null ? null : d.topicId().toString());
            ArrayNode ps = n.putArray("partitions");
            for (TopicPartitionInfo p : d.partitions()) {
                ObjectNode pn = ps.addObject();
                pn.put("partition", p.partition());
                pn.put("leader", p.leader() == null ? null : p.leader().id());
                pn.set("replicas", nodeIds(p.replicas()));
                pn.set("isr", nodeIds(p.isr()));
            }
            return n;
        }
        if (v instanceof Config) {
            ObjectNode n = NODES.objectNode();
            for (ConfigEntry c : ((Config) v).entries()) {
                n.putObject(c.name()).put("value", c.value()).put("source", c.source().name())
                        .put("readOnly", c.isReadOnly()).put("sensitive", c.isSensitive()).put("type", c.type().name());
            }
            return n;
        }
        if (v instanceof SharePartitionOffsetInfo) {
            SharePartitionOffsetInfo o = (SharePartitionOffsetInfo) v;
            return NODES.objectNode().put("startOffset", o.startOffset())
                    .put("leaderEpoch", o.leaderEpoch().orElse(null)).put("lag", o.lag().orElse(null));
        }
        if (v instanceof Map) { // TopicPartition -> OffsetAndMetadata (committed, commitAsync) or SharePartitionOffsetInfo
            ArrayNode a = NODES.arrayNode();
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) v).entrySet()) {
                ObjectNode n = tp((TopicPartition) e.getKey());
                n.set(e.getValue() instanceof SharePartitionOffsetInfo ? "offsets" : "committed", value(e.getValue()));
                a.add(n);
            }
            return a;
        }
        return NODES.textNode(v.toString());
    }

    private static ArrayNode nodeIds(List<Node> nodes) {
        ArrayNode a = NODES.arrayNode();
        for (Node n : nodes) a.add(n.id());
        return a;
    }

    private static ObjectNode tp(TopicPartition tp) {
        return NODES.objectNode().put("topic", tp.topic()).put("partition", tp.partition());
    }

    /** A JSON array of strings (topic names, group ids) as Java's list. */
    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(t -> out.add(t.asText()));
        return out;
    }

    private static ArrayNode partitions(Collection<TopicPartition> tps) {
        ArrayNode a = NODES.arrayNode();
        for (TopicPartition tp : tps) a.add(tp(tp));
        return a;
    }

    private static List<TopicPartition> partitions(JsonNode a) {
        List<TopicPartition> out = new ArrayList<>();
        for (JsonNode p : a) out.add(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt()));
        return out;
    }

    private static java.util.Set<TopicPartition> partitionSet(JsonNode a) {
        return new java.util.HashSet<>(partitions(a));
    }

    /** [{"topic", "partition", "offset", "metadata"?}] -> the map commitSync and sendOffsetsToTransaction take */
    private static Map<TopicPartition, OffsetAndMetadata> offsets(JsonNode a) {
        Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
        for (JsonNode p : a) {
            m.put(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt()),
                    new OffsetAndMetadata(p.path("offset").asLong(), p.hasNonNull("metadata") ? p.get("metadata").asText() : ""));
        }
        return m;
    }

    private static byte[] bytes(JsonNode b64) {
        return b64 == null || b64.isNull() ? null : UNB64.decode(b64.asText());
    }

    private static String b64(byte[] b) {
        return b == null ? null : B64.encodeToString(b);
    }
}
