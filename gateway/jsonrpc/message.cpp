#include "jsonrpc/message.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mcpgw::jsonrpc {
namespace {

const json::Value kNull;

using Writer = json::Writer;

void write_head(Writer& w, const json::Value& id) {
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  w.Key("id");
  id.Accept(w);
}

}  // namespace

bool valid_id(const json::Value& id) { return id.IsString() || id.IsNumber(); }

Result<Message> Message::from(json::Document doc) {
  if (!doc.IsObject()) return Error{"message must be a JSON object"};
  auto version = json::get_string(doc, "jsonrpc");
  if (!version || *version != "2.0") return Error{"\"jsonrpc\" must be \"2.0\""};
  const json::Value* method = json::find(doc, "method");
  const json::Value* id = json::find(doc, "id");
  if (method) {
    if (!method->IsString()) return Error{"\"method\" must be a string"};
    if (const json::Value* p = json::find(doc, "params"); p && !p->IsObject() && !p->IsArray())
      return Error{"\"params\" must be an object or an array"};
    if (!id) return Message(std::move(doc), Kind::Notification);
    if (!valid_id(*id)) return Error{"\"id\" must be a string or a number"};
    return Message(std::move(doc), Kind::Request);
  }
  bool has_result = json::find(doc, "result") != nullptr;
  const json::Value* err = json::find(doc, "error");
  if (has_result == (err != nullptr))
    return Error{"message has no \"method\" and is not a response"};
  if (!id || !(valid_id(*id) || id->IsNull())) return Error{"response \"id\" is invalid"};
  if (err && (!err->IsObject() || !json::find(*err, "code") || !(*err)["code"].IsInt()))
    return Error{"\"error\" must be an object with an integer \"code\""};
  return Message(std::move(doc), err ? Kind::ErrorResponse : Kind::Response);
}

std::string_view Message::method() const {
  auto m = json::get_string(doc_, "method");
  return m ? *m : std::string_view{};
}

const json::Value& Message::id() const {
  const json::Value* id = json::find(doc_, "id");
  return id ? *id : kNull;
}

namespace {

/// Classifies one message into `out`. An invalid one becomes an error
/// response that keeps its id when usable, so the peer can match it.
void classify(json::Document doc, Parsed& out) {
  json::Document id;  // its own allocator: outlives `doc`, which `from` consumes
  if (const json::Value* i = json::find(doc, "id"); i && valid_id(*i)) id.CopyFrom(*i, id.GetAllocator());
  auto msg = Message::from(std::move(doc));
  if (!msg)
    out.errors.push_back(make_error(id, kInvalidRequest, "Invalid Request: " + msg.error()));
  else
    out.messages.push_back(std::move(*msg));
}

}  // namespace

Parsed parse(std::string_view body) {
  Parsed out;
  auto doc = json::parse(body);
  if (!doc) {
    out.errors.push_back(make_error(kNull, kParseError, "Parse error: " + doc.error()));
    return out;
  }
  if (!doc->IsArray()) {
    classify(std::move(*doc), out);
    return out;
  }
  if (doc->Empty()) {
    out.errors.push_back(make_error(kNull, kInvalidRequest, "Invalid Request: empty batch"));
    return out;
  }
  out.batch = true;
  for (auto& item : doc->GetArray()) {
    json::Document one;
    one.CopyFrom(item, one.GetAllocator());
    classify(std::move(one), out);
  }
  return out;
}

namespace {

/// `{"jsonrpc":"2.0","id":id,"<key>":value}`: a success or an error response.
std::string make_response(const json::Value& id, const char* key, const json::Value& value) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  write_head(w, id);
  w.Key(key);
  value.Accept(w);
  w.EndObject();
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace

std::string make_result(const json::Value& id, const json::Value& result) {
  return make_response(id, "result", result);
}

std::string make_result_raw(const json::Value& id, std::string_view result_json) {
  std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
  out += json::write(id);
  out += ",\"result\":";
  out += result_json;
  out += '}';
  return out;
}

std::string describe_error(const json::Value& error) {
  std::string text = "error";
  if (const auto* c = json::find(error, "code"); c && c->IsInt()) text += " " + std::to_string(c->GetInt());
  if (auto m = json::get_string(error, "message")) text += ": " + std::string(*m);
  return text;
}

std::string make_error_response(const json::Value& id, const json::Value& error) {
  return make_response(id, "error", error);
}

std::string make_error(const json::Value& id, int code, std::string_view message,
                       const json::Value* data) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  write_head(w, id);
  w.Key("error");
  w.StartObject();
  w.Key("code");
  w.Int(code);
  w.Key("message");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  if (data) {
    w.Key("data");
    data->Accept(w);
  }
  w.EndObject();
  w.EndObject();
  return std::string(sb.GetString(), sb.GetSize());
}

namespace {

/// A request (with `id`) or a notification (without).
std::string make_call(const std::int64_t* id, std::string_view method, const json::Value* params) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  if (id) {
    w.Key("id");
    w.Int64(*id);
  }
  w.Key("method");
  w.String(method.data(), static_cast<rapidjson::SizeType>(method.size()));
  if (params) {
    w.Key("params");
    params->Accept(w);
  }
  w.EndObject();
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace

std::string make_request(std::int64_t id, std::string_view method, const json::Value* params) {
  return make_call(&id, method, params);
}

std::string make_notification(std::string_view method, const json::Value* params) {
  return make_call(nullptr, method, params);
}

}  // namespace mcpgw::jsonrpc
