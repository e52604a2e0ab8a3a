// bank-server: the personal banking MCP server of the tool-chaining pattern
// (seed 003). Data lives in memory. Transferring from the locked "Primary
// Checking" account answers with `_meta.nextTool`, asking the client (or the
// gateway) to call request_agent_handoff next.
//
// Money moves only through the tool `--transfer-tool NAME` adds (e.g.
// transfer_money), and only once the user has confirmed the transfer
// (elicitation, key "confirm"). Without the flag no money ever moves and the
// catalog is the five tools of seed 003.
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "mcp/protocol.hpp"
#include "server_kit.hpp"
#include "util/thread_annotations.hpp"

namespace ex = mcpgw::examples;
namespace json = mcpgw::json;
namespace mcp = mcpgw::mcp;
namespace util = mcpgw::util;

namespace {

struct Account {
  std::string id;
  std::string name;
  std::string type;
  std::int64_t balance_cents;  // integers: binary fractions and money do not mix
  bool locked;
  bool can_transfer_from;
  bool can_transfer_to;
};

std::string money(std::int64_t cents) {
  const std::int64_t abs = cents < 0 ? -cents : cents;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%" PRId64 ".%02" PRId64 " USD", cents < 0 ? "-" : "", abs / 100,
                abs % 100);
  return buf;
}

json::Value account_json(const Account& acc, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  v.AddMember("accountId", json::str(acc.id, a), a);
  v.AddMember("accountName", json::str(acc.name, a), a);
  v.AddMember("accountType", json::str(acc.type, a), a);
  v.AddMember("balance", static_cast<double>(acc.balance_cents) / 100.0, a);
  v.AddMember("currency", "USD", a);
  v.AddMember("isLocked", acc.locked, a);
  v.AddMember("canTransferFrom", acc.can_transfer_from, a);
  v.AddMember("canTransferTo", acc.can_transfer_to, a);
  return v;
}

constexpr const char* kAccountSchema = R"({
  "type": "object",
  "properties": {
    "accountId": {"type": "string"}, "accountName": {"type": "string"},
    "accountType": {"type": "string"}, "balance": {"type": "number"},
    "currency": {"type": "string"}, "isLocked": {"type": "boolean"},
    "canTransferFrom": {"type": "boolean"}, "canTransferTo": {"type": "boolean"}
  },
  "required": ["accountId", "accountName", "accountType", "balance", "currency", "isLocked"]
})";

/// A transfer that passed every check, in cents.
struct Transfer {
  const Account* from;
  const Account* to;
  std::int64_t cents;
};

/// The bank: fixed accounts plus counters for the ids it hands out. Handlers
/// run concurrently: the counters are atomic, balances change under `mu_`.
class Bank {
 public:
  void register_tools(ex::Server& server);
  void add_transfer_tool(ex::Server& server, const std::string& name);

 private:
  const Account* find(std::string_view id) const {
    for (const Account& acc : accounts_)
      if (acc.id == id) return &acc;
    return nullptr;
  }
  std::int64_t balance_of(const Account& acc) const {
    util::MutexLock lock(mu_);
    return acc.balance_cents;
  }
  /// The accounts as they are now (balances consistent with each other).
  std::vector<Account> snapshot() const {
    util::MutexLock lock(mu_);
    return accounts_;
  }
  /// The checks of a transfer out of `from` (known, unlocked): the
  /// transfer, or the error text for the client.
  std::variant<Transfer, std::string> check_transfer(const Account& from, const json::Value& args) const;

  ex::ToolOutcome welcome() const;
  ex::ToolOutcome list_accounts() const;
  ex::ToolOutcome balance(const json::Value& args) const;
  ex::ToolOutcome prepare_transfer(const json::Value& args);
  ex::ToolOutcome transfer(const json::Value& args, ex::CallContext& ctx);
  ex::ToolOutcome handoff(const json::Value& args);

