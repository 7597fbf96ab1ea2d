// One run's figures, as ExchangeCoreThroughput prints them.

import org.HdrHistogram.Histogram;

final class RunResult {
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
