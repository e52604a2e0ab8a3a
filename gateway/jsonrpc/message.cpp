#include "jsonrpc/message.hpp"

#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <cstring>
#include <map>

namespace mcpgw::jsonrpc {
namespace {

using Writer = json::Writer;

void write_head(Writer& w, const Id& id) {
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  w.Key("id");
  w.RawValue(id.json().data(), id.json().size(), rapidjson::kNumberType);
}

/// The text of each message's numeric "id" exactly as written: a SAX pass
/// over a body with numbers kept as text. In a batch, key i is the i-th
/// element of the top-level array; a single message is key 0.
class IdTexts : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, IdTexts> {
 public:
  explicit IdTexts(bool batch) : batch_(batch), level_(batch ? 2 : 1) {}

  static std::map<std::size_t, std::string> of(std::string_view body, bool batch) {
    IdTexts h(batch);
    rapidjson::Reader reader;
    rapidjson::MemoryStream ms(body.data(), body.size());
    reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag>(ms, h);
    return std::move(h.found_);
  }

  bool Default() { return value_done(); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (at_id_) found_[index_] = std::string(s, n);
    return value_done();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    at_id_ = depth_ == level_ && std::string_view(s, n) == "id";
    return true;
  }
  bool StartObject() { return open(); }
  bool StartArray() { return open(); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  bool open() {
    at_id_ = false;
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return value_done();
  }
  bool value_done() {
    at_id_ = false;
    if (batch_ && depth_ == 1) ++index_;
    return true;
  }

  bool batch_;
  int level_;
  int depth_ = 0;
  std::size_t index_ = 0;
  bool at_id_ = false;
  std::map<std::size_t, std::string> found_;
};

/// Whether a numeric id may be written back other than as it was sent:
/// RapidJSON keeps integers of 64 bits exactly, but not larger ones,
/// fractions and exponents (doubles), nor the sign of "-0".
bool may_differ(const json::Value& id, std::string_view body) {
  if (id.IsDouble()) return true;
  return id.IsNumber() && id.IsInt() && id.GetInt() == 0 && body.find("-0") != std::string_view::npos;
}

}  // namespace

bool valid_id(const json::Value& id) { return id.IsString() || id.IsNumber(); }

Result<Message> Message::from(json::Document doc, std::string_view source) {
  Id id;
  if (const json::Value* v = json::find(doc, "id")) {
    id = *v;
    if (!source.empty() && may_differ(*v, source)) {
      auto texts = IdTexts::of(source, false);
      if (auto it = texts.find(0); it != texts.end()) id = Id::number(it->second);
    }
  }
  return classify(std::move(doc), std::move(id));
}

Result<Message> Message::classify(json::Document doc, Id id_as_sent) {
  if (!doc.IsObject()) return Error{"message must be a JSON object"};
  auto version = json::get_string(doc, "jsonrpc");
  if (!version || *version != "2.0") return Error{"\"jsonrpc\" must be \"2.0\""};
  const json::Value* method = json::find(doc, "method");
  const json::Value* id = json::find(doc, "id");
  if (method) {
    if (!method->IsString()) return Error{"\"method\" must be a string"};
    if (const json::Value* p = json::find(doc, "params"); p && !p->IsObject() && !p->IsArray())
      return Error{"\"params\" must be an object or an array"};
    if (!id) return Message(std::move(doc), Kind::Notification, Id());
    if (!valid_id(*id)) return Error{"\"id\" must be a string or a number"};
    return Message(std::move(doc), Kind::Request, std::move(id_as_sent));
  }
  bool has_result = json::find(doc, "result") != nullptr;
  const json::Value* err = json::find(doc, "error");
  if (has_result && err) return Error{"a response has both \"result\" and \"error\""};
  if (!has_result && !err) return Error{"message has no \"method\" and is not a response"};
  if (!id || !(valid_id(*id) || id->IsNull())) return Error{"response \"id\" is invalid"};
  if (err && (!err->IsObject() || !json::find(*err, "code") || !(*err)["code"].IsInt()))
    return Error{"\"error\" must be an object with an integer \"code\""};
  return Message(std::move(doc), err ? Kind::ErrorResponse : Kind::Response, std::move(id_as_sent));
}

std::string_view Message::method() const {
  auto m = json::get_string(doc_, "method");
  return m ? *m : std::string_view{};
}

namespace {

/// The id of the `index`-th message of `body` as its sender wrote it;
/// `texts` are read from the body the first time a number needs them.
Id id_as_sent(const json::Value& doc, std::string_view body, bool batch, std::size_t index,
              std::optional<std::map<std::size_t, std::string>>& texts) {
  const json::Value* v = json::find(doc, "id");
  if (!v || !valid_id(*v)) return Id();
  if (!may_differ(*v, body)) return Id(*v);
  if (!texts) texts = IdTexts::of(body, batch);
  auto it = texts->find(index);
  return it == texts->end() ? Id(*v) : Id::number(it->second);
}

}  // namespace

Parsed parse(std::string_view body, std::size_t max_batch) {
  Parsed out;
  auto doc = json::parse(body);
  if (!doc) {
    out.errors.push_back(make_error(Id(), kParseError, "Parse error: " + doc.error()));
    return out;
  }
  // An invalid message becomes an error response that keeps its id when
  // usable, so the peer can match it.
  std::optional<std::map<std::size_t, std::string>> texts;
  auto classify = [&](json::Document one, std::size_t index) {
    Id id = id_as_sent(one, body, out.batch, index, texts);
    auto msg = Message::classify(std::move(one), id);
    if (!msg)
      out.errors.push_back(make_error(id, kInvalidRequest, "Invalid Request: " + msg.error()));
    else
      out.messages.push_back(std::move(*msg));
  };
  if (!doc->IsArray()) {
    classify(std::move(*doc), 0);
    return out;
  }
  if (doc->Empty()) {
    out.errors.push_back(make_error(Id(), kInvalidRequest, "Invalid Request: empty batch"));
    return out;
  }
  out.batch = true;
  if (max_batch > 0 && doc->Size() > max_batch) {
    out.oversized_batch = doc->Size();
    return out;
  }
  std::size_t index = 0;
  for (auto& item : doc->GetArray()) {
    json::Document one = json::clone(item);
    classify(std::move(one), index++);
  }
  return out;
}

Parsed parse_keeping(std::string&& body, std::size_t max_batch) {
  Parsed out = parse(std::string_view(body), max_batch);
  if (out.batch || out.messages.size() != 1 || out.messages.front().method() != "tools/call") return out;
  // The document owns copies of what it read: the text may move.
  auto kept = std::make_shared<RawArguments>(RawArguments{std::move(body), {}});
  if (auto arguments = scan_request_arguments(kept->text)) {
    kept->arguments = *arguments;
    out.messages.front().raw_arguments_ = std::move(kept);
  }
  return out;
}

std::variant<Message, Unreadable> read(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc) return Unreadable{"not JSON (" + doc.error() + ")", answer_id_in(text)};
  std::optional<std::int64_t> answers;
  if (const json::Value* id = json::find(*doc, "id"); id && id->IsInt64() && !json::find(*doc, "method"))
    answers = id->GetInt64();
  auto msg = Message::from(std::move(*doc), text);
  if (!msg) return Unreadable{msg.error(), answers};
  return std::move(*msg);
}

std::optional<Message> Message::relayed(std::shared_ptr<const void> owner, std::string_view text) {
  auto scanned = scan_response(text);
  if (!scanned) return std::nullopt;
  return relayed(std::move(owner), text, *scanned);
}

std::optional<Message> Message::relayed(std::string_view text, const Buffers& buffers) {
  // Scanned before it is copied: most messages that are not relayed (a
  // notification, an error) are told apart within their first members.
  auto scanned = scan_response(text);
  if (!scanned) return std::nullopt;
  std::shared_ptr<char[]> copy =
      buffers ? buffers(text.size()) : std::make_shared_for_overwrite<char[]>(text.size());
  std::memcpy(copy.get(), text.data(), text.size());
  const char* at = copy.get();
  auto rebase = [&](std::string_view part) { return std::string_view(at + (part.data() - text.data()), part.size()); };
  scanned->id = rebase(scanned->id);
  scanned->result = rebase(scanned->result);
  return relayed(std::move(copy), std::string_view(at, text.size()), *scanned);
}

std::optional<Message> Message::relayed(std::shared_ptr<const void> owner, std::string_view text,
                                        const ScannedResponse& scanned) {
  // A string id is never one of the gateway's own: the DOM path reads it.
  if (scanned.id.front() == '"') return std::nullopt;
  Id id = Id::number(scanned.id);
  json::Document head(rapidjson::kObjectType);
  head.AddMember("jsonrpc", "2.0", head.GetAllocator());
  head.AddMember("id", id.value(head.GetAllocator()), head.GetAllocator());
  Message m(std::move(head), Kind::Response, std::move(id));
  m.raw_ = std::make_shared<const RawResult>(RawResult{std::move(owner), text, scanned.result, scanned.facts});
  return m;
}

void Message::build() const {
  auto doc = json::parse(raw_->text);
  // The scan accepted it, so the parser does too.
  if (doc) doc_ = std::move(*doc);
  raw_.reset();
}

std::optional<std::int64_t> answer_id_in(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false, key = false;
  std::size_t key_start = 0;
  std::optional<std::int64_t> id;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') {
        in_string = false;
        if (!key) continue;
        std::string_view name = text.substr(key_start, i - key_start);
        std::size_t j = text.find_first_not_of(" \t\r", i + 1);
        if (j == std::string_view::npos || text[j] != ':') continue;
        if (name == "method") return std::nullopt;
        if (name == "id" && !id) {
          j = text.find_first_not_of(" \t\r", j + 1);
          std::int64_t v = 0;
          const char* end = text.data() + text.size();
          auto [stop, ec] = j == std::string_view::npos ? std::from_chars_result{end, std::errc::invalid_argument}
                                                        : std::from_chars(text.data() + j, end, v);
          if (ec != std::errc() || (stop != end && std::string_view(",} \t\r").find(*stop) == std::string_view::npos))
            return std::nullopt;
          id = v;
        }
      }
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
    else if (c == '"') {
      in_string = true;
      // A key is a string at the top level after '{' or ','.
      std::size_t prev = text.find_last_not_of(" \t\r", i == 0 ? 0 : i - 1);
      key = depth == 1 && i > 0 && prev != std::string_view::npos && (text[prev] == '{' || text[prev] == ',');
      key_start = i + 1;
    }
  }
  return id;
}

