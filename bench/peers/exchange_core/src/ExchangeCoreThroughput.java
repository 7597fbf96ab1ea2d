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

import exchange.core2.core.ExchangeApi;
import exchange.core2.core.ExchangeCore;
import exchange.core2.core.common.CoreSymbolSpecification;
import exchange.core2.core.common.CoreWaitStrategy;
import exchange.core2.core.common.OrderAction;
import exchange.core2.core.common.OrderType;
import exchange.core2.core.common.SymbolType;
import exchange.core2.core.common.api.ApiAddUser;
import exchange.core2.core.common.api.ApiAdjustUserBalance;
import exchange.core2.core.common.api.ApiCommand;
import exchange.core2.core.common.api.ApiPlaceOrder;
import exchange.core2.core.common.api.binary.BatchAddSymbolsCommand;
import exchange.core2.core.common.cmd.CommandResultCode;
import exchange.core2.core.common.cmd.OrderCommand;
import exchange.core2.core.common.cmd.OrderCommandType;
import exchange.core2.core.common.config.ExchangeConfiguration;
import exchange.core2.core.common.config.InitialStateConfiguration;
import exchange.core2.core.common.config.PerformanceConfiguration;
import exchange.core2.core.common.config.SerializationConfiguration;
import exchange.core2.core.processors.journaling.DiskSerializationProcessor;
import exchange.core2.core.processors.journaling.DiskSerializationProcessorConfiguration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

public final class ExchangeCoreThroughput {

  // Prices in ticks. Every bid is below kMid and every ask above it, so no
  // order of the flow or of the prefill ever trades: the flow is
  // NewOrder/CancelOrder only, like our sustained order entry.
  private static final long MID = 10_000;
  private static final long HALF_RANGE = 500;
  private static final int QUOTE_CURRENCY = 1;
  private static final long BALANCE = 1_000_000_000_000_000L;
  private static final long FLOW_ORDER_ID_BASE = 1_000_000_000L;

  private static final class Options {
    int runs = 3;
    double warmupS = 2.0;
    double measureS = 5.0;
    int symbols = 3;
    int users = 1000;
    int prefillPerSymbol = 1000;
    CoreWaitStrategy wait = CoreWaitStrategy.YIELDING;
    boolean journal = true;
    boolean latency = true;
    long rate = 0; // commands/s; 0 = flood (their method)
    int window = 0; // most commands published and not yet answered; 0 = the ring's size (their method)
    int ringSize = 32 * 1024;
    boolean latencyProfile = false;
    int groupLimit = -1; // per profile: 1536 throughput, 256 latency (their *Journaling tests)
    Path dir = Paths.get(System.getProperty("java.io.tmpdir"));
  }

  private static void usage(String error) {
    System.err.println(
        "usage: ExchangeCoreThroughput [--runs N] [--warmup-s S] [--measure-s S] [--symbols N]\n"
            + "       [--users N] [--prefill N] [--wait busy_spin|yielding|blocking] [--journal on|off]\n"
            + "       [--latency on|off] [--rate CMDS_PER_S] [--profile throughput|latency] [--ring N]\n"
            + "       [--group-limit N] [--window N] [--dir DIR]\n"
            + "defaults: 3 runs, 2 s warm-up, 5 s measured, 3 symbols, 1000 users, 1000 resting orders\n"
            + "per symbol, yielding, journal on, latency on, flood (rate 0), ring 32768, journal\n"
            + "directories under java.io.tmpdir.\n"
            + "--profile: exchange-core's own PerformanceConfiguration builder; throughput (default;\n"
            + "groups of up to 4 ms, group limit 1536 as in their PerfThroughputJournaling) or latency\n"
            + "(groups of up to 10 us, group limit 256 as in their PerfLatencyJournaling; use with --rate)\n"
            + "--window N: at most N commands unanswered, like order_entry_bench's window per session\n"
            + "(default 0: as many as the ring holds, their method)");
    if (error != null) {
      System.err.println("error: " + error);
      System.exit(2);
    }
    System.exit(0);
  }

  private static long parseLong(String name, String v, long min, long max) {
    try {
      final long x = Long.parseLong(v);
      if (x < min || x > max) usage(name + " must be in [" + min + ", " + max + "], got " + v);
      return x;
    } catch (NumberFormatException e) {
      usage(name + " needs an integer, got '" + v + "'");
      return 0;
    }
  }

  private static double parseSeconds(String name, String v) {
    try {
      final double x = Double.parseDouble(v);
      if (!(x > 0 && x <= 600)) usage(name + " must be in (0, 600] seconds, got " + v);
      return x;
    } catch (NumberFormatException e) {
      usage(name + " needs a number of seconds, got '" + v + "'");
      return 0;
    }
  }

  private static boolean parseOnOff(String name, String v) {
    if (v.equals("on")) return true;
    if (v.equals("off")) return false;
    usage(name + " takes on or off, got '" + v + "'");
    return false;
  }