  // Guards every balance_cents (a field of Account, which GUARDED_BY cannot
  // tie to this lock); the rest of accounts_ never changes.
  mutable util::Mutex mu_;
  std::vector<Account> accounts_ = {
      {"acc_checking_001", "Primary Checking", "checking", 254317, true, true, true},
      {"acc_savings_001", "High Yield Savings", "savings", 1502050, false, true, true},
      {"acc_credit_001", "Rewards Credit Card", "credit", -43210, false, false, true},
  };
  std::atomic<int> next_transfer_{1};
  std::atomic<int> next_ticket_{1001};
};

ex::ToolOutcome Bank::welcome() const {
  std::string text = "Welcome to Example Bank! Here is a summary of your accounts:\n";
  for (const Account& acc : snapshot()) {
    text += "- " + acc.name + " (" + acc.id + "): " + money(acc.balance_cents);
    if (acc.locked) text += " [locked: a customer service agent can help]";
    text += "\n";
  }
  text += "I can list your accounts, check a balance, prepare a transfer between your accounts, "
          "or connect you with a customer service agent.";
  return ex::text_result(text);
}

ex::ToolOutcome Bank::list_accounts() const {
  const std::vector<Account> accounts = snapshot();
  std::string text = "You have " + std::to_string(accounts.size()) + " accounts:";
  for (const Account& acc : accounts)
    text += "\n- " + acc.name + " (" + acc.id + ", " + acc.type + "): " + money(acc.balance_cents) +
            (acc.locked ? " [locked]" : "");
  json::Document r = ex::text_result(text);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const Account& acc : accounts) list.PushBack(account_json(acc, a), a);
  json::Value sc(rapidjson::kObjectType);
  sc.AddMember("accounts", list, a);
  r.AddMember("structuredContent", sc, a);
  return r;
}

ex::ToolOutcome Bank::balance(const json::Value& args) const {
  auto id = json::get_string(args, "accountId");
  if (!id) return mcp::tool_error("Missing required argument: accountId");
  const Account* acc = find(*id);
  if (!acc) return mcp::tool_error("Account not found: " + std::string(*id));

  const std::int64_t cents = balance_of(*acc);
  json::Document r = ex::text_result("The balance of " + acc->name + " (" + acc->id + ") is " + money(cents) + ".");
  auto& a = r.GetAllocator();
  json::Value sc(rapidjson::kObjectType);
  sc.AddMember("accountId", json::str(acc->id, a), a);
  sc.AddMember("balance", static_cast<double>(cents) / 100.0, a);
  sc.AddMember("currency", "USD", a);
  r.AddMember("structuredContent", sc, a);
  return r;
}

std::variant<Transfer, std::string> Bank::check_transfer(const Account& from, const json::Value& args) const {
  auto to_id = json::get_string(args, "toAccountId");
  if (!to_id) return "Missing required argument: toAccountId";
  const Account* to = find(*to_id);
  if (!to) return "Account not found: " + std::string(*to_id);
  if (to == &from) return "The source and destination accounts are the same.";
  auto amount = ex::get_number(args, "amount");
  if (!amount || !(*amount >= 0.01)) return "The amount must be a number of at least 0.01.";
  const auto cents = static_cast<std::int64_t>(std::llround(*amount * 100));
  if (!from.can_transfer_from) return "Transfers from " + from.name + " (" + from.id + ") are not allowed.";
  if (!to->can_transfer_to) return "Transfers to " + to->name + " (" + to->id + ") are not allowed.";
  if (const std::int64_t has = balance_of(from); cents > has)
    return "Insufficient funds: " + from.name + " has " + money(has) + ", the transfer needs " + money(cents) + ".";
  return Transfer{&from, to, cents};
}

