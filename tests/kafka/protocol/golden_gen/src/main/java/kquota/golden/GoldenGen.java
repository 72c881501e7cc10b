package kquota.golden;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterClientQuotasResponseData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DescribeAclsRequestData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * GoldenGen writes kquota's golden wire vectors with the official Java client's generated
 * message classes, so that the Python codec is checked against bytes it did not write itself.
 *
 * <p>For each case it writes {@code <case>.bin} (the exact bytes, no size prefix) and
 * {@code <case>.json}: {@code {"message", "version", "body"}}, where the body is the client's
 * own JsonConverter output with spec (PascalCase) field names. Two values have no exact JSON
 * form and are wrapped: float64 as {@code {"float64_bits": "<16 hex>"}} (so -0.0 and NaN
 * payloads survive) and bytes as {@code {"bytes_hex": "..."}}. Frame cases (header + body,
 * built with {@code RequestUtils.serialize} and {@code ApiKeys.*HeaderVersion}) add
 * {@code frame}, {@code api_key}, {@code header_version}, {@code correlation_id} and
 * {@code client_id}.
 */
public final class GoldenGen {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final ObjectMapper MAPPER =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final HexFormat HEX = HexFormat.of();

    private final Path out;
    private final List<String> names = new ArrayList<>();

    private GoldenGen(Path out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        // Start from an empty table so that a renamed or dropped case cannot linger.
        try (var old = Files.newDirectoryStream(out, "*.{bin,json}")) {
            for (Path p : old) {
                Files.delete(p);
            }
        }
        GoldenGen g = new GoldenGen(out);
        g.quotaRequests();
        g.quotaResponses();
        g.apiVersions();
        g.sasl();
        g.describeCluster();
        g.metadata();
        g.scramUsers();
        g.describeAcls();
        g.listGroups();
        g.describeGroups();
        g.consumerGroupDescribe();
        g.describeConfigs();
        g.headers();
        g.frames();
        System.out.println("golden-gen: wrote " + g.names.size() + " cases to " + out);
    }

    // ---- float64 values the issue asks for: zero, -0.0, huge, subnormal, NaNs -----------------

    private static final double NAN_PAYLOAD = Double.longBitsToDouble(0x7ff80000deadbeefL);
    private static final double NEG_NAN = Double.longBitsToDouble(0xfff8000000000001L);

    // ---- DescribeClientQuotas / AlterClientQuotas requests -----------------------------------

    private static DescribeClientQuotasRequestData.ComponentData component(
            String type, int matchType, String match) {
        return new DescribeClientQuotasRequestData.ComponentData()
                .setEntityType(type).setMatchType((byte) matchType).setMatch(match);
    }

    private static AlterClientQuotasRequestData.EntityData alterEntity(String type, String name) {
        return new AlterClientQuotasRequestData.EntityData().setEntityType(type).setEntityName(name);
    }

    private static AlterClientQuotasRequestData.OpData set(String key, double value) {
        return new AlterClientQuotasRequestData.OpData().setKey(key).setValue(value).setRemove(false);
    }

    private static AlterClientQuotasRequestData.OpData remove(String key) {
        return new AlterClientQuotasRequestData.OpData().setKey(key).setRemove(true);
    }

    private static AlterClientQuotasRequestData.EntryData alterEntry(
            List<AlterClientQuotasRequestData.EntityData> entity,
            List<AlterClientQuotasRequestData.OpData> ops) {
        return new AlterClientQuotasRequestData.EntryData().setEntity(entity).setOps(ops);
    }

    private void quotaRequests() throws IOException {
        for (short v = 0; v <= 1; v++) {
            emit("describe_empty_filter", new DescribeClientQuotasRequestData()
                    .setComponents(List.of()).setStrict(false), v);
            emit("describe_exact_user_strict", new DescribeClientQuotasRequestData()
                    .setComponents(List.of(component("user", 0, "alice"))).setStrict(true), v);
            emit("describe_default_user", new DescribeClientQuotasRequestData()
                    .setComponents(List.of(component("user", 1, null))).setStrict(false), v);
            emit("describe_any_client_id", new DescribeClientQuotasRequestData()
                    .setComponents(List.of(component("client-id", 2, null))).setStrict(false), v);
            emit("describe_mixed_unicode", new DescribeClientQuotasRequestData()
                    .setComponents(List.of(
                            component("user", 0, "\u00fcn\u00efc\u00f8d\u00e9-\u7528\u6237"),
                            component("client-id", 1, null),
                            component("ip", 2, null)))
                    .setStrict(true), v);

            emit("alter_empty", new AlterClientQuotasRequestData()
                    .setEntries(List.of()).setValidateOnly(false), v);
            emit("alter_set_and_remove", new AlterClientQuotasRequestData()
                    .setEntries(List.of(alterEntry(
                            List.of(alterEntity("user", "alice"), alterEntity("client-id", "app")),
                            List.of(set("producer_byte_rate", 1048576.0),
                                    remove("consumer_byte_rate")))))
                    .setValidateOnly(false), v);
            emit("alter_default_entities_validate_only", new AlterClientQuotasRequestData()
                    .setEntries(List.of(
                            alterEntry(List.of(alterEntity("user", null)),
                                    List.of(set("request_percentage", 12.5))),
                            alterEntry(List.of(alterEntity("user", null),
                                            alterEntity("client-id", null)),
                                    List.of(remove("producer_byte_rate"))),
                            alterEntry(List.of(alterEntity("ip", null)),
                                    List.of(set("connection_creation_rate", 100.0)))))
                    .setValidateOnly(true), v);
            emit("alter_special_values", new AlterClientQuotasRequestData()
                    .setEntries(List.of(alterEntry(
                            List.of(alterEntity("user", "edge")),
                            List.of(set("zero", 0.0), set("negative_zero", -0.0),
                                    set("huge", 1e308), set("subnormal", Double.MIN_VALUE),
                                    set("max", Double.MAX_VALUE), set("nan", Double.NaN),
                                    set("nan_payload", NAN_PAYLOAD), set("negative_nan", NEG_NAN),
                                    set("inf", Double.POSITIVE_INFINITY),
                                    set("neg_inf", Double.NEGATIVE_INFINITY)))))
                    .setValidateOnly(true), v);
        }
    }

