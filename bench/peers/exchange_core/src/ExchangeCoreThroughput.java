// exchange-core (Maven Central exchange.core2:exchange-core) measured on this
// machine for scale beside our venue (issue 31), with its disk journal on.
//
// The method is exchange-core's own throughput test (ThroughputTestsModule with
// the configuration of PerfThroughputJournaling): the test thread publishes
// commands into the core's Disruptor ring as fast as the ring takes them, and
// throughput is the number of commands the core has answered (its results
// consumer has seen) per second. Written here against the artifact's public
// API only; none of its test code is used. What differs from their test:
//  - a sustained window: commands are published for warm-up + measured
//    seconds and the answers counted inside the measured window, instead of a
//    fixed pre-generated list timed from first publish to last answer; so a
//    slow start (JIT, page faults of a fresh journal file) is left out and a
//    per-second minimum and maximum can be printed;
//  - the order flow is ours (bench/exchange/order_entry_bench.cpp, sustained
//    load): NewOrder (GTC, resting, never crossing) then the CancelOrder of
//    that order, alternating, on a few symbols, over a book prefilled with
//    resting orders like their TestDataParameters' "pending limit orders";
//    their generator's mix (IOC, move, reduce, trades) is not reproduced;
//  - commands are published with ExchangeApi's primitive placeNewOrder /
//    cancelOrder (no ApiCommand object per command) because on 2 vCPUs the
//    publisher shares the cores with the pipeline;
//  - plain threads instead of their AffinityThreadFactory (one core per stage
//    is impossible here: the pipeline alone has six threads, see below) and a
//    selectable wait strategy (theirs is BUSY_SPIN, 12-thread machines).
//
// Journalling: SerializationConfiguration with enableJournaling = true and
// DiskSerializationProcessor (what SerializationConfiguration.DISK_JOURNALING
// uses) with its default configuration except the folder, a fresh directory
// under --dir per run. In 0.5.3 the journal stage (J) runs in parallel with
// the risk and matching stages, writes a batch of records per Disruptor batch
// (LZ4-compressed above 2 KiB) through a RandomAccessFile opened "rwd"
// (each write synchronous to the device, O_DSYNC), and the results stage waits
// for J: an answer is seen only after its record's write has returned.
//
// Pipeline threads (1 risk engine, 1 matching engine): grouping, journal,
// risk pre-hold, matching, risk release, results: six, plus the publisher,
// on two vCPUs.
//
// Latency (when --latency on): for each order command answered inside the
// measured window, System.nanoTime() at its answer minus the timestamp it was
// published with (the time it was due, with --rate; the time of publishing
// when flooding, which is then mostly queueing in the ring: Little's law).
// --rate with --profile latency is the set-up of their PerfLatencyJournaling
// (latencyPerformanceBuilder: groups closed after 10 us or 256 commands);
// the default profile is their throughput one (4 ms or 1536 commands).
//
// Prints progress on stderr and one JSON line with every run on stdout.

import exchange.core2.core.ExchangeCore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

public final class ExchangeCoreThroughput {

  private static String fmt(double x) {
    return String.format(Locale.ROOT, "%.0f", x);
  }