ex::ToolOutcome Bank::prepare_transfer(const json::Value& args) {
  auto from_id = json::get_string(args, "fromAccountId");
  if (!from_id) return mcp::tool_error("Missing required argument: fromAccountId");
  const Account* from = find(*from_id);
  if (!from) return mcp::tool_error("Account not found: " + std::string(*from_id));

  // The locked check comes first, as soon as the source account is known:
  // nothing else matters until an agent has unlocked it.
  if (from->locked) {
    json::Document r = ex::text_result(
        "I'm sorry, but your " + from->name + " account (" + from->id +
        ") is currently locked. You'll need to speak with a customer service agent to resolve "
        "this issue before you can transfer funds from this account.");
    auto& a = r.GetAllocator();
    // Meant for the customer's eyes; the model gets the handoff via nextTool.
    json::Value audience(rapidjson::kArrayType);
    audience.PushBack("user", a);
    json::Value annotations(rapidjson::kObjectType);
    annotations.AddMember("audience", audience, a);
    r["content"][0].AddMember("annotations", annotations, a);

    json::Value arguments(rapidjson::kObjectType);
    arguments.AddMember("reason",
                        json::str("Customer attempted to transfer from locked account: " +
                                      from->name + " (" + from->id + ")",
                                  a),
                        a);
    json::Value next(rapidjson::kObjectType);
    next.AddMember("tool", "request_agent_handoff", a);
    next.AddMember("arguments", arguments, a);
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember("nextTool", next, a);
    r.AddMember("_meta", meta, a);
    return r;
  }

  auto checked = check_transfer(*from, args);
  if (auto* error = std::get_if<std::string>(&checked)) return mcp::tool_error(*error);
  const auto [_, to, cents] = std::get<Transfer>(checked);

  char id[32];
  std::snprintf(id, sizeof id, "trf_%06d", next_transfer_++);
  auto memo = json::get_string(args, "memo");
  json::Document r = ex::text_result("Transfer " + std::string(id) + " prepared: " + money(cents) +
                                     " from " + from->name + " (" + from->id + ") to " + to->name +
                                     " (" + to->id + "). No money has moved yet; it needs your "
                                     "confirmation.");
  auto& a = r.GetAllocator();
  json::Value sc(rapidjson::kObjectType);
  sc.AddMember("transferId", json::str(id, a), a);
  sc.AddMember("status", "prepared", a);
  sc.AddMember("fromAccountId", json::str(from->id, a), a);
  sc.AddMember("toAccountId", json::str(to->id, a), a);
  sc.AddMember("amount", static_cast<double>(cents) / 100.0, a);
  sc.AddMember("currency", "USD", a);
  if (memo) sc.AddMember("memo", json::str(*memo, a), a);
  r.AddMember("structuredContent", sc, a);
  return r;
}

