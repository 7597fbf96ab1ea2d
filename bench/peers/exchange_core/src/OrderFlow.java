// The order flow and the book it runs on (see ExchangeCoreThroughput.java for
// the method): the symbols, the prices of the flow and of the prefill, and the
// set-up of users, balances and resting orders before a run.

import exchange.core2.core.ExchangeApi;
import exchange.core2.core.ExchangeCore;
import exchange.core2.core.common.CoreSymbolSpecification;
import exchange.core2.core.common.OrderAction;
import exchange.core2.core.common.OrderType;
import exchange.core2.core.common.SymbolType;
import exchange.core2.core.common.api.ApiAddUser;
import exchange.core2.core.common.api.ApiAdjustUserBalance;
import exchange.core2.core.common.api.ApiCommand;
import exchange.core2.core.common.api.ApiPlaceOrder;
import exchange.core2.core.common.api.binary.BatchAddSymbolsCommand;
import exchange.core2.core.common.cmd.CommandResultCode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

final class OrderFlow {

  // Prices in ticks. Every bid is below kMid and every ask above it, so no
  // order of the flow or of the prefill ever trades: the flow is
  // NewOrder/CancelOrder only, like our sustained order entry.
  private static final long MID = 10_000;
  private static final long HALF_RANGE = 500;
  private static final int QUOTE_CURRENCY = 1;
  private static final long BALANCE = 1_000_000_000_000_000L;
  static final long FLOW_ORDER_ID_BASE = 1_000_000_000L;

  static List<CoreSymbolSpecification> symbols(int n) {
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
  static long price(long k, boolean bid) {
    final long off = 1 + Math.floorMod(k * 7919L, HALF_RANGE);
    return bid ? MID - off : MID + off;
  }

  static void setUp(ExchangeCore core, Options o, List<CoreSymbolSpecification> specs) throws Exception {
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

  private OrderFlow() {}
}
