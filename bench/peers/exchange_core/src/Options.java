// The harness's command-line options and their parsing (see
// ExchangeCoreThroughput.java for the method). Bad input prints the usage
// and the error and exits 2.

import exchange.core2.core.common.CoreWaitStrategy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

final class Options {
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

  static Options parse(String[] args) {
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
}
