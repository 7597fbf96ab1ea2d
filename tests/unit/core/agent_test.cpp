// Agent concept, CompositeAgent and AgentInvoker, all on the test's own thread.
#include "core/agent.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/agent_runner.hpp"

namespace nanotick::core {
namespace {

// Appends "<name>.<event>" to a shared journal so tests can check order.
class JournalAgent {
 public:
  JournalAgent(std::string name, std::vector<std::string>& journal, int work_per_cycle = 1)
      : name_(std::move(name)), journal_(&journal), work_(work_per_cycle) {}

  int do_work() {
    journal_->push_back(name_ + ".work");
    ++cycles_;
    return work_;
  }
  std::string_view role_name() const { return name_; }
  void on_start() {
    journal_->push_back(name_ + ".start");
    if (throw_on_start_) {
      throw std::runtime_error(name_ + " cannot start");
    }
  }
  void on_close() {
    journal_->push_back(name_ + ".close");
    if (throw_on_close_) {
      throw std::runtime_error(name_ + " cannot close");
    }
  }

  int cycles() const { return cycles_; }
  void set_throw_on_start() { throw_on_start_ = true; }
  void set_throw_on_close() { throw_on_close_ = true; }

 private:
  std::string name_;
  std::vector<std::string>* journal_;
  int work_;
  int cycles_ = 0;
  bool throw_on_start_ = false;
  bool throw_on_close_ = false;
};

// The minimal agent: no hooks.
struct BareAgent {
  int do_work() {
    ++cycles;
    return 2;
  }
  std::string_view role_name() const { return "bare"; }
  int cycles = 0;
};

struct NoRoleName {
  int do_work() { return 0; }
};
struct WrongWorkType {
  void do_work() {}
  std::string_view role_name() const { return "x"; }
};

static_assert(Agent<JournalAgent>);
static_assert(Agent<BareAgent>);
static_assert(!Agent<NoRoleName>);
static_assert(!Agent<WrongWorkType>);
static_assert(AgentWithOnStart<JournalAgent> && AgentWithOnClose<JournalAgent>);
static_assert(!AgentWithOnStart<BareAgent> && !AgentWithOnClose<BareAgent>);
static_assert(Agent<CompositeAgent<JournalAgent&, BareAgent&>>);
static_assert(AgentWithOnStart<CompositeAgent<BareAgent>>);

TEST(CompositeAgent, ShouldCallEveryAgentInOrderAndSumTheirWork) {
  std::vector<std::string> journal;
  JournalAgent a("a", journal, 1);
  JournalAgent b("b", journal, 0);
  JournalAgent c("c", journal, 5);
  CompositeAgent composite{a, b, c};

  EXPECT_EQ(composite.do_work(), 6);
  EXPECT_EQ(composite.do_work(), 6);

  EXPECT_EQ(journal, (std::vector<std::string>{"a.work", "b.work", "c.work", "a.work", "b.work", "c.work"}));
  EXPECT_EQ(a.cycles(), 2);
  EXPECT_EQ(b.cycles(), 2);
  EXPECT_EQ(c.cycles(), 2);
}

TEST(CompositeAgent, ShouldReferenceLvalueAgentsAndOwnRvalueAgents) {
  std::vector<std::string> journal;
  JournalAgent outside("outside", journal);
  CompositeAgent composite{outside, BareAgent{}};
  static_assert(std::is_same_v<decltype(composite), CompositeAgent<JournalAgent&, BareAgent>>);

  EXPECT_EQ(composite.do_work(), 3);
  EXPECT_EQ(outside.cycles(), 1);                  // the caller's object did the work
  EXPECT_EQ(&composite.agent<0>(), &outside);
  EXPECT_EQ(composite.agent<1>().cycles, 1);       // the composite's own copy did too
}

TEST(CompositeAgent, ShouldNameItselfAfterItsAgents) {
  std::vector<std::string> journal;
  JournalAgent gateway("gateway", journal);
  JournalAgent engine("engine", journal);
  CompositeAgent composite{gateway, engine, BareAgent{}};
  EXPECT_EQ(composite.role_name(), "[gateway,engine,bare]");
}

TEST(CompositeAgent, ShouldStartInOrderAndCloseInReverseOrder) {
  std::vector<std::string> journal;
  JournalAgent a("a", journal);
  JournalAgent c("c", journal);
  CompositeAgent composite{a, BareAgent{}, c};

  composite.on_start();
  EXPECT_EQ(composite.started_count(), 3u);
  composite.on_close();
  EXPECT_EQ(composite.started_count(), 0u);

  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "c.start", "c.close", "a.close"}));
}

