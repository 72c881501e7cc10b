package kquota.bench;

import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.clients.admin.AlterClientQuotasResult;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

/**
 * AlterAll applies a batch of client quota alterations with Kafka's AdminClient: the Java side
 * of {@code benchmarks/bench_apply.py}.
 *
 * <p>The batch file has one entity a line: {@code type=name;type=name<TAB>key=value;key=value}.
 *
 * <p>{@code Admin.alterClientQuotas} sends everything it is given in ONE AlterClientQuotas
 * request, and the KRaft controller fails every entry of a request that changes more than
 * 10,000 keys (POLICY_VIOLATION). So this program chunks the batch itself, as kquota does:
 * whole entities, at most {@code chunkKeys} changed keys per call (0 = one call for the whole
 * batch, to show the limit). Every chunk is submitted at once and the AdminClient works them
 * off; then every entity's future is checked. Modes:
 *
 * <ul>
 *   <li>{@code commit}: one committing pass;
 *   <li>{@code validate-commit}: a {@code validateOnly(true)} pass over every chunk first; if any
 *       entity fails it, nothing is committed (what kquota apply does); then the committing pass.
 *   <li>{@code validate-commit-verify}: then waits until the cluster shows every entity with its
 *       values, as kquota apply verifies: the last entity written is read by an exact filter
 *       (sleeping 20 ms, doubling up to 250 ms) until it shows, then every entity is read with
 *       describe-all until all show (250 ms apart). A broker acknowledges a write when the
 *       controller has committed it, before it serves it, so this is the like-for-like peer of
 *       a whole kquota apply's wire work.
 *   <li>{@code validate-commit-poll}: validate-only and commit as above, then describe-all every
 *       100 ms (sleeping 100 ms after each answer that does not show everything) until every
 *       entity shows with its values: the simplest complete wait a client can do, and the peer
 *       issue 22 names.
 * </ul>
 *
 * <p>Every pass prints its own clock ({@code ms=}); {@code phase NAME START END} lines give each
 * phase's wall clock in epoch milliseconds (the JVM's start, reading the batch, creating the
 * AdminClient, each pass, closing), so a benchmark can set them beside its own.
 *
 * <p>Exits 1 if any entity failed. Usage: {@code AlterAll <bootstrap> <batch.tsv> <mode>
 * [chunkKeys]}
 */
public final class AlterAll {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    Path batchFile = Path.of(args[1]);
    String mode = args[2];
    int chunkKeys = args.length > 3 ? Integer.parseInt(args[3]) : 5000;
    if (!List.of("commit", "validate-commit", "validate-commit-verify", "validate-commit-poll")
        .contains(mode)) {
      throw new IllegalArgumentException(
          "mode must be commit, validate-commit, validate-commit-verify or validate-commit-poll: "
              + mode);
    }
    long mainAt = System.currentTimeMillis();
    phase("jvm start-up", ManagementFactory.getRuntimeMXBean().getStartTime(), mainAt);

