#pragma once
// Where the pins are kept: memory (integrity.store empty), a file
// (integrity.store), or Redis (cluster.redis; gateway/cluster implements
// Store there). Every gateway reading the same file or Redis sees the same
// pins, and is told when another process (a replica, `mcpgw pins approve`)
// changed them.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "integrity/pins.hpp"
#include "util/result.hpp"

namespace boost::asio {
class io_context;
}

namespace mcpgw::integrity {

/// A place the ledger is kept.
class Store {
 public:
  virtual ~Store() = default;
  /// Reads every record; `done` gets them, or why not (may run on another
  /// thread, or before load() returns).
  virtual void load(std::function<void(Result<Ledger>)> done) = 0;
  /// Writes `changes` over the records of their tools, keeping the others
  /// (another process may have written them), and tells the other readers.
  virtual void save(std::vector<Change> changes, std::function<void(Result<void>)> done) = 0;
  /// `changed` is told whenever another process may have changed the
  /// records (and when a store that was unreachable is back). Once.
  virtual void watch(std::function<void()> changed) = 0;
  /// Ends the watch: `changed` is not told again once this returns.
  virtual void stop() {}
  /// How logs name it ("memory", "file /var/lib/mcpgw/pins.json", "Redis at ...").
  virtual std::string describe() const = 0;
};

/// The pins of this process alone.
class MemoryStore final : public Store {
 public:
  void load(std::function<void(Result<Ledger>)> done) override;
  void save(std::vector<Change> changes, std::function<void(Result<void>)> done) override;
  void watch(std::function<void()>) override {}
  std::string describe() const override { return "memory"; }

 private:
  Ledger ledger_;  // only the gateway's own rebuilds write it, one at a time
};

/// The pins in a JSON file. A write takes a lock (`<file>.lock`, flock),
/// reads the file, applies its changes and replaces the file atomically
/// (a temporary file renamed over it), so two writers never lose each
/// other's records; a reader never sees half a file.
class FileStore final : public Store {
 public:
  /// The store at `path` (absolute); an error when the file exists and is
  /// not a pins file or cannot be read. `io`: the loop the watch runs on
  /// (inotify on the file's directory); null for no watch (the CLI).
  static Result<std::shared_ptr<FileStore>> open(const std::string& path, boost::asio::io_context* io);
  ~FileStore() override;

  void load(std::function<void(Result<Ledger>)> done) override;
  void save(std::vector<Change> changes, std::function<void(Result<void>)> done) override;
  void watch(std::function<void()> changed) override;
  std::string describe() const override { return "file " + path_; }
  void stop() override;

  /// Reads the file under the lock.
  Result<Ledger> read() const;
  /// save(), synchronously.
  Result<void> write(const std::vector<Change>& changes);

 private:
  FileStore(std::string path, boost::asio::io_context* io);
  struct Watch;
  std::string path_;
  boost::asio::io_context* io_;
  std::shared_ptr<Watch> watch_;
};

}  // namespace mcpgw::integrity
