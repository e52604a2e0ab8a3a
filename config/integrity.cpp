#include "config/integrity.hpp"

#include "config/keys.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

Integrity read_integrity(const yaml::Value& v, const std::string& redis) {
  Integrity i;
  if (v.is_null()) return i;
  yaml::Fields f = v.fields(keys::kIntegrity);
  if (auto pins = f.get("pins"))
    i.pins = pins->one_of<Integrity::Pins>(
        {{"off", Integrity::Pins::Off}, {"warn", Integrity::Pins::Warn}, {"block", Integrity::Pins::Block}});
  if (auto store = f.get("store"); store && !store->text().empty()) {
    // One place for the pins: two would disagree about what was approved.
    if (!redis.empty()) store->fail("the pins are kept in Redis when cluster.redis is set; remove integrity.store");
    i.store = store->path();
  }
  f.read("strip_invisible", i.strip_invisible);
  return i;
}

}  // namespace mcpgw::config