ex::ToolOutcome Bank::transfer(const json::Value& args, ex::CallContext& ctx) {
  auto from_id = json::get_string(args, "fromAccountId");
  if (!from_id) return mcp::tool_error("Missing required argument: fromAccountId");
  const Account* from = find(*from_id);
  if (!from) return mcp::tool_error("Account not found: " + std::string(*from_id));
  if (from->locked)
    return mcp::tool_error("Your " + from->name + " account (" + from->id +
                           ") is locked; a customer service agent (request_agent_handoff) can help.");
  auto checked = check_transfer(*from, args);
  if (auto* error = std::get_if<std::string>(&checked)) return mcp::tool_error(*error);
  const Transfer t = std::get<Transfer>(checked);
  const std::string what = money(t.cents) + " from " + t.from->name + " (" + t.from->id + ") to " + t.to->name +
                           " (" + t.to->id + ")";

  // Ask before anything moves. In the 2026-07-28 era this request unwinds
  // the handler (input_required) and the client's retry runs it again from
  // the top with the answer: so nothing above may have any effect.
  json::Document params = ex::parse_json(R"({"requestedSchema": {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm the transfer"}},
    "required": ["confirm"]
  }})");
  json::set(params, "message", json::str("Transfer " + what + "?", params.GetAllocator()), params.GetAllocator());
  ex::Outcome answer = ctx.request("elicitation/create", params, "confirm");
  if (auto* error = std::get_if<ex::RpcError>(&answer))
    return mcp::tool_error("Not transferred: the confirmation could not be asked (" + error->message +
                           "). No money has moved.");
  const json::Value& reply = std::get<json::Document>(answer);
  const auto action = json::get_string(reply, "action");
  const json::Value* content = json::find(reply, "content");
  const json::Value* confirm = content ? json::find(*content, "confirm") : nullptr;
  if (action != "accept" || !confirm || !confirm->IsBool() || !confirm->GetBool())
    return mcp::tool_error("Not transferred: you did not confirm the transfer of " + what + ". No money has moved.");

  // Confirmed. Funds are checked again under the lock: another transfer may
  // have moved money while the user was deciding.
  std::int64_t from_after = 0, to_after = 0;
  {
    util::MutexLock lock(mu_);
    Account& src = accounts_[static_cast<std::size_t>(t.from - accounts_.data())];
    Account& dst = accounts_[static_cast<std::size_t>(t.to - accounts_.data())];
    if (t.cents > src.balance_cents)
      return mcp::tool_error("Insufficient funds: " + src.name + " has " + money(src.balance_cents) +
                             ", the transfer needs " + money(t.cents) + ". No money has moved.");
    src.balance_cents -= t.cents;
    dst.balance_cents += t.cents;
    from_after = src.balance_cents;
    to_after = dst.balance_cents;
  }
  char id[32];
  std::snprintf(id, sizeof id, "trf_%06d", next_transfer_++);
  json::Document r = ex::text_result("Transfer " + std::string(id) + " completed: " + what + ". New balances: " +
                                     money(from_after) + " and " + money(to_after) + ".");
  auto& a = r.GetAllocator();
  json::Value sc(rapidjson::kObjectType);
  sc.AddMember("transferId", json::str(id, a), a);
  sc.AddMember("status", "completed", a);
  sc.AddMember("fromAccountId", json::str(t.from->id, a), a);
  sc.AddMember("toAccountId", json::str(t.to->id, a), a);
  sc.AddMember("amount", static_cast<double>(t.cents) / 100.0, a);
  sc.AddMember("currency", "USD", a);
  sc.AddMember("fromBalance", static_cast<double>(from_after) / 100.0, a);
  sc.AddMember("toBalance", static_cast<double>(to_after) / 100.0, a);
  r.AddMember("structuredContent", sc, a);
  return r;
}

ex::ToolOutcome Bank::handoff(const json::Value& args) {
  auto reason = json::get_string(args, "reason");
  if (!reason) return mcp::tool_error("Missing required argument: reason");
  const std::string ticket = "HO-" + std::to_string(next_ticket_++);
  json::Document r = ex::text_result(
      "I've requested a handoff to a customer service agent (ticket " + ticket +
      "). An agent will join shortly. Reason: " + std::string(*reason));
  auto& a = r.GetAllocator();
  json::Value sc(rapidjson::kObjectType);
  sc.AddMember("ticketId", json::str(ticket, a), a);
  sc.AddMember("reason", json::str(*reason, a), a);
  sc.AddMember("status", "queued", a);
  r.AddMember("structuredContent", sc, a);
  return r;
}

