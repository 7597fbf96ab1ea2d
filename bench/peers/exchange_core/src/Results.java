import exchange.core2.core.common.cmd.CommandResultCode;
import exchange.core2.core.common.cmd.OrderCommand;
import exchange.core2.core.common.cmd.OrderCommandType;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

// Answers seen by the results stage. Written by that one thread only; read
// by the main and publisher threads, hence the atomics (lazySet: ordered,
// no full fence on the results thread's path).
final class Results {
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
