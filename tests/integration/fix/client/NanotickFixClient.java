// The FIX tests' third-party client: a QuickFIX/J 2.3.1 initiator (a FIX
// engine nobody here wrote) driven line by line on stdin by the Python tests
// (tests/integration/fix), printing every message it receives and every
// session event on stdout as one JSON object per line.
//
// usage: java -cp build/fix/jars/*:CLASSES NanotickFixClient HOST PORT SENDER TARGET STORE_DIR [PASSWORD]
// PASSWORD goes on every Logon as Password (554); without it the Logon has none.
//
// Commands (one per line):
//   send 35=D|11=A1|55=NTK1|...   an application or admin message, fields in order ('|' separates them)
//   disconnect                     drop the TCP connection without a Logout (QFJ reconnects after 1 s)
//   logout                         a Logout; QFJ logs on again after 1 s
//   next-target N                  set the number the client expects next (lower: it asks for a resend)
//   state                          print the session's next numbers: {"event":"state","next_sender":S,"next_target":T}
//   skip-sender K                  skip K of its own numbers (a gap the gateway must ask about)
//   reset-sender K                 a SequenceReset-Reset (35=4, NewSeqNo = next + K) and numbering from there
//   bench N SYMBOL SIDE PRICE QTY [INTERVAL_US]
//                                  N round trips, one at a time: a resting NewOrderSingle until its
//                                  ExecutionReport New, then its cancel until Canceled; prints the
//                                  latencies (ns, System.nanoTime) of each as a JSON array. With
//                                  INTERVAL_US, each message is sent on a clock (one every INTERVAL_US),
//                                  not as soon as the last answer came: the pacing of an open-loop load
//   quit                           stop the initiator (Logout) and exit
// Output lines: {"event":"logon"|"logout"|"ready"|"sent"|"bench", ...} and
// {"in":"app"|"admin","seq":N,"fields":{"35":"8",...}}.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import quickfix.Application;
import quickfix.DefaultMessageFactory;
import quickfix.Field;
import quickfix.FieldMap;
import quickfix.FileStoreFactory;
import quickfix.Message;
import quickfix.ScreenLogFactory;
import quickfix.Session;
import quickfix.SessionID;
import quickfix.SessionSettings;
import quickfix.SocketInitiator;

public final class NanotickFixClient implements Application {
  private final BlockingQueue<Message> benchInbox = new ArrayBlockingQueue<>(1024);
  private final String password;

  NanotickFixClient(String password) { this.password = password; }
  private volatile boolean benching = false;

  private static String escape(String s) {
    StringBuilder b = new StringBuilder();
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.toString();
  }

  private static void appendFields(StringBuilder b, FieldMap map, boolean[] first) {
    java.util.Iterator<Field<?>> it = map.iterator();
    while (it.hasNext()) {
      Field<?> f = it.next();
      if (!first[0]) b.append(',');
      first[0] = false;
      b.append('"').append(f.getTag()).append("\":\"").append(escape(String.valueOf(f.getObject()))).append('"');
    }
  }

  static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static void print(String kind, Message m) {
    StringBuilder b = new StringBuilder("{\"in\":\"").append(kind).append("\",\"fields\":{");
    boolean[] first = {true};
    appendFields(b, m.getHeader(), first);
    appendFields(b, m, first);
    b.append("}}");
    emit(b.toString());
  }

  @Override public void onCreate(SessionID id) {}
  @Override public void onLogon(SessionID id) { emit("{\"event\":\"logon\"}"); }
  @Override public void onLogout(SessionID id) { emit("{\"event\":\"logout\"}"); }
  @Override
  public void toAdmin(Message m, SessionID id) {
    try {
      if (password != null && "A".equals(m.getHeader().getString(35))) m.setString(554, password);
    } catch (quickfix.FieldNotFound e) {
      throw new IllegalStateException(e);
    }
  }
  @Override public void toApp(Message m, SessionID id) {}
  @Override public void fromAdmin(Message m, SessionID id) { print("admin", m); }

  @Override
  public void fromApp(Message m, SessionID id) {
    if (benching) {
      benchInbox.offer(m);
      return;
    }
    print("app", m);
  }

  private static Message parse(String spec) {
    Message m = new Message();
    for (String part : spec.split("\\|")) {
      int eq = part.indexOf('=');
      if (eq <= 0) throw new IllegalArgumentException("not tag=value: " + part);
      int tag = Integer.parseInt(part.substring(0, eq));
      String value = part.substring(eq + 1);
      if (tag == 35 || tag == 43 || tag == 97 || tag == 122) m.getHeader().setString(tag, value);
      else m.setString(tag, value);
    }
    return m;
  }

  // Waits for the ExecutionReport of `clOrdId` with ExecType `execType`.
  private long awaitReport(String clOrdId, char execType, long sentNs) throws Exception {
    for (;;) {
      Message m = benchInbox.poll(10, TimeUnit.SECONDS);
      if (m == null) throw new IllegalStateException("bench: no answer to " + clOrdId + " within 10 s");
      if (m.isSetField(11) && m.getString(11).equals(clOrdId) && m.isSetField(150) && m.getChar(150) == execType) {
        return System.nanoTime() - sentNs;
      }
      if (m.isSetField(150) && m.getChar(150) == '8') throw new IllegalStateException("bench: rejected " + m);
    }
  }