  private static Options parse(String[] args) {
    final Options o = new Options();
    for (int i = 0; i < args.length; i++) {
      final String a = args[i];
      if (a.equals("--help") || a.equals("-h")) usage(null);
      if (i + 1 >= args.length) usage(a + " needs a value (or unknown option)");
      final String v = args[++i];
      switch (a) {
        case "--runs": o.runs = (int) parseLong(a, v, 1, 50); break;
        case "--warmup-s": o.warmupS = parseSeconds(a, v); break;
        case "--measure-s": o.measureS = parseSeconds(a, v); break;
        case "--symbols": o.symbols = (int) parseLong(a, v, 1, 1000); break;
        case "--users": o.users = (int) parseLong(a, v, 1, 1_000_000); break;
        case "--prefill": o.prefillPerSymbol = (int) parseLong(a, v, 0, 1_000_000); break;
        case "--journal": o.journal = parseOnOff(a, v); break;
        case "--latency": o.latency = parseOnOff(a, v); break;
        case "--rate": o.rate = parseLong(a, v, 0, 100_000_000); break;
        case "--ring": {
          o.ringSize = (int) parseLong(a, v, 1024, 1 << 22);
          if (Integer.bitCount(o.ringSize) != 1) usage("--ring must be a power of two, got " + v);
          break;
        }
        case "--group-limit": o.groupLimit = (int) parseLong(a, v, 1, 1 << 20); break;
        case "--profile": {
          if (v.equals("throughput")) o.latencyProfile = false;
          else if (v.equals("latency")) o.latencyProfile = true;
          else usage("--profile takes throughput or latency, got '" + v + "'");
          break;
        }
        case "--dir": o.dir = Paths.get(v); break;
        case "--window": o.window = (int) parseLong(a, v, 0, 1 << 22); break;
        case "--wait": {
          switch (v) {
            case "busy_spin": o.wait = CoreWaitStrategy.BUSY_SPIN; break;
            case "yielding": o.wait = CoreWaitStrategy.YIELDING; break;
            case "blocking": o.wait = CoreWaitStrategy.BLOCKING; break;
            default: usage("--wait takes busy_spin, yielding or blocking, got '" + v + "'");
          }
          break;
        }
        default: usage("unknown option " + a);
      }
    }
    if (o.groupLimit < 0) o.groupLimit = o.latencyProfile ? 256 : 1536;
    // exchange-core's own rule (ExchangeCore refuses otherwise): the grouping
    // stage must not hold back a quarter of the ring.
    if (o.groupLimit * 4L > o.ringSize) usage("--group-limit must be at most a quarter of --ring");
    if (!Files.isDirectory(o.dir)) usage("--dir " + o.dir + " is not a directory");
    return o;
  }

  // Answers seen by the results stage. Written by that one thread only; read
  // by the main and publisher threads, hence the atomics (lazySet: ordered,
  // no full fence on the results thread's path).
  private static final class Results {
    final AtomicLong orderAnswers = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    volatile String firstFailure;
    volatile boolean recording;
    final Histogram latency = new Histogram(60_000_000_000L, 3);
    private long answers;

    void accept(OrderCommand cmd) {
      final OrderCommandType t = cmd.command;
      if (t != OrderCommandType.PLACE_ORDER && t != OrderCommandType.CANCEL_ORDER) return;
      if (cmd.resultCode != CommandResultCode.SUCCESS) {
        if (failures.getAndIncrement() == 0) firstFailure = t + " order " + cmd.orderId + ": " + cmd.resultCode;
      }
      if (recording) latency.recordValue(Math.max(0, System.nanoTime() - cmd.timestamp));
      orderAnswers.lazySet(++answers);
    }
  }

  private static final class RunResult {
    double cmdsPerS;
    double perSecondMin;
    double perSecondMax;
    long commandsMeasured;
    long journalBytes;
    long journalFiles;
    Histogram latency;
    long published;
    long gcCount;
    long gcMs;
    double cpuOurs; // cores used by this JVM in the window
    double cpuOthers; // cores used by every other process (and the kernel) in the window
  }

  private static List<CoreSymbolSpecification> symbols(int n) {
    final List<CoreSymbolSpecification> list = new ArrayList<>();
    for (int s = 0; s < n; s++) {
      list.add(
          CoreSymbolSpecification.builder()
              .symbolId(100 + s)
              .type(SymbolType.CURRENCY_EXCHANGE_PAIR)
              .baseCurrency(10 + s)
              .quoteCurrency(QUOTE_CURRENCY)
              .baseScaleK(1)
              .quoteScaleK(1)
              .takerFee(0)
              .makerFee(0)
              .build());
    }
    return list;
  }

  // A bid at MID - 1 - (k % HALF_RANGE) or an ask at MID + 1 + (k % HALF_RANGE).
  private static long price(long k, boolean bid) {
    final long off = 1 + Math.floorMod(k * 7919L, HALF_RANGE);
    return bid ? MID - off : MID + off;
  }