  public static void main(String[] args) throws Exception {
    final Options o = Options.parse(args);
    final String version = artifactVersion();
    System.err.printf(
        Locale.ROOT,
        "exchange-core %s: %d runs, %.1f s warm-up + %.1f s measured, %d symbols, %d users, %d resting orders/symbol, "
            + "wait %s, journal %s, %s, %s profile, ring %d, group limit %d, window %s, journal dir under %s%n",
        version, o.runs, o.warmupS, o.measureS, o.symbols, o.users, o.prefillPerSymbol, o.wait, o.journal ? "on" : "off",
        o.rate == 0 ? "flood" : o.rate + " cmds/s", o.latencyProfile ? "latency" : "throughput", o.ringSize, o.groupLimit, o.window == 0 ? "ring" : String.valueOf(o.window), o.dir);
    final List<RunResult> runs = new ArrayList<>();
    for (int i = 0; i < o.runs; i++) {
      final RunResult r = ThroughputRun.runOnce(o, i);
      runs.add(r);
      System.err.printf(
          Locale.ROOT,
          "run %d/%d: %s cmds/s (per second %s-%s), p50 %d ns p99 %d ns p99.9 %d ns max %d ns, journal %.1f MB (%.1f B/cmd), GC %d (%d ms), CPU ours %.2f others %.2f cores%n",
          i + 1, o.runs, fmt(r.cmdsPerS), fmt(r.perSecondMin), fmt(r.perSecondMax), r.latency.getValueAtPercentile(50),
          r.latency.getValueAtPercentile(99), r.latency.getValueAtPercentile(99.9), r.latency.getMaxValue(), r.journalBytes / 1e6,
          r.published > 0 ? (double) r.journalBytes / r.published : 0, r.gcCount, r.gcMs, r.cpuOurs, r.cpuOthers);
    }
    final double[] rates = runs.stream().mapToDouble(r -> r.cmdsPerS).sorted().toArray();
    final StringBuilder json = new StringBuilder();
    json.append("{\"peer\":\"exchange-core\",\"artifact\":\"exchange.core2:exchange-core:").append(version).append('"');
    json.append(",\"java\":\"").append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.runtime.version")).append('"');
    json.append(",\"cpus\":").append(Runtime.getRuntime().availableProcessors());
    json.append(",\"method\":\"NewOrder+CancelOrder published into ExchangeApi (flood, or --rate/--window), answers counted in the measured window\"");
    json.append(",\"config\":{\"journal\":").append(o.journal)
        .append(",\"journal_writer\":\"DiskSerializationProcessor, RandomAccessFile rwd, batch per Disruptor batch, results wait for it\"")
        .append(",\"wait\":\"").append(o.wait).append('"')
        .append(",\"profile\":\"").append(o.latencyProfile ? "latency" : "throughput").append('"')
        .append(",\"ring\":").append(o.ringSize)
        .append(",\"group_limit\":").append(o.groupLimit)
        .append(",\"matching_engines\":1,\"risk_engines\":1")
        .append(",\"symbols\":").append(o.symbols)
        .append(",\"users\":").append(o.users)
        .append(",\"prefill_per_symbol\":").append(o.prefillPerSymbol)
        .append(",\"rate\":").append(o.rate)
        .append(",\"window\":").append(o.window)
        .append(",\"warmup_s\":").append(o.warmupS)
        .append(",\"measure_s\":").append(o.measureS).append('}');
    json.append(",\"runs\":[");
    for (int i = 0; i < runs.size(); i++) {
      final RunResult r = runs.get(i);
      if (i > 0) json.append(',');
      json.append("{\"cmds_per_s\":").append(fmt(r.cmdsPerS))
          .append(",\"per_second_min\":").append(fmt(r.perSecondMin))
          .append(",\"per_second_max\":").append(fmt(r.perSecondMax))
          .append(",\"commands_measured\":").append(r.commandsMeasured)
          .append(",\"journal_bytes\":").append(r.journalBytes)
          .append(",\"journal_files\":").append(r.journalFiles)
          .append(",\"gc_count\":").append(r.gcCount)
          .append(",\"gc_ms\":").append(r.gcMs)
          .append(",\"cpu_cores_ours\":").append(String.format(Locale.ROOT, "%.2f", r.cpuOurs))
          .append(",\"cpu_cores_others\":").append(String.format(Locale.ROOT, "%.2f", r.cpuOthers));
      if (o.latency) {
        json.append(",\"latency_ns\":{\"p50\":").append(r.latency.getValueAtPercentile(50))
            .append(",\"p90\":").append(r.latency.getValueAtPercentile(90))
            .append(",\"p99\":").append(r.latency.getValueAtPercentile(99))
            .append(",\"p99_9\":").append(r.latency.getValueAtPercentile(99.9))
            .append(",\"max\":").append(r.latency.getMaxValue()).append('}');
      }
      json.append('}');
    }
    json.append("],\"cmds_per_s_min\":").append(fmt(rates[0]))
        .append(",\"cmds_per_s_median\":").append(fmt(rates[rates.length / 2]))
        .append(",\"cmds_per_s_max\":").append(fmt(rates[rates.length - 1])).append('}');
    System.out.println(json);
    System.out.flush();
    // The Disruptor's stage threads are not daemons; shutdown() stops them,
    // but a stage stuck in a wait must not keep the bench alive.
    System.exit(0);
  }

  // The jar's manifest has no Implementation-Version; Maven's pom.properties
  // inside it says which release is on the classpath.
  private static String artifactVersion() throws IOException {
    try (var in = ExchangeCore.class.getResourceAsStream("/META-INF/maven/exchange.core2/exchange-core/pom.properties")) {
      if (in == null) return "unknown";
      final java.util.Properties p = new java.util.Properties();
      p.load(in);
      return p.getProperty("version", "unknown");
    }
  }

  private ExchangeCoreThroughput() {}
}
