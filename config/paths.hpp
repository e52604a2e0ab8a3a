#pragma once
// Paths in gateway.yaml are relative to the file's directory, so a file
// behaves the same whatever directory mcpgw is started from (a client that
// launches `mcpgw --stdio` picks that directory, not the user). The loader
// resolves every path it reads with these, after ${VAR} interpolation, and
// hands the rest of the gateway absolute paths only.
#include <string>

namespace mcpgw::config {

/// The absolute directory of the configuration file `source` (a relative
/// `source` is taken from the current directory): the base of its paths.
std::string base_dir_of(const std::string& source);

/// `path` made absolute against `base_dir` (unchanged when absolute already)
/// and lexically normal (`.`, `..` and doubled slashes folded; symlinks are
/// left alone). Empty stays empty. Every key that names a file goes
/// through this.
std::string resolve_path(const std::string& base_dir, const std::string& path);

/// A command to run: one with a slash is a path (resolve_path); one without
/// is left to the PATH lookup at start.
std::string resolve_command(const std::string& base_dir, const std::string& command);

}  // namespace mcpgw::config
