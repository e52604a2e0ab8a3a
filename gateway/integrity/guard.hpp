#pragma once
// The gateway's pins at run time: the ledger last read from the store, the
// records each catalog build adds to it, written back to the store.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <string>
#include <vector>

#include "integrity/store.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::integrity {

/// The ledger in force and its store.
class Guard {
 public:
  /// `store` null: pins are off.
  explicit Guard(std::shared_ptr<Store> store);

  /// Reads the store again; the ledger in force is replaced when it
  /// answers (an error is kept as why() and logged). `then` after that
  /// (maybe on another thread).
  void reload(std::function<void()> then = {});
  /// The ledger in force; null while it has never been read.
  std::shared_ptr<const Ledger> ledger() const;
  /// Why ledger() is null.
  std::string why() const;
  /// Waits up to `timeout` until the store has been read once (true); what
  /// judges once rather than as the pins arrive (`mcpgw check`) waits for it.
  bool await_read(std::chrono::milliseconds timeout) const;
  /// Adds `changes` to the ledger in force and writes them to the store
  /// (failures logged: the ledger in force holds them meanwhile).
  void record(const std::vector<Change>& changes);
  Store* store() const { return store_.get(); }
  /// record() changes nothing from now on (`mcpgw check`).
  void set_read_only() {
    util::MutexLock lk(mu_);
    read_only_ = true;
  }
  /// Ends the store's watch.
  void stop() {
    if (store_) store_->stop();
  }

 private:
  std::shared_ptr<Store> store_;
  mutable util::Mutex mu_;
  std::shared_ptr<const Ledger> ledger_ GUARDED_BY(mu_);
  std::string why_ GUARDED_BY(mu_) = "not read yet";
  mutable std::condition_variable read_;  ///< told when ledger_ is first set
  bool read_only_ GUARDED_BY(mu_) = false;
};

}  // namespace mcpgw::integrity