namespace {

/// `{"jsonrpc":"2.0","id":id,"<key>":value}`: a success or an error response.
std::string make_response(const Id& id, const char* key, const json::Value& value) {
  return json::written([&](Writer& w) {
    write_head(w, id);
    w.Key(key);
    value.Accept(w);
    w.EndObject();
  });
}

}  // namespace

std::string make_result(const Id& id, const json::Value& result) {
  return make_response(id, "result", result);
}

namespace {
constexpr std::string_view kResultHead = "{\"jsonrpc\":\"2.0\",\"id\":", kResultMid = ",\"result\":";
}  // namespace

std::string make_result_raw(const Id& id, std::string_view result_json) {
  // Sized once: a result of megabytes is copied once.
  std::string out;
  out.reserve(kResultHead.size() + id.json().size() + kResultMid.size() + result_json.size() + 1);
  out.append(kResultHead).append(id.json()).append(kResultMid).append(result_json).push_back('}');
  return out;
}

SplicedText make_result_spliced(const Id& id, std::shared_ptr<const RawResult> raw) {
  std::string head;
  head.reserve(kResultHead.size() + id.json().size() + kResultMid.size());
  head.append(kResultHead).append(id.json()).append(kResultMid);
  const std::string_view result = raw->result;
  return SplicedText(std::move(head), std::move(raw), result, "}");
}

