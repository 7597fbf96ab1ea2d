// One measured run (see ExchangeCoreThroughput.java for the method, the
// journal and the pipeline): a fresh core and journal directory, the set-up,
// a publisher thread, the measured window, the drain and the shutdown.

import exchange.core2.core.ExchangeApi;
import exchange.core2.core.ExchangeCore;
import exchange.core2.core.common.CoreSymbolSpecification;
import exchange.core2.core.common.OrderAction;
import exchange.core2.core.common.OrderType;
import exchange.core2.core.common.config.ExchangeConfiguration;
import exchange.core2.core.common.config.InitialStateConfiguration;
import exchange.core2.core.common.config.PerformanceConfiguration;
import exchange.core2.core.common.config.SerializationConfiguration;
import exchange.core2.core.processors.journaling.DiskSerializationProcessor;
import exchange.core2.core.processors.journaling.DiskSerializationProcessorConfiguration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

final class ThroughputRun {

  static RunResult runOnce(Options o, int runIndex) throws Exception {
    final Path journalDir = Files.createTempDirectory(o.dir, "exchange-core-journal-");
    final Results results = new Results();
    final List<CoreSymbolSpecification> specs = OrderFlow.symbols(o.symbols);

    final PerformanceConfiguration perf =
        (o.latencyProfile ? PerformanceConfiguration.latencyPerformanceBuilder() : PerformanceConfiguration.throughputPerformanceBuilder())
            .ringBufferSize(o.ringSize)
            .matchingEnginesNum(1)
            .riskEnginesNum(1)
            .msgsInGroupLimit(o.groupLimit)
            .threadFactory(r -> new Thread(r, "exchange-core-stage"))
            .waitStrategy(o.wait)
            .build();
    final DiskSerializationProcessorConfiguration diskCfg =
        DiskSerializationProcessorConfiguration.builder()
            .storageFolder(journalDir.toString())
            .snapshotLz4CompressorFactory(DiskSerializationProcessorConfiguration.LZ4_FAST)
            .journalFileMaxSize(4L * 1000 * 1024 * 1024)
            .journalBufferSize(256 * 1024)
            .journalBatchCompressThreshold(2048)
            .journalLz4CompressorFactory(DiskSerializationProcessorConfiguration.LZ4_FAST)
            .build();
    final SerializationConfiguration serialization =
        o.journal
            ? SerializationConfiguration.builder()
                .enableJournaling(true)
                .serializationProcessorFactory(cfg -> new DiskSerializationProcessor(cfg, diskCfg))
                .build()
            : SerializationConfiguration.DEFAULT;
    final String exchangeId = "NT" + ProcessHandle.current().pid() + "R" + runIndex;
    final ExchangeConfiguration cfg =
        ExchangeConfiguration.defaultBuilder()
            .performanceCfg(perf)
            .initStateCfg(
                o.journal ? InitialStateConfiguration.cleanStartJournaling(exchangeId) : InitialStateConfiguration.cleanStart(exchangeId))
            .serializationCfg(serialization)
            .build();

    final ExchangeCore core = ExchangeCore.builder().resultsConsumer((cmd, seq) -> results.accept(cmd)).exchangeConfiguration(cfg).build();
    core.startup();
    final RunResult rr = new RunResult();
    try {
      OrderFlow.setUp(core, o, specs);
      final long baseAnswers = results.orderAnswers.get();
      final ExchangeApi api = core.getApi();

      final AtomicLong publishedCount = new AtomicLong();
      final Thread publisher =
          new Thread(
              () -> {
                final int nSym = specs.size();
                final long ratePeriodNs = o.rate > 0 ? Math.max(1, 1_000_000_000L / o.rate) : 0;
                final double exactPeriod = o.rate > 0 ? 1e9 / o.rate : 0;
                final long t0 = System.nanoTime();
                long k = 0; // command index: even = NewOrder of order k/2, odd = its CancelOrder
                while (!Thread.currentThread().isInterrupted()) {
                  long ts;
                  if (ratePeriodNs > 0) {
                    final long due = t0 + (long) (k * exactPeriod);
                    // Wait without holding a core: on 2 vCPUs a spinning
                    // publisher would leave one core to the six stages.
                    // Park when the next command is far off, yield (let a
                    // stage run) when it is near.
                    for (long now = System.nanoTime(); now < due; now = System.nanoTime()) {
                      if (due - now > 200_000) java.util.concurrent.locks.LockSupport.parkNanos(due - now - 100_000);
                      else Thread.yield();
                    }
                    ts = due;
                  } else {
                    ts = System.nanoTime();
                  }
                  // Our bench's flow control: wait (letting a stage run)
                  // while the window is full.
                  if (o.window > 0) {
                    while (k - (results.orderAnswers.get() - baseAnswers) >= o.window) Thread.yield();
                  }
                  final long n = k >>> 1;
                  final long orderId = OrderFlow.FLOW_ORDER_ID_BASE + n;
                  final int symbol = specs.get((int) (n % nSym)).symbolId;
                  final long uid = 1 + (n % o.users);
                  if ((k & 1) == 0) {
                    final boolean bid = (n & 1) == 0;
                    final long p = OrderFlow.price(n, bid);
                    api.placeNewOrder(0, 0, ts, orderId, 0, p, p, 1 + n % 10, bid ? OrderAction.BID : OrderAction.ASK, OrderType.GTC, symbol, uid);
                  } else {
                    api.cancelOrder(0, 0, ts, orderId, symbol, uid);
                  }
                  k++;
                  publishedCount.lazySet(k);
                }
              },
              "publisher");

      final long warmNs = (long) (o.warmupS * 1e9);
      final long measureNs = (long) (o.measureS * 1e9);
      publisher.start();
      Thread.sleep(warmNs / 1_000_000, (int) (warmNs % 1_000_000));
      final long[] gc0 = MachineUsage.gcTotals();
      final long[] m0 = MachineUsage.machineTicks();
      final long p0 = MachineUsage.processCpuNs();
      results.recording = o.latency;
      long t = System.nanoTime();
      long a = results.orderAnswers.get();
      final long tStart = t, aStart = a;
      double secMin = Double.MAX_VALUE, secMax = 0;
      final long end = tStart + measureNs;
      // Per-second rates inside the window: a stall (GC, a slow journal write)
      // shows as a low second even when the average hides it.
      while (true) {
        final long next = Math.min(end, t + 1_000_000_000L);
        final long sleep = next - System.nanoTime();
        if (sleep > 0) Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
        final long t2 = System.nanoTime();
        final long a2 = results.orderAnswers.get();
        if (t2 - t >= 500_000_000L) {
          final double r = (a2 - a) * 1e9 / (t2 - t);
          secMin = Math.min(secMin, r);
          secMax = Math.max(secMax, r);
        }
        t = t2;
        a = a2;
        if (t2 >= end) break;
      }
      results.recording = false;
      final long[] gc1 = MachineUsage.gcTotals();
      final long[] m1 = MachineUsage.machineTicks();
      final long p1 = MachineUsage.processCpuNs();
      publisher.interrupt();
      publisher.join();
      final long published = publishedCount.get();
      // Drain: every published command must be answered, or a stage lost it.
      final long drainDeadline = System.nanoTime() + 30_000_000_000L;
      while (results.orderAnswers.get() - baseAnswers < published) {
        if (System.nanoTime() > drainDeadline) {
          throw new IllegalStateException(
              "only " + (results.orderAnswers.get() - baseAnswers) + " of " + published + " published commands were answered");
        }
        Thread.sleep(1);
      }
      if (results.failures.get() > 0) {
        throw new IllegalStateException(results.failures.get() + " order commands failed; first: " + results.firstFailure);
      }
      rr.commandsMeasured = a - aStart;
      rr.cmdsPerS = rr.commandsMeasured * 1e9 / (t - tStart);
      rr.perSecondMin = secMin == Double.MAX_VALUE ? rr.cmdsPerS : secMin;
      rr.perSecondMax = secMax == 0 ? rr.cmdsPerS : secMax;
      rr.latency = results.latency;
      rr.published = published;
      rr.gcCount = gc1[0] - gc0[0];
      rr.gcMs = gc1[1] - gc0[1];
      final int ncpu = Runtime.getRuntime().availableProcessors();
      final double windowS = (t - tStart) / 1e9;
      final double busyCores = m1[1] > m0[1] ? (double) (m1[0] - m0[0]) / (m1[1] - m0[1]) * ncpu : 0;
      rr.cpuOurs = (p1 - p0) / 1e9 / windowS;
      rr.cpuOthers = Math.max(0, busyCores - rr.cpuOurs);
    } finally {
      core.shutdown(3000, TimeUnit.MILLISECONDS);
      long bytes = 0, files = 0;
      try (Stream<Path> s = Files.walk(journalDir)) {
        for (Path p : (Iterable<Path>) s::iterator) {
          if (Files.isRegularFile(p) && p.getFileName().toString().contains("journal")) {
            bytes += Files.size(p);
            files++;
          }
        }
      }
      rr.journalBytes = bytes;
      rr.journalFiles = files;
      deleteTree(journalDir);
    }
    if (o.journal && rr.journalBytes == 0) throw new IllegalStateException("journal on but no journal file was written in " + journalDir);
    return rr;
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }

  private ThroughputRun() {}
}