    // ---- DescribeClientQuotas / AlterClientQuotas responses ----------------------------------

    private static DescribeClientQuotasResponseData.EntryData describedEntry(
            String[][] entity, Object[][] values) {
        List<DescribeClientQuotasResponseData.EntityData> e = new ArrayList<>();
        for (String[] p : entity) {
            e.add(new DescribeClientQuotasResponseData.EntityData()
                    .setEntityType(p[0]).setEntityName(p[1]));
        }
        List<DescribeClientQuotasResponseData.ValueData> vs = new ArrayList<>();
        for (Object[] kv : values) {
            vs.add(new DescribeClientQuotasResponseData.ValueData()
                    .setKey((String) kv[0]).setValue((Double) kv[1]));
        }
        return new DescribeClientQuotasResponseData.EntryData().setEntity(e).setValues(vs);
    }

    private static DescribeClientQuotasResponseData describeResponse() {
        return new DescribeClientQuotasResponseData()
                .setThrottleTimeMs(0).setErrorCode((short) 0).setErrorMessage(null)
                .setEntries(List.of(
                        describedEntry(new String[][] {{"user", "alice"}},
                                new Object[][] {{"producer_byte_rate", 1048576.0},
                                    {"consumer_byte_rate", 2097152.0}}),
                        describedEntry(new String[][] {{"user", null}, {"client-id", null}},
                                new Object[][] {{"request_percentage", 12.5}}),
                        describedEntry(new String[][] {{"ip", null}},
                                new Object[][] {{"connection_creation_rate", 100.0}}),
                        describedEntry(new String[][] {{"user", "edge"}, {"client-id", "c"}},
                                new Object[][] {{"negative_zero", -0.0}, {"huge", 1e308},
                                    {"subnormal", Double.MIN_VALUE}, {"nan", Double.NaN},
                                    {"nan_payload", NAN_PAYLOAD}})));
    }

    private static AlterClientQuotasResponseData.EntryData alteredEntry(
            int code, String message, String[][] entity) {
        List<AlterClientQuotasResponseData.EntityData> e = new ArrayList<>();
        for (String[] p : entity) {
            e.add(new AlterClientQuotasResponseData.EntityData()
                    .setEntityType(p[0]).setEntityName(p[1]));
        }
        return new AlterClientQuotasResponseData.EntryData()
                .setErrorCode((short) code).setErrorMessage(message).setEntity(e);
    }

    private void quotaResponses() throws IOException {
        for (short v = 0; v <= 1; v++) {
            emit("describe_entries", describeResponse().setThrottleTimeMs(17), v);
            emit("describe_empty", new DescribeClientQuotasResponseData()
                    .setEntries(List.of()), v);
            emit("describe_error_null_entries", new DescribeClientQuotasResponseData()
                    .setThrottleTimeMs(0).setErrorCode((short) 42)
                    .setErrorMessage("Invalid match type 7").setEntries(null), v);
            emit("alter_per_entry_errors", new AlterClientQuotasResponseData()
                    .setThrottleTimeMs(5)
                    .setEntries(List.of(
                            alteredEntry(0, null, new String[][] {{"user", "alice"}}),
                            alteredEntry(42, "Invalid value -1.0 for producer_byte_rate",
                                    new String[][] {{"user", null}, {"client-id", "app"}}),
                            alteredEntry(44, "duplicate entity", new String[][] {{"ip", null}}))),
                    v);
        }
    }

    // ---- ApiVersions -------------------------------------------------------------------------