  private static void setUp(ExchangeCore core, Options o, List<CoreSymbolSpecification> specs) throws Exception {
    final ExchangeApi api = core.getApi();
    final CommandResultCode added = api.submitBinaryDataAsync(new BatchAddSymbolsCommand(specs)).get(30, TimeUnit.SECONDS);
    if (added != CommandResultCode.SUCCESS) throw new IllegalStateException("adding symbols: " + added);

    final List<ApiCommand> users = new ArrayList<>();
    long tx = 1;
    for (long uid = 1; uid <= o.users; uid++) {
      users.add(ApiAddUser.builder().uid(uid).build());
      users.add(ApiAdjustUserBalance.builder().uid(uid).currency(QUOTE_CURRENCY).amount(BALANCE).transactionId(tx++).build());
      for (CoreSymbolSpecification s : specs) {
        users.add(ApiAdjustUserBalance.builder().uid(uid).currency(s.baseCurrency).amount(BALANCE).transactionId(tx++).build());
      }
    }
    checkAll(api, users, "adding users and balances");

    final List<ApiCommand> prefill = new ArrayList<>();
    long id = 1;
    for (CoreSymbolSpecification s : specs) {
      for (int i = 0; i < o.prefillPerSymbol; i++) {
        final boolean bid = (i & 1) == 0;
        final long p = price(i, bid);
        prefill.add(
            ApiPlaceOrder.builder()
                .uid(1 + (i % o.users))
                .orderId(id++)
                .price(p)
                .reservePrice(p)
                .size(1 + i % 10)
                .action(bid ? OrderAction.BID : OrderAction.ASK)
                .orderType(OrderType.GTC)
                .symbol(s.symbolId)
                .build());
      }
    }
    checkAll(api, prefill, "prefilling the books");
  }

  // Submits the commands and checks every answer: set-up must succeed in full
  // or the measurement would run on a different book than it says.
  private static void checkAll(ExchangeApi api, List<ApiCommand> cmds, String what) throws Exception {
    final List<java.util.concurrent.CompletableFuture<CommandResultCode>> futures = new ArrayList<>(cmds.size());
    for (ApiCommand c : cmds) futures.add(api.submitCommandAsync(c));
    for (int i = 0; i < futures.size(); i++) {
      final CommandResultCode r = futures.get(i).get(60, TimeUnit.SECONDS);
      if (r != CommandResultCode.SUCCESS) throw new IllegalStateException(what + ": " + cmds.get(i) + " -> " + r);
    }
  }

  // The machine is shared: how much CPU the rest of it used during the
  // measured window says whether a run had its two cores. /proc/stat's first
  // line in clock ticks: user nice system idle iowait irq softirq steal.
  private static long[] machineTicks() throws IOException {
    final String[] f = Files.readAllLines(Paths.get("/proc/stat")).get(0).trim().split("\\s+");
    final long busy = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6])
        + Long.parseLong(f[7]) + Long.parseLong(f[8]);
    final long all = busy + Long.parseLong(f[4]) + Long.parseLong(f[5]);
    return new long[] {busy, all};
  }

  private static long processCpuNs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static long[] gcTotals() {
    long count = 0, ms = 0;
    for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, gc.getCollectionCount());
      ms += Math.max(0, gc.getCollectionTime());
    }
    return new long[] {count, ms};
  }

  private static RunResult runOnce(Options o, int runIndex) throws Exception {
    final Path journalDir = Files.createTempDirectory(o.dir, "exchange-core-journal-");
    final Results results = new Results();
    final List<CoreSymbolSpecification> specs = symbols(o.symbols);

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
      setUp(core, o, specs);
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
                  final long orderId = FLOW_ORDER_ID_BASE + n;
                  final int symbol = specs.get((int) (n % nSym)).symbolId;
                  final long uid = 1 + (n % o.users);
                  if ((k & 1) == 0) {
                    final boolean bid = (n & 1) == 0;
                    final long p = price(n, bid);
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
      final long[] gc0 = gcTotals();
      final long[] m0 = machineTicks();
      final long p0 = processCpuNs();
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
      final long[] gc1 = gcTotals();
      final long[] m1 = machineTicks();
      final long p1 = processCpuNs();
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

  private static String fmt(double x) {
    return String.format(Locale.ROOT, "%.0f", x);
  }

  public static void main(String[] args) throws Exception {
    final Options o = parse(args);
    final String version = artifactVersion();
    System.err.printf(
        Locale.ROOT,
        "exchange-core %s: %d runs, %.1f s warm-up + %.1f s measured, %d symbols, %d users, %d resting orders/symbol, "
            + "wait %s, journal %s, %s, %s profile, ring %d, group limit %d, window %s, journal dir under %s%n",
        version, o.runs, o.warmupS, o.measureS, o.symbols, o.users, o.prefillPerSymbol, o.wait, o.journal ? "on" : "off",
        o.rate == 0 ? "flood" : o.rate + " cmds/s", o.latencyProfile ? "latency" : "throughput", o.ringSize, o.groupLimit, o.window == 0 ? "ring" : String.valueOf(o.window), o.dir);
    final List<RunResult> runs = new ArrayList<>();
    for (int i = 0; i < o.runs; i++) {
      final RunResult r = runOnce(o, i);
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