TEST(CompositeAgent, ShouldCloseOnlyTheAgentsThatStartedWhenOneFailsToStart) {
  std::vector<std::string> journal;
  JournalAgent a("a", journal);
  JournalAgent b("b", journal);
  JournalAgent c("c", journal);
  b.set_throw_on_start();
  CompositeAgent composite{a, b, c};

  EXPECT_THROW(composite.on_start(), std::runtime_error);
  EXPECT_EQ(composite.started_count(), 1u);
  composite.on_close();

  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "b.start", "a.close"}));
}

TEST(CompositeAgent, ShouldCloseEveryAgentAndRethrowTheFirstCloseFailure) {
  std::vector<std::string> journal;
  JournalAgent a("a", journal);
  JournalAgent b("b", journal);
  JournalAgent c("c", journal);
  b.set_throw_on_close();
  a.set_throw_on_close();
  CompositeAgent composite{a, b, c};
  composite.on_start();

  try {
    composite.on_close();
    FAIL() << "on_close should rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "b cannot close");  // closed first (reverse order)
  }
  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "b.start", "c.start", "c.close", "b.close", "a.close"}));
}

TEST(CompositeAgent, ShouldNestInsideAnotherComposite) {
  std::vector<std::string> journal;
  JournalAgent a("a", journal, 1);
  JournalAgent b("b", journal, 2);
  JournalAgent c("c", journal, 4);
  CompositeAgent inner{a, b};
  CompositeAgent outer{inner, c};

  EXPECT_EQ(outer.role_name(), "[[a,b],c]");
  outer.on_start();
  EXPECT_EQ(outer.do_work(), 7);
  outer.on_close();
  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "b.start", "c.start", "a.work", "b.work", "c.work", "c.close",
                                               "b.close", "a.close"}));
}

TEST(AgentInvoker, ShouldDoWorkOnlyBetweenStartAndClose) {
  std::vector<std::string> journal;
  JournalAgent agent("a", journal, 3);
  AgentInvoker invoker(agent);

  EXPECT_EQ(invoker.invoke(), 0);  // not started: the agent is not called
  invoker.start();
  EXPECT_TRUE(invoker.is_running());
  EXPECT_EQ(invoker.invoke(), 3);
  EXPECT_EQ(invoker.invoke(), 3);
  invoker.close();
  invoker.close();  // idempotent
  EXPECT_TRUE(invoker.is_closed());
  EXPECT_EQ(invoker.invoke(), 0);

  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "a.work", "a.work", "a.close"}));
}

TEST(AgentInvoker, ShouldCloseTheAgentAndRethrowWhenStartFails) {
  std::vector<std::string> journal;
  JournalAgent agent("a", journal);
  agent.set_throw_on_start();
  AgentInvoker invoker(agent);

  EXPECT_THROW(invoker.start(), std::runtime_error);
  EXPECT_TRUE(invoker.is_closed());
  EXPECT_EQ(invoker.invoke(), 0);
  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "a.close"}));
}

TEST(AgentInvoker, ShouldRejectASecondStart) {
  BareAgent agent;
  AgentInvoker invoker(agent);
  invoker.start();
  EXPECT_THROW(invoker.start(), std::logic_error);
}

TEST(AgentInvoker, ShouldCloseTheAgentWhenDestroyedWhileRunning) {
  std::vector<std::string> journal;
  JournalAgent agent("a", journal);
  {
    AgentInvoker invoker(agent);
    invoker.start();
  }
  EXPECT_EQ(journal, (std::vector<std::string>{"a.start", "a.close"}));
}

TEST(AgentInvoker, ShouldLetDoWorkExceptionsReachTheCaller) {
  struct Throwing {
    int do_work() { throw std::runtime_error("boom"); }
    std::string_view role_name() const { return "throwing"; }
  } agent;
  AgentInvoker invoker(agent);
  invoker.start();
  EXPECT_THROW(static_cast<void>(invoker.invoke()), std::runtime_error);
  EXPECT_TRUE(invoker.is_running());  // the caller decides what to do next
}

TEST(AgentInvoker, ShouldDriveACompositeWithoutHooks) {
  BareAgent x;
  BareAgent y;
  CompositeAgent composite{x, y};
  AgentInvoker invoker(composite);
  invoker.start();
  EXPECT_EQ(invoker.invoke(), 4);
  invoker.close();
  EXPECT_EQ(x.cycles, 1);
  EXPECT_EQ(y.cycles, 1);
}

}  // namespace
}  // namespace nanotick::core