    private static ApiVersionsResponseData.ApiVersionCollection apiKeys(int[][] rows) {
        ApiVersionsResponseData.ApiVersionCollection c =
                new ApiVersionsResponseData.ApiVersionCollection();
        for (int[] r : rows) {
            c.add(new ApiVersionsResponseData.ApiVersion()
                    .setApiKey((short) r[0]).setMinVersion((short) r[1])
                    .setMaxVersion((short) r[2]));
        }
        return c;
    }

    private static ApiVersionsResponseData.SupportedFeatureKeyCollection supported() {
        ApiVersionsResponseData.SupportedFeatureKeyCollection c =
                new ApiVersionsResponseData.SupportedFeatureKeyCollection();
        c.add(new ApiVersionsResponseData.SupportedFeatureKey()
                .setName("metadata.version").setMinVersion((short) 7).setMaxVersion((short) 27));
        c.add(new ApiVersionsResponseData.SupportedFeatureKey()
                .setName("kraft.version").setMinVersion((short) 0).setMaxVersion((short) 1));
        return c;
    }

    private void apiVersions() throws IOException {
        int[][] keys = {{17, 0, 1}, {18, 0, 4}, {36, 0, 2}, {48, 0, 1}, {49, 0, 1}};
        for (short v = 0; v <= 4; v++) {
            ApiVersionsRequestData req = new ApiVersionsRequestData();
            if (v >= 3) {
                req.setClientSoftwareName("kquota").setClientSoftwareVersion("0.1.0");
            }
            emit("api_versions", req, v);
            ApiVersionsResponseData resp = new ApiVersionsResponseData()
                    .setErrorCode((short) 0).setApiKeys(apiKeys(keys));
            if (v >= 1) {
                resp.setThrottleTimeMs(3);
            }
            if (v >= 3) {
                ApiVersionsResponseData.FinalizedFeatureKeyCollection fin =
                        new ApiVersionsResponseData.FinalizedFeatureKeyCollection();
                fin.add(new ApiVersionsResponseData.FinalizedFeatureKey()
                        .setName("metadata.version").setMaxVersionLevel((short) 27)
                        .setMinVersionLevel((short) 27));
                resp.setSupportedFeatures(supported()).setFinalizedFeaturesEpoch(42L)
                        .setFinalizedFeatures(fin).setZkMigrationReady(true);
                emit("api_versions_all_tags", resp, v);
                emit("api_versions_supported_features_only", new ApiVersionsResponseData()
                        .setErrorCode((short) 0).setApiKeys(apiKeys(keys)).setThrottleTimeMs(0)
                        .setSupportedFeatures(supported()), v);
            } else {
                emit("api_versions", resp, v);
            }
        }
        // What a broker sends for an unsupported ApiVersions version: always v0, error 35.
        emit("api_versions_unsupported", new ApiVersionsResponseData()
                .setErrorCode((short) 35).setApiKeys(apiKeys(new int[][] {{18, 0, 4}})), (short) 0);
    }

    // ---- SASL --------------------------------------------------------------------------------

