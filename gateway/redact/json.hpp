#pragma once
// Redaction of JSON: the string values of a document (a result, arguments,
// an error), and the string literals of JSON text (an audit line). Object
// keys, numbers and the structure are never touched, so what comes out is
// the same JSON with secrets masked in its strings.
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"
#include "redact/redactor.hpp"

namespace mcpgw::redact {

/// Masks the secrets in every string value under `v` (allocating the new
/// strings from `a`) and counts them in `tally`; returns whether anything
/// changed. Binary payloads are left alone: the `data` of a content item of
/// type image or audio, and a resource's `blob` (base64, not text).
bool mask_json(const Redactor& r, json::Value& v, json::Allocator& a, Tally& tally);

/// Writes `text` to `out` with the secrets in its string literals masked
/// (each literal read with its escapes, masked, and written back escaped;
/// a literal followed by `:`, a key, is kept); returns false, leaving `out`
/// alone, when nothing is detected. Literals are found by their quotes, so
/// text that is not JSON is read without harm.
bool mask_json_text(const Redactor& r, std::string_view text, std::string& out, Tally& tally);

/// The characters of JSON string literal body `raw` (the text between its
/// quotes) with its escapes resolved; a lone surrogate escape reads as U+FFFD.
std::string unescape(std::string_view raw);

/// `s` escaped as the body of a JSON string literal (quotes, backslashes
/// and control characters).
std::string escape(std::string_view s);

}  // namespace mcpgw::redact