  // Sleeps until `due` (when pacing), returns the next due time.
  private static long waitUntil(long due, long intervalNs) {
    if (intervalNs == 0) return due;
    long left;
    while ((left = due - System.nanoTime()) > 0) java.util.concurrent.locks.LockSupport.parkNanos(left);
    return due + intervalNs;
  }

  private void bench(SessionID id, String[] a) throws Exception {
    int n = Integer.parseInt(a[1]);
    String symbol = a[2], side = a[3], price = a[4], qty = a[5];
    long intervalNs = a.length > 6 ? Long.parseLong(a[6]) * 1000L : 0L;
    long due = System.nanoTime();
    List<Long> news = new ArrayList<>(), cancels = new ArrayList<>();
    benchInbox.clear();
    benching = true;
    try {
      String tag = Long.toString(System.nanoTime(), 36);
      for (int i = 0; i < n; ++i) {
        String cl = "B" + tag + "-" + i, cx = "X" + tag + "-" + i;
        Message d = parse("35=D|11=" + cl + "|55=" + symbol + "|54=" + side + "|60=20261127-00:00:00|38=" + qty
            + "|40=2|44=" + price + "|59=1");
        due = waitUntil(due, intervalNs);
        long t0 = System.nanoTime();
        Session.sendToTarget(d, id);
        news.add(awaitReport(cl, '0', t0));
        Message f = parse("35=F|11=" + cx + "|41=" + cl + "|55=" + symbol + "|54=" + side + "|60=20261127-00:00:00");
        due = waitUntil(due, intervalNs);
        long t1 = System.nanoTime();
        Session.sendToTarget(f, id);
        cancels.add(awaitReport(cx, '4', t1));
      }
    } finally {
      benching = false;
    }
    emit("{\"event\":\"bench\",\"new\":" + news + ",\"cancel\":" + cancels + "}");
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 5 && args.length != 6) {
      System.err.println("usage: NanotickFixClient HOST PORT SENDER TARGET STORE_DIR [PASSWORD]");
      System.exit(2);
    }
    String settingsText = "[default]\n"
        + "ConnectionType=initiator\n"
        + "SocketConnectHost=" + args[0] + "\n"
        + "SocketConnectPort=" + args[1] + "\n"
        + "HeartBtInt=30\n"
        + "ReconnectInterval=1\n"
        + "FileStorePath=" + args[4] + "\n"
        + "NonStopSession=Y\n"
        + "UseDataDictionary=Y\n"
        + "DataDictionary=FIX44.xml\n"
        + "ResetOnLogon=N\n"
        + "ResetOnDisconnect=N\n"
        + "ResetOnLogout=N\n"
        + "[session]\n"
        + "BeginString=FIX.4.4\n"
        + "SenderCompID=" + args[2] + "\n"
        + "TargetCompID=" + args[3] + "\n";
    SessionSettings settings =
        new SessionSettings(new java.io.ByteArrayInputStream(settingsText.getBytes(StandardCharsets.UTF_8)));
    NanotickFixClient app = new NanotickFixClient(args.length == 6 ? args[5] : null);
    SocketInitiator initiator =
        new SocketInitiator(app, new FileStoreFactory(settings), settings, new ScreenLogFactory(false, false, false),
            new DefaultMessageFactory());
    SessionID id = new SessionID("FIX.4.4", args[2], args[3]);
    initiator.start();
    emit("{\"event\":\"ready\"}");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      line = line.trim();
      if (line.isEmpty()) continue;
      String[] a = line.split(" ");
      Session session = Session.lookupSession(id);
      try {
        switch (a[0]) {
          case "send": {
            boolean sent = Session.sendToTarget(parse(line.substring(5)), id);
            emit("{\"event\":\"sent\",\"ok\":" + sent + ",\"next_sender\":" + session.getExpectedSenderNum() + "}");
            break;
          }
          case "disconnect": session.disconnect("test: dropped", false); emit("{\"event\":\"sent\",\"ok\":true}"); break;
          case "logout": session.logout("test"); emit("{\"event\":\"sent\",\"ok\":true}"); break;
          case "skip-sender":
          case "reset-sender": {
            // Read and set in one step: a heartbeat taking a number in between would break the test's arithmetic.
            synchronized (session) {
              int next = session.getExpectedSenderNum(), to = next + Integer.parseInt(a[1]);
              if (a[0].equals("reset-sender")) Session.sendToTarget(parse("35=4|36=" + to), id);
              session.setNextSenderMsgSeqNum(to);
              emit("{\"event\":\"sent\",\"ok\":true,\"from\":" + next + ",\"to\":" + to + "}");
            }
            break;
          }
          case "next-target": session.setNextTargetMsgSeqNum(Integer.parseInt(a[1])); emit("{\"event\":\"sent\",\"ok\":true}"); break;
          case "state":
            emit("{\"event\":\"state\",\"next_sender\":" + session.getExpectedSenderNum() + ",\"next_target\":"
                + session.getExpectedTargetNum() + "}");
            break;
          case "bench": app.bench(id, a); break;
          case "quit": initiator.stop(); emit("{\"event\":\"quit\"}"); System.exit(0); break;
          default: emit("{\"event\":\"error\",\"text\":\"unknown command " + escape(a[0]) + "\"}");
        }
      } catch (Exception e) {
        emit("{\"event\":\"error\",\"text\":\"" + escape(e.toString()) + "\"}");
      }
    }
    initiator.stop();
  }
}