    List<List<ClientQuotaAlteration>> chunks = readChunks(batchFile, chunkKeys);
    long readAt = System.currentTimeMillis();
    phase("read the batch", mainAt, readAt);
    int entities = chunks.stream().mapToInt(List::size).sum();

    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kquota-bench-java");
    // Every chunk is queued at once; the last one's deadline runs from its submission.
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "600000");
    long closeAt;
    try (Admin admin = Admin.create(props)) {
      long at = System.currentTimeMillis();
      phase("create the AdminClient", readAt, at);
      if (mode.startsWith("validate-commit")) {
        long began = System.nanoTime();
        int failed = pass(admin, chunks, true);
        at = phase("validate-only pass", at, System.currentTimeMillis());
        System.err.println(
            "validated=" + (entities - failed) + " failed=" + failed + " ms=" + msSince(began));
        if (failed > 0) {
          System.exit(1);
        }
      }
      long began = System.nanoTime();
      int failed = pass(admin, chunks, false);
      at = phase("commit pass", at, System.currentTimeMillis());
      System.err.println(
          "committed=" + (entities - failed) + " failed=" + failed + " chunks=" + chunks.size()
              + " ms=" + msSince(began));
      if (failed > 0) {
        System.exit(1);
      }
      if (mode.equals("validate-commit-verify")) {
        began = System.nanoTime();
        int polls = verify(admin, chunks);
        System.err.println("verified=" + entities + " polls=" + polls + " ms=" + msSince(began));
        at = phase("verify", at, System.currentTimeMillis());
      } else if (mode.equals("validate-commit-poll")) {
        began = System.nanoTime();
        int polls = poll(admin, expected(chunks), 100);
        System.err.println("verified=" + entities + " polls=" + polls + " ms=" + msSince(began));
        at = phase("verify", at, System.currentTimeMillis());
      }
      closeAt = at;
    }
    phase("close", closeAt, System.currentTimeMillis());
  }

  private static long phase(String name, long start, long end) {
    System.err.println("phase " + name.replace(' ', '_') + " " + start + " " + end);
    return end;
  }

  private static Map<ClientQuotaEntity, Map<String, Double>> expected(
      List<List<ClientQuotaAlteration>> chunks) {
    Map<ClientQuotaEntity, Map<String, Double>> expected = new HashMap<>();
    for (List<ClientQuotaAlteration> chunk : chunks) {
      for (ClientQuotaAlteration a : chunk) {
        Map<String, Double> values = new HashMap<>();
        for (ClientQuotaAlteration.Op op : a.ops()) {
          values.put(op.key(), op.value());
        }
        expected.put(a.entity(), values);
      }
    }
    return expected;
  }

  /** poll reads everything every intervalMs until every entity shows; returns the reads made. */
  private static int poll(
      Admin admin, Map<ClientQuotaEntity, Map<String, Double>> expected, long intervalMs)
      throws Exception {
    int reads = 0;
    while (true) {
      reads++;
      Map<ClientQuotaEntity, Map<String, Double>> seen =
          admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get();
      boolean all = true;
      for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : expected.entrySet()) {
        if (!e.getValue().equals(seen.get(e.getKey()))) {
          all = false;
          break;
        }
      }
      if (all) {
        return reads;
      }
      Thread.sleep(intervalMs);
    }
  }

  /** verify waits until describe shows every alteration's values; returns the reads made. */
  private static int verify(Admin admin, List<List<ClientQuotaAlteration>> chunks)
      throws Exception {
    Map<ClientQuotaEntity, Map<String, Double>> expected = expected(chunks);
    ClientQuotaAlteration last = null;
    for (List<ClientQuotaAlteration> chunk : chunks) {
      if (!chunk.isEmpty()) {
        last = chunk.get(chunk.size() - 1);
      }
    }
    if (last == null) {
      return 0;
    }
    int reads = 0;
    long sleepMs = 20;
    List<ClientQuotaFilterComponent> exact = new ArrayList<>();
    for (Map.Entry<String, String> part : last.entity().entries().entrySet()) {
      exact.add(
          part.getValue() == null
              ? ClientQuotaFilterComponent.ofDefaultEntity(part.getKey())
              : ClientQuotaFilterComponent.ofEntity(part.getKey(), part.getValue()));
    }
    ClientQuotaFilter lastOnly = ClientQuotaFilter.containsOnly(exact);
    while (true) {
      reads++;
      Map<ClientQuotaEntity, Map<String, Double>> seen =
          admin.describeClientQuotas(lastOnly).entities().get();
      if (expected.get(last.entity()).equals(seen.get(last.entity()))) {
        break;
      }
      Thread.sleep(sleepMs);
      sleepMs = Math.min(sleepMs * 2, 250);
    }
    return reads + poll(admin, expected, 250);
  }

  private static long msSince(long began) {
    return (System.nanoTime() - began) / 1_000_000;
  }

  /** pass sends every chunk, then waits for every entity; returns the number that failed. */
  private static int pass(Admin admin, List<List<ClientQuotaAlteration>> chunks, boolean validate)
      throws InterruptedException {
    AlterClientQuotasOptions options = new AlterClientQuotasOptions().validateOnly(validate);
    List<AlterClientQuotasResult> results = new ArrayList<>(chunks.size());
    for (List<ClientQuotaAlteration> chunk : chunks) {
      results.add(admin.alterClientQuotas(chunk, options));
    }
    int failed = 0;
    for (AlterClientQuotasResult result : results) {
      for (Map.Entry<ClientQuotaEntity, KafkaFuture<Void>> e : result.values().entrySet()) {
        try {
          e.getValue().get();
        } catch (ExecutionException ex) {
          if (failed < 5) {
            System.err.println("failed " + e.getKey() + ": " + ex.getCause());
          }
          failed++;
        }
      }
    }
    return failed;
  }

  private static List<List<ClientQuotaAlteration>> readChunks(Path file, int chunkKeys)
      throws Exception {
    List<List<ClientQuotaAlteration>> chunks = new ArrayList<>();
    List<ClientQuotaAlteration> current = new ArrayList<>();
    int keys = 0;
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) {
          continue;
        }
        String[] cols = line.split("\t", 2);
        Map<String, String> entity = new HashMap<>();
        for (String part : cols[0].split(";")) {
          int eq = part.indexOf('=');
          entity.put(part.substring(0, eq), part.substring(eq + 1));
        }
        List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
        for (String op : cols[1].split(";")) {
          int eq = op.indexOf('=');
          ops.add(
              new ClientQuotaAlteration.Op(
                  op.substring(0, eq), Double.parseDouble(op.substring(eq + 1))));
        }
        if (chunkKeys > 0 && !current.isEmpty() && keys + ops.size() > chunkKeys) {
          chunks.add(current);
          current = new ArrayList<>();
          keys = 0;
        }
        current.add(new ClientQuotaAlteration(new ClientQuotaEntity(entity), ops));
        keys += ops.size();
      }
    }
    if (!current.isEmpty()) {
      chunks.add(current);
    }
    return chunks;
  }
}
