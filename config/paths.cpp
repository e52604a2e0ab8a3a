#include "config/paths.hpp"

#include <filesystem>
#include <system_error>

namespace mcpgw::config {
namespace fs = std::filesystem;

std::string base_dir_of(const std::string& source) {
  std::error_code ec;
  fs::path file = fs::absolute(fs::path(source), ec);
  // absolute() fails only when the current directory is gone; the file's
  // own directory as written is then the best there is.
  if (ec) file = fs::path(source);
  return file.lexically_normal().parent_path().string();
}

std::string resolve_path(const std::string& base_dir, const std::string& path) {
  if (path.empty()) return path;
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base_dir) / p;
  std::string out = p.lexically_normal().string();
  // "dir/." normalises to "dir/": one spelling per directory.
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string resolve_command(const std::string& base_dir, const std::string& command) {
  return command.find('/') == std::string::npos ? command : resolve_path(base_dir, command);
}

}  // namespace mcpgw::config
