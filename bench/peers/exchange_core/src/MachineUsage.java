// What the JVM and the rest of the machine used around the measured window
// (CPU time, GC count and time), read by ThroughputRun.

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;

final class MachineUsage {

  // The machine is shared: how much CPU the rest of it used during the
  // measured window says whether a run had its two cores. /proc/stat's first
  // line in clock ticks: user nice system idle iowait irq softirq steal.
  static long[] machineTicks() throws IOException {
    final String[] f = Files.readAllLines(Paths.get("/proc/stat")).get(0).trim().split("\\s+");
    final long busy = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6])
        + Long.parseLong(f[7]) + Long.parseLong(f[8]);
    final long all = busy + Long.parseLong(f[4]) + Long.parseLong(f[5]);
    return new long[] {busy, all};
  }

  static long processCpuNs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  static long[] gcTotals() {
    long count = 0, ms = 0;
    for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, gc.getCollectionCount());
      ms += Math.max(0, gc.getCollectionTime());
    }
    return new long[] {count, ms};
  }

  private MachineUsage() {}
}