    private void sasl() throws IOException {
        for (short v = 0; v <= 1; v++) {
            emit("sasl_handshake", new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-256"), v);
            emit("sasl_handshake", new SaslHandshakeResponseData().setErrorCode((short) 0)
                    .setMechanisms(List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")), v);
        }
        emit("sasl_handshake_unsupported", new SaslHandshakeResponseData()
                .setErrorCode((short) 33).setMechanisms(List.of("PLAIN")), (short) 1);
        byte[] clientFirst = "n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL".getBytes(StandardCharsets.UTF_8);
        byte[] serverFirst = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
                .getBytes(StandardCharsets.UTF_8);
        for (short v = 0; v <= 2; v++) {
            emit("sasl_authenticate", new SaslAuthenticateRequestData().setAuthBytes(clientFirst), v);
            emit("sasl_authenticate_empty", new SaslAuthenticateRequestData()
                    .setAuthBytes(new byte[0]), v);
            SaslAuthenticateResponseData ok = new SaslAuthenticateResponseData()
                    .setErrorCode((short) 0).setErrorMessage(null).setAuthBytes(serverFirst);
            if (v >= 1) {
                ok.setSessionLifetimeMs(3_600_000L);
            }
            emit("sasl_authenticate", ok, v);
            emit("sasl_authenticate_failed", new SaslAuthenticateResponseData()
                    .setErrorCode((short) 58)
                    .setErrorMessage("Authentication failed during authentication due to invalid"
                            + " credentials with SASL mechanism SCRAM-SHA-256")
                    .setAuthBytes(new byte[0]), v);
        }
    }

    // ---- DescribeCluster (KIP-700): the cluster id saved plans are pinned to ----------------

    private void describeCluster() throws IOException {
        for (short v = 0; v <= 2; v++) {
            DescribeClusterRequestData req = new DescribeClusterRequestData()
                    .setIncludeClusterAuthorizedOperations(false);
            if (v >= 2) {
                req.setIncludeFencedBrokers(true);
            }
            emit("describe_cluster", req, v);
            DescribeClusterResponseData.DescribeClusterBrokerCollection brokers =
                    new DescribeClusterResponseData.DescribeClusterBrokerCollection();
            brokers.add(new DescribeClusterResponseData.DescribeClusterBroker()
                    .setBrokerId(1).setHost("127.0.0.1").setPort(9092).setRack(null));
            brokers.add(new DescribeClusterResponseData.DescribeClusterBroker()
                    .setBrokerId(2).setHost("broker-2").setPort(19092).setRack("rack-b"));
            emit("describe_cluster", new DescribeClusterResponseData()
                    .setThrottleTimeMs(0).setErrorCode((short) 0).setErrorMessage(null)
                    .setClusterId("CCQ4QSgLbJDcYlJVZkNqvA").setControllerId(1)
                    .setBrokers(brokers), v);
        }
    }

    // ---- Metadata: the brokers kquota can fail over to ---------------------------------------

    private static final Uuid TOPIC_ID = Uuid.fromString("b1Fu0Mq6RNWzRWtpA7mXkg");

    private void metadata() throws IOException {
        for (short v = 0; v <= 13; v++) {
            // kquota's own request: no topics (v0 has no way to say "none": [] means all).
            MetadataRequestData none = new MetadataRequestData()
                    .setTopics(new ArrayList<>());
            if (v >= 4) {
                none.setAllowAutoTopicCreation(false);
            }
            emit("metadata_no_topics", none, v);
            MetadataRequestData.MetadataRequestTopic topic =
                    new MetadataRequestData.MetadataRequestTopic().setName("quotas-demo");
            MetadataRequestData named = new MetadataRequestData().setTopics(List.of(topic));
            if (v >= 8) {
                named.setIncludeTopicAuthorizedOperations(true);
            }
            if (v >= 8 && v <= 10) {
                named.setIncludeClusterAuthorizedOperations(true);
            }
            emit("metadata_one_topic", named, v);
            if (v >= 1) {
                emit("metadata_all_topics", new MetadataRequestData().setTopics(null), v);
            }

            MetadataResponseData.MetadataResponseBrokerCollection brokers =
                    new MetadataResponseData.MetadataResponseBrokerCollection();
            brokers.add(new MetadataResponseData.MetadataResponseBroker()
                    .setNodeId(1).setHost("127.0.0.1").setPort(9092).setRack(null));
            brokers.add(new MetadataResponseData.MetadataResponseBroker()
                    .setNodeId(3).setHost("broker-3.example").setPort(19092).setRack("rack-b"));
            MetadataResponseData.MetadataResponsePartition partition =
                    new MetadataResponseData.MetadataResponsePartition()
                            .setErrorCode((short) 0).setPartitionIndex(0).setLeaderId(3)
                            .setLeaderEpoch(7).setReplicaNodes(List.of(3, 1))
                            .setIsrNodes(List.of(3)).setOfflineReplicas(List.of(1));
            MetadataResponseData.MetadataResponseTopicCollection topics =
                    new MetadataResponseData.MetadataResponseTopicCollection();
            MetadataResponseData.MetadataResponseTopic t =
                    new MetadataResponseData.MetadataResponseTopic()
                            .setErrorCode((short) 0).setName("quotas-demo").setIsInternal(false)
                            .setPartitions(List.of(partition));
            if (v >= 10) {
                t.setTopicId(TOPIC_ID);
            }
            if (v >= 8) {
                t.setTopicAuthorizedOperations(0x0df8);
            }
            topics.add(t);
            MetadataResponseData resp = new MetadataResponseData()
                    .setThrottleTimeMs(0).setBrokers(brokers).setClusterId("CCQ4QSgLbJDcYlJVZkNqvA")
                    .setControllerId(3).setTopics(topics);
            emit("metadata_brokers", resp, v);
            MetadataResponseData.MetadataResponseBrokerCollection one =
                    new MetadataResponseData.MetadataResponseBrokerCollection();
            one.add(new MetadataResponseData.MetadataResponseBroker()
                    .setNodeId(2).setHost("127.0.0.1").setPort(39092));
            MetadataResponseData bare = new MetadataResponseData().setBrokers(one)
                    .setClusterId(null).setControllerId(-1);
            if (v >= 13) {
                bare.setErrorCode((short) 0);
            }
            emit("metadata_no_cluster_id", bare, v);
        }
    }

    // ---- principal discovery (--impact): SCRAM users, ACL principals, group members -----------

    private void scramUsers() throws IOException {
        short v = 0;
        emit("scram_all_users", new DescribeUserScramCredentialsRequestData().setUsers(null), v);
        emit("scram_named_users", new DescribeUserScramCredentialsRequestData().setUsers(List.of(
                new DescribeUserScramCredentialsRequestData.UserName().setName("alice"),
                new DescribeUserScramCredentialsRequestData.UserName()
                        .setName("\u00fcn\u00efc\u00f8d\u00e9"))), v);
        emit("scram_users", new DescribeUserScramCredentialsResponseData()
                .setThrottleTimeMs(0).setErrorCode((short) 0).setErrorMessage(null)
                .setResults(List.of(
                        new DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult()
                                .setUser("alice").setErrorCode((short) 0).setErrorMessage(null)
                                .setCredentialInfos(List.of(
                                        new DescribeUserScramCredentialsResponseData.CredentialInfo()
                                                .setMechanism((byte) 1).setIterations(4096),
                                        new DescribeUserScramCredentialsResponseData.CredentialInfo()
                                                .setMechanism((byte) 2).setIterations(8192))),
                        new DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult()
                                .setUser("ghost").setErrorCode((short) 91)
                                .setErrorMessage("Attempt to describe a user credential that does not exist")
                                .setCredentialInfos(List.of()))), v);
        emit("scram_denied", new DescribeUserScramCredentialsResponseData()
                .setThrottleTimeMs(3).setErrorCode((short) 31)
                .setErrorMessage("Cluster authorization failed.").setResults(List.of()), v);
    }

    private void describeAcls() throws IOException {
        for (short v = 1; v <= 3; v++) {
            // kquota's own filter: ANY resource, ANY pattern, any principal/host, ANY op/permission.
            emit("acls_match_any", new DescribeAclsRequestData().setResourceTypeFilter((byte) 1)
                    .setResourceNameFilter(null).setPatternTypeFilter((byte) 1)
                    .setPrincipalFilter(null).setHostFilter(null).setOperation((byte) 1)
                    .setPermissionType((byte) 1), v);
            emit("acls_named", new DescribeAclsRequestData().setResourceTypeFilter((byte) 2)
                    .setResourceNameFilter("payments").setPatternTypeFilter((byte) 3)
                    .setPrincipalFilter("User:alice").setHostFilter("*").setOperation((byte) 3)
                    .setPermissionType((byte) 3), v);
            emit("acls_bindings", new DescribeAclsResponseData().setThrottleTimeMs(0)
                    .setErrorCode((short) 0).setErrorMessage(null).setResources(List.of(
                            new DescribeAclsResponseData.DescribeAclsResource()
                                    .setResourceType((byte) 2).setResourceName("payments")
                                    .setPatternType((byte) 3).setAcls(List.of(
                                            acl("User:alice", "*", 3, 3),
                                            acl("User:*", "10.0.0.1", 2, 2))),
                            new DescribeAclsResponseData.DescribeAclsResource()
                                    .setResourceType((byte) 3).setResourceName("app-")
                                    .setPatternType((byte) 4).setAcls(List.of(
                                            acl("User:CN=svc,OU=kafka", "*", 3, 3))))), v);
            emit("acls_security_disabled", new DescribeAclsResponseData().setThrottleTimeMs(0)
                    .setErrorCode((short) 54).setErrorMessage("No Authorizer is configured.")
                    .setResources(List.of()), v);
        }
    }

    private static DescribeAclsResponseData.AclDescription acl(
            String principal, String host, int operation, int permission) {
        return new DescribeAclsResponseData.AclDescription().setPrincipal(principal)
                .setHost(host).setOperation((byte) operation).setPermissionType((byte) permission);
    }

    private void listGroups() throws IOException {
        for (short v = 0; v <= 5; v++) {
            ListGroupsRequestData req = new ListGroupsRequestData();
            if (v >= 4) {
                req.setStatesFilter(List.of());
            }
            if (v >= 5) {
                req.setTypesFilter(List.of());
            }
            emit("list_groups_all", req, v);
            if (v >= 4) {
                emit("list_groups_stable", new ListGroupsRequestData()
                        .setStatesFilter(List.of("Stable", "PreparingRebalance")), v);
            }
            ListGroupsResponseData.ListedGroup a = new ListGroupsResponseData.ListedGroup()
                    .setGroupId("orders").setProtocolType("consumer");
            ListGroupsResponseData.ListedGroup b = new ListGroupsResponseData.ListedGroup()
                    .setGroupId("connect-sink").setProtocolType("");
            if (v >= 4) {
                a.setGroupState("Stable");
                b.setGroupState("Empty");
            }
            if (v >= 5) {
                a.setGroupType("consumer");
                b.setGroupType("classic");
            }
            emit("list_groups", new ListGroupsResponseData().setThrottleTimeMs(v >= 1 ? 2 : 0)
                    .setErrorCode((short) 0).setGroups(List.of(a, b)), v);
            emit("list_groups_denied", new ListGroupsResponseData().setThrottleTimeMs(0)
                    .setErrorCode((short) 31).setGroups(List.of()), v);
        }
    }

    private void describeGroups() throws IOException {
        byte[] meta = new byte[] {0, 3, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's'};
        byte[] assignment = new byte[] {0, 3, 0, 0, 0, 0};
        for (short v = 0; v <= 6; v++) {
            DescribeGroupsRequestData req = new DescribeGroupsRequestData()
                    .setGroups(List.of("orders", "connect-sink"));
            if (v >= 3) {
                req.setIncludeAuthorizedOperations(false);
            }
            emit("describe_groups", req, v);
            DescribeGroupsResponseData.DescribedGroupMember m =
                    new DescribeGroupsResponseData.DescribedGroupMember()
                            .setMemberId("orders-app-1-5b7c").setClientId("orders-app")
                            .setClientHost("/127.0.0.1").setMemberMetadata(meta)
                            .setMemberAssignment(assignment);
            if (v >= 4) {
                m.setGroupInstanceId("orders-0");
            }
            DescribeGroupsResponseData.DescribedGroup stable =
                    new DescribeGroupsResponseData.DescribedGroup().setErrorCode((short) 0)
                            .setGroupId("orders").setGroupState("Stable")
                            .setProtocolType("consumer").setProtocolData("range")
                            .setMembers(List.of(m));
            DescribeGroupsResponseData.DescribedGroup other =
                    new DescribeGroupsResponseData.DescribedGroup().setErrorCode((short) 69)
                            .setGroupId("kip848").setGroupState("Dead").setProtocolType("")
                            .setProtocolData("").setMembers(List.of());
            if (v >= 3) {
                stable.setAuthorizedOperations(-2147483648);
                other.setAuthorizedOperations(-2147483648);
            }
            if (v >= 6) {
                other.setErrorMessage("Group kip848 is not a classic group.");
            }
            emit("describe_groups", new DescribeGroupsResponseData()
                    .setThrottleTimeMs(v >= 1 ? 4 : 0).setGroups(List.of(stable, other)), v);
        }
    }

    private static ConsumerGroupDescribeResponseData.Assignment cgAssignment(int... partitions) {
        List<Integer> ps = new ArrayList<>();
        for (int p : partitions) {
            ps.add(p);
        }
        return new ConsumerGroupDescribeResponseData.Assignment().setTopicPartitions(List.of(
                new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(TOPIC_ID)
                        .setTopicName("orders").setPartitions(ps)));
    }

    private void consumerGroupDescribe() throws IOException {
        for (short v = 0; v <= 1; v++) {
            emit("consumer_group_describe", new ConsumerGroupDescribeRequestData()
                    .setGroupIds(List.of("orders-848")).setIncludeAuthorizedOperations(false), v);
            ConsumerGroupDescribeResponseData.Member m =
                    new ConsumerGroupDescribeResponseData.Member().setMemberId("Qm9vbXpxLW1lbWJlcg")
                            .setInstanceId(null).setRackId("rack-a").setMemberEpoch(5)
                            .setClientId("orders-848-app").setClientHost("/127.0.0.1")
                            .setSubscribedTopicNames(List.of("orders"))
                            .setSubscribedTopicRegex(null).setAssignment(cgAssignment(0, 1))
                            .setTargetAssignment(cgAssignment(0, 1, 2));
            if (v >= 1) {
                m.setMemberType((byte) 1);
            }
            ConsumerGroupDescribeResponseData.Member bare =
                    new ConsumerGroupDescribeResponseData.Member().setMemberId("bare")
                            .setClientId("").setClientHost("");
            emit("consumer_group_describe", new ConsumerGroupDescribeResponseData()
                    .setThrottleTimeMs(0).setGroups(List.of(
                            new ConsumerGroupDescribeResponseData.DescribedGroup()
                                    .setErrorCode((short) 0).setErrorMessage(null)
                                    .setGroupId("orders-848").setGroupState("Stable")
                                    .setGroupEpoch(7).setAssignmentEpoch(7)
                                    .setAssignorName("uniform").setMembers(List.of(m, bare)),
                            new ConsumerGroupDescribeResponseData.DescribedGroup()
                                    .setErrorCode((short) 69)
                                    .setErrorMessage("Group orders is not a consumer group.")
                                    .setGroupId("orders").setGroupState("").setAssignorName("")
                                    .setMembers(List.of()))), v);
        }
    }

    private void describeConfigs() throws IOException {
        for (short v = 1; v <= 4; v++) {
            DescribeConfigsRequestData req = new DescribeConfigsRequestData()
                    .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource()
                            .setResourceType((byte) 4).setResourceName("1")
                            .setConfigurationKeys(List.of("client.quota.callback.class"))))
                    .setIncludeSynonyms(false);
            if (v >= 3) {
                req.setIncludeDocumentation(false);
            }
            emit("describe_configs_callback", req, v);
            emit("describe_configs_all", new DescribeConfigsRequestData()
                    .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource()
                            .setResourceType((byte) 4).setResourceName("").setConfigurationKeys(null)))
                    .setIncludeSynonyms(true), v);
            DescribeConfigsResponseData.DescribeConfigsResourceResult custom =
                    new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                            .setName("client.quota.callback.class")
                            .setValue("com.example.TenantQuotaCallback").setReadOnly(true)
                            .setConfigSource((byte) 4).setIsSensitive(false)
                            .setSynonyms(List.of(new DescribeConfigsResponseData.DescribeConfigsSynonym()
                                    .setName("client.quota.callback.class")
                                    .setValue("com.example.TenantQuotaCallback").setSource((byte) 4)));
            DescribeConfigsResponseData.DescribeConfigsResourceResult unset =
                    new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                            .setName("client.quota.callback.class").setValue(null).setReadOnly(true)
                            .setConfigSource((byte) 5).setIsSensitive(false)
                            .setSynonyms(List.of());
            if (v >= 3) {
                custom.setConfigType((byte) 8).setDocumentation(null);
                unset.setConfigType((byte) 8).setDocumentation("The fully qualified name of a class.");
            }
            emit("describe_configs_callback", new DescribeConfigsResponseData().setThrottleTimeMs(0)
                    .setResults(List.of(
                            new DescribeConfigsResponseData.DescribeConfigsResult()
                                    .setErrorCode((short) 0).setErrorMessage(null)
                                    .setResourceType((byte) 4).setResourceName("1")
                                    .setConfigs(List.of(custom)),
                            new DescribeConfigsResponseData.DescribeConfigsResult()
                                    .setErrorCode((short) 0).setErrorMessage(null)
                                    .setResourceType((byte) 4).setResourceName("2")
                                    .setConfigs(List.of(unset)))), v);
            emit("describe_configs_denied", new DescribeConfigsResponseData().setThrottleTimeMs(0)
                    .setResults(List.of(new DescribeConfigsResponseData.DescribeConfigsResult()
                            .setErrorCode((short) 31).setErrorMessage("Cluster authorization failed.")
                            .setResourceType((byte) 4).setResourceName("1")
                            .setConfigs(List.of()))), v);
        }
    }

    // ---- headers -----------------------------------------------------------------------------

    private void headers() throws IOException {
        for (short v = 1; v <= 2; v++) {
            emit("header", new RequestHeaderData().setRequestApiKey((short) 48)
                    .setRequestApiVersion((short) 1).setCorrelationId(7).setClientId("kquota"), v);
            emit("header_null_client_id", new RequestHeaderData().setRequestApiKey((short) 18)
                    .setRequestApiVersion((short) 3).setCorrelationId(-2).setClientId(null), v);
        }
        for (short v = 0; v <= 1; v++) {
            emit("header", new ResponseHeaderData().setCorrelationId(2147483647), v);
        }
    }

    // ---- whole frames: header + body, header version chosen by the Java client ----------------

    private void frames() throws IOException {
        String clientId = "kquota";
        int corr = 100;
        for (short v = 0; v <= 1; v++) {
            requestFrame(ApiKeys.DESCRIBE_CLIENT_QUOTAS, v, corr++, clientId,
                    new DescribeClientQuotasRequestData()
                            .setComponents(List.of(component("user", 0, "alice"))).setStrict(true));
            requestFrame(ApiKeys.ALTER_CLIENT_QUOTAS, v, corr++, clientId,
                    new AlterClientQuotasRequestData().setEntries(List.of(alterEntry(
                            List.of(alterEntity("user", null)),
                            List.of(set("producer_byte_rate", 1024.0))))).setValidateOnly(true));
            responseFrame(ApiKeys.DESCRIBE_CLIENT_QUOTAS, v, corr++, describeResponse());
        }
        for (short v = 0; v <= 4; v++) {
            ApiVersionsRequestData req = new ApiVersionsRequestData();
            if (v >= 3) {
                req.setClientSoftwareName("kquota").setClientSoftwareVersion("0.1.0");
            }
            requestFrame(ApiKeys.API_VERSIONS, v, corr++, clientId, req);
            ApiVersionsResponseData resp = new ApiVersionsResponseData()
                    .setApiKeys(apiKeys(new int[][] {{48, 0, 1}, {49, 0, 1}}));
            if (v >= 3) {
                resp.setSupportedFeatures(supported());
            }
            responseFrame(ApiKeys.API_VERSIONS, v, corr++, resp);
        }
        requestFrame(ApiKeys.SASL_HANDSHAKE, (short) 1, corr++, null,
                new SaslHandshakeRequestData().setMechanism("PLAIN"));
        for (short v = 0; v <= 2; v++) {
            requestFrame(ApiKeys.SASL_AUTHENTICATE, v, corr++, clientId,
                    new SaslAuthenticateRequestData()
                            .setAuthBytes("\0alice\0pw".getBytes(StandardCharsets.UTF_8)));
            SaslAuthenticateResponseData ok = new SaslAuthenticateResponseData()
                    .setAuthBytes(new byte[0]);
            if (v >= 1) {
                ok.setSessionLifetimeMs(60_000L);
            }
            responseFrame(ApiKeys.SASL_AUTHENTICATE, v, corr++, ok);
        }
        for (short v : new short[] {8, 9, 13}) {
            requestFrame(ApiKeys.METADATA, v, corr++, clientId,
                    new MetadataRequestData().setTopics(new ArrayList<>())
                            .setAllowAutoTopicCreation(false));
        }
    }

    private void requestFrame(ApiKeys api, short v, int corr, String clientId, Message body)
            throws IOException {
        short hv = api.requestHeaderVersion(v);
        RequestHeaderData h = new RequestHeaderData().setRequestApiKey(api.id)
                .setRequestApiVersion(v).setCorrelationId(corr).setClientId(clientId);
        byte[] bytes = toArray(RequestUtils.serialize(h, hv, body, v));
        ObjectNode extra = F.objectNode();
        extra.put("frame", "request");
        extra.put("api_key", api.id);
        extra.put("header_version", hv);
        extra.put("correlation_id", corr);
        extra.put("client_id", clientId);
        write("frame_" + messageName(body) + "_v" + v, body, v, bytes, extra);
    }

    private void responseFrame(ApiKeys api, short v, int corr, Message body) throws IOException {
        short hv = api.responseHeaderVersion(v);
        ResponseHeaderData h = new ResponseHeaderData().setCorrelationId(corr);
        byte[] bytes = toArray(RequestUtils.serialize(h, hv, body, v));
        ObjectNode extra = F.objectNode();
        extra.put("frame", "response");
        extra.put("api_key", api.id);
        extra.put("header_version", hv);
        extra.put("correlation_id", corr);
        write("frame_" + messageName(body) + "_v" + v, body, v, bytes, extra);
    }

    // ---- serialisation and JSON --------------------------------------------------------------

    private static String messageName(Message m) {
        String n = m.getClass().getSimpleName();
        return n.endsWith("Data") ? n.substring(0, n.length() - 4) : n;
    }

    private static byte[] toArray(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    private static byte[] serialize(Message m, short v) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = m.size(cache, v);
        ByteBuffer buf = ByteBuffer.allocate(size);
        m.write(new ByteBufferAccessor(buf), cache, v);
        if (buf.hasRemaining()) {
            throw new IllegalStateException("size() and write() disagree for " + messageName(m));
        }
        buf.flip();
        return toArray(buf);
    }

    private void emit(String label, Message m, short v) throws IOException {
        write(messageName(m) + "_v" + v + "_" + label, m, v, serialize(m, v), null);
    }

    private void write(String name, Message m, short v, byte[] bytes, ObjectNode extra)
            throws IOException {
        if (names.contains(name)) {
            throw new IllegalStateException("duplicate case " + name);
        }
        names.add(name);
        ObjectNode doc = F.objectNode();
        doc.put("message", messageName(m));
        doc.put("version", v);
        if (extra != null) {
            doc.setAll(extra);
        }
        doc.set("body", body(m, v));
        Files.write(out.resolve(name + ".bin"), bytes);
        Files.writeString(out.resolve(name + ".json"),
                MAPPER.writeValueAsString(doc) + "\n", StandardCharsets.UTF_8);
    }

    /** body converts with the client's JsonConverter, then renames and wraps (see class doc). */
    private static JsonNode body(Message m, short v) {
        JsonNode raw;
        try {
            Class<?> conv = Class.forName(m.getClass().getName() + "JsonConverter");
            raw = (JsonNode) conv.getMethod("write", m.getClass(), short.class).invoke(null, m, v);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        ObjectNode body = (ObjectNode) translate(raw);
        // The converter leaves out tagged fields that hold their default; a decoder yields the
        // default, so put them back (from the Java object itself) to keep the body complete.
        if (m instanceof ApiVersionsResponseData a && v >= 3) {
            ObjectNode full = F.objectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                full.set(e.getKey(), e.getValue());
            }
            if (!full.has("SupportedFeatures")) {
                full.set("SupportedFeatures", F.arrayNode());
            }
            if (!full.has("FinalizedFeaturesEpoch")) {
                full.put("FinalizedFeaturesEpoch", a.finalizedFeaturesEpoch());
            }
            if (!full.has("FinalizedFeatures")) {
                full.set("FinalizedFeatures", F.arrayNode());
            }
            if (!full.has("ZkMigrationReady")) {
                full.put("ZkMigrationReady", a.zkMigrationReady());
            }
            return full;
        }
        return body;
    }

    private static JsonNode translate(JsonNode n) {
        if (n.isObject()) {
            ObjectNode o = F.objectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String k = e.getKey();
                o.set(Character.toUpperCase(k.charAt(0)) + k.substring(1), translate(e.getValue()));
            }
            return o;
        }
        if (n.isArray()) {
            ArrayNode a = F.arrayNode();
            for (JsonNode c : n) {
                a.add(translate(c));
            }
            return a;
        }
        if (n.isDouble() || n.isFloat()) {
            ObjectNode o = F.objectNode();
            o.put("float64_bits",
                    String.format("%016x", Double.doubleToRawLongBits(n.doubleValue())));
            return o;
        }
        if (n.isBinary()) {
            ObjectNode o = F.objectNode();
            try {
                o.put("bytes_hex", HEX.formatHex(n.binaryValue()));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return o;
        }
        return n;
    }
}