void Bank::register_tools(ex::Server& server) {
  server.add_tool({
      .name = "welcome_customer",
      .title = "Welcome Customer",
      .description = "Greets the customer and summarises their accounts. Call it at the start of "
                     "a conversation.",
      .annotations = R"({"readOnlyHint": true})",
      .meta = R"({"welcomeTool": true})",
      .handler = [this](const json::Value&) { return welcome(); },
  });
  server.add_tool({
      .name = "list_accounts",
      .title = "List Accounts",
      .description = "Lists the customer's accounts with type, balance and whether each is locked.",
      .output_schema = std::string(R"({"type": "object", "properties": {"accounts": {"type": "array", "items": )") +
                       kAccountSchema + R"(}}, "required": ["accounts"]})",
      .annotations = R"({"readOnlyHint": true})",
      .handler = [this](const json::Value&) { return list_accounts(); },
  });
  server.add_tool({
      .name = "get_account_balance",
      .title = "Get Account Balance",
      .description = "Returns the current balance of one account.",
      .input_schema = R"({
        "type": "object",
        "properties": {"accountId": {"type": "string", "description": "e.g. acc_savings_001"}},
        "required": ["accountId"],
        "additionalProperties": false
      })",
      .output_schema = R"({
        "type": "object",
        "properties": {"accountId": {"type": "string"}, "balance": {"type": "number"},
                       "currency": {"type": "string"}},
        "required": ["accountId", "balance", "currency"]
      })",
      .annotations = R"({"readOnlyHint": true})",
      .handler = [this](const json::Value& args) { return balance(args); },
  });
  server.add_tool({
      .name = "prepare_money_transfer",
      .title = "Prepare Money Transfer",
      .description = "Prepares a transfer between the customer's accounts for confirmation; no "
                     "money moves. A locked source account hands off to a customer service agent.",
      .input_schema = R"({
        "type": "object",
        "properties": {
          "fromAccountId": {"type": "string", "description": "Account to transfer from"},
          "toAccountId": {"type": "string", "description": "Account to transfer to"},
          "amount": {"type": "number", "minimum": 0.01, "description": "Amount in USD"},
          "memo": {"type": "string", "description": "Optional note"}
        },
        "required": ["fromAccountId", "toAccountId", "amount"],
        "additionalProperties": false
      })",
      .handler = [this](const json::Value& args) { return prepare_transfer(args); },
  });
  server.add_tool({
      .name = "request_agent_handoff",
      .title = "Request Agent Handoff",
      .description = "Hands the conversation over to a human customer service agent.",
      .input_schema = R"({
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "Why an agent is needed"}},
        "required": ["reason"],
        "additionalProperties": false
      })",
      .output_schema = R"({
        "type": "object",
        "properties": {"ticketId": {"type": "string"}, "reason": {"type": "string"},
                       "status": {"type": "string"}},
        "required": ["ticketId", "reason", "status"]
      })",
      .handler = [this](const json::Value& args) { return handoff(args); },
  });
}

void Bank::add_transfer_tool(ex::Server& server, const std::string& name) {
  server.add_tool({
      .name = name,
      .title = "Transfer Money",
      .description = "Moves money between the customer's accounts after the customer confirms it "
                     "(asks through elicitation). A declined confirmation moves nothing.",
      .input_schema = R"({
        "type": "object",
        "properties": {
          "fromAccountId": {"type": "string", "description": "Account to transfer from"},
          "toAccountId": {"type": "string", "description": "Account to transfer to"},
          "amount": {"type": "number", "minimum": 0.01, "description": "Amount in USD"}
        },
        "required": ["fromAccountId", "toAccountId", "amount"],
        "additionalProperties": false
      })",
      .annotations = R"({"destructiveHint": true})",
      .context_handler = [this](const json::Value& args, ex::CallContext& ctx) { return transfer(args, ctx); },
  });
}

}  // namespace

int main(int argc, char** argv) {
  ex::Server server("bank-server", "0.1.0");
  Bank bank;
  bank.register_tools(server);
  const std::vector<ex::Flag> flags = {
      {"--transfer-tool", "add a tool of this name that moves money once the user confirms, e.g. transfer_money",
       [&](std::string_view v) {
         if (v.empty()) return false;
         bank.add_transfer_tool(server, std::string(v));
         return true;
       }},
  };
  return ex::run_main(server, argc, argv, flags);
}