std::string describe_error(const json::Value& error) {
  std::string text = "error";
  if (const auto* c = json::find(error, "code"); c && c->IsInt()) text += " " + std::to_string(c->GetInt());
  if (auto m = json::get_string(error, "message")) text += ": " + std::string(*m);
  return text;
}

std::string make_error_response(const Id& id, const json::Value& error) {
  return make_response(id, "error", error);
}

std::string make_error(const Id& id, int code, std::string_view message,
                       const json::Value* data) {
  return json::written([&](Writer& w) {
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
  });
}

namespace {

/// A request (with `id`) or a notification (without); `raw_arguments`, when
/// not empty, is written as the params' member "arguments" after the others.
std::string make_call(const std::int64_t* id, std::string_view method, const json::Value* params,
                      std::string_view raw_arguments = {}) {
  return json::written([&](Writer& w) {
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    if (id) {
      w.Key("id");
      w.Int64(*id);
    }
    w.Key("method");
    w.String(method.data(), static_cast<rapidjson::SizeType>(method.size()));
    if (!raw_arguments.empty()) {
      w.Key("params");
      w.StartObject();
      if (params && params->IsObject())
        for (const auto& m : params->GetObject()) {
          w.Key(m.name.GetString(), m.name.GetStringLength());
          m.value.Accept(w);
        }
      w.Key("arguments");
      w.RawValue(raw_arguments.data(), raw_arguments.size(), rapidjson::kObjectType);
      w.EndObject();
    } else if (params) {
      w.Key("params");
      params->Accept(w);
    }
    w.EndObject();
  });
}

}  // namespace

std::string make_request(std::int64_t id, std::string_view method, const json::Value* params) {
  return make_call(&id, method, params);
}

std::string make_request(std::int64_t id, std::string_view method, const json::Value* params,
                         std::string_view raw_arguments) {
  return make_call(&id, method, params, raw_arguments);
}

std::string make_notification(std::string_view method, const json::Value* params) {
  return make_call(nullptr, method, params);
}

}  // namespace mcpgw::jsonrpc
