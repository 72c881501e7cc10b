package kquota.bench;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;

/**
 * DescribeAll describes every client quota with Kafka's AdminClient and prints one line per
 * entity (entity map, then quota map), so that it does the same work as
 * {@code kquota describe --format json}: fetch, decode, and write everything out.
 *
 * <p>Usage: {@code DescribeAll <bootstrap-servers> [<timeout-ms>]}: the timeout, when given,
 * is the request and API timeout (a million entities can take a loaded broker over 30 s).
 */
public final class DescribeAll {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kquota-bench-java");
    if (args.length > 1) {
      props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, args[1]);
      props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, args[1]);
    }
    try (Admin admin = Admin.create(props);
        BufferedWriter out =
            new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16)) {
      Map<ClientQuotaEntity, Map<String, Double>> quotas =
          admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get();
      for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : quotas.entrySet()) {
        out.write(e.getKey().entries().toString());
        out.write(' ');
        out.write(e.getValue().toString());
        out.write('\n');
      }
      out.flush();
      System.err.println("entities=" + quotas.size());
    }
  }
}
