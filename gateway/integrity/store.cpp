#include "integrity/store.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/random.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::integrity {
namespace asio = boost::asio;

void MemoryStore::load(std::function<void(Result<Ledger>)> done) { done(ledger_); }

void MemoryStore::save(std::vector<Change> changes, std::function<void(Result<void>)> done) {
  apply_changes(ledger_, changes);
  if (done) done(Result<void>{});
}

namespace {

/// An flock held for the life of the object.
class FileLock {
 public:
  FileLock(const std::string& path, int how) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0)
      while (::flock(fd_, how) != 0 && errno == EINTR) {
      }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::string();
    return Error{path + ": cannot read: " + std::strerror(errno)};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

/// inotify on the store's directory: a rename over the file (a write by
/// anyone) is told, unless the file holds what this process wrote last.
struct FileStore::Watch : std::enable_shared_from_this<Watch> {
  Watch(asio::io_context& io, int fd, std::string name) : strand(asio::make_strand(io)), stream(strand, fd), file(std::move(name)) {}
  asio::strand<asio::io_context::executor_type> strand;
  asio::posix::stream_descriptor stream;
  std::string file;  ///< the store's file name in its directory
  util::Mutex mu;
  std::function<void()> changed GUARDED_BY(mu);
  char buf[4096];

  /// Tells `changed`, under the lock, so that stop() waits for it.
  void tell() {
    util::MutexLock lk(mu);
    if (changed) changed();
  }

  void read() {
    stream.async_read_some(asio::buffer(buf), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
      if (ec) return;  // stopped
      bool ours = false;
      for (std::size_t at = 0; at + sizeof(inotify_event) <= n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(self->buf + at);
        if (e->len && self->file == e->name) ours = true;
        at += sizeof(inotify_event) + e->len;
      }
      if (ours) self->tell();
      self->read();
    });
  }
};

FileStore::FileStore(std::string path, asio::io_context* io) : path_(std::move(path)), io_(io) {}

FileStore::~FileStore() { stop(); }

Result<std::shared_ptr<FileStore>> FileStore::open(const std::string& path, asio::io_context* io) {
  auto store = std::shared_ptr<FileStore>(new FileStore(path, io));
  auto first = store->read();
  if (!first) return Error{first.error()};
  return store;
}

Result<Ledger> FileStore::read() const {
  FileLock lock(path_ + ".lock", LOCK_SH);
  if (!lock.held()) return Error{path_ + ".lock: cannot open: " + std::strerror(errno)};
  auto text = read_text(path_);
  if (!text) return Error{text.error()};
  auto ledger = parse_ledger(*text);
  if (!ledger) return Error{path_ + ": " + ledger.error()};
  return ledger;
}

Result<void> FileStore::write(const std::vector<Change>& changes) {
  FileLock lock(path_ + ".lock", LOCK_EX);
  if (!lock.held()) return Error{path_ + ".lock: cannot open: " + std::strerror(errno)};
  auto text = read_text(path_);
  if (!text) return Error{text.error()};
  auto ledger = parse_ledger(*text);
  if (!ledger) return Error{path_ + ": " + ledger.error()};
  apply_changes(*ledger, changes);
  const std::string out = write_ledger(*ledger);
  const std::string tmp = path_ + ".tmp." + unique_hex(8);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Error{tmp + ": cannot create: " + std::strerror(errno)};
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::write(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Error{tmp + ": cannot write: " + why};
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Error{path_ + ": cannot replace: " + why};
  }
  return {};
}

void FileStore::load(std::function<void(Result<Ledger>)> done) { done(read()); }

void FileStore::save(std::vector<Change> changes, std::function<void(Result<void>)> done) {
  auto r = write(changes);
  if (done) done(std::move(r));
}

void FileStore::watch(std::function<void()> changed) {
  if (!io_ || watch_) return;
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    spdlog::warn("integrity: cannot watch {} ({}); approvals take effect on SIGHUP", path_, std::strerror(errno));
    return;
  }
  const std::string dir = directory_of(path_);
  if (::inotify_add_watch(fd, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) < 0) {
    spdlog::warn("integrity: cannot watch {} ({}); approvals take effect on SIGHUP", dir, std::strerror(errno));
    ::close(fd);
    return;
  }
  watch_ = std::make_shared<Watch>(*io_, fd, path_.substr(dir.size() + (dir == "/" ? 0 : 1)));
  {
    util::MutexLock lk(watch_->mu);
    watch_->changed = std::move(changed);
  }
  asio::post(watch_->strand, [w = watch_] { w->read(); });
}

void FileStore::stop() {
  if (!watch_) return;
  {
    util::MutexLock lk(watch_->mu);
    watch_->changed = nullptr;
  }
  asio::post(watch_->strand, [w = watch_] {
    boost::system::error_code ignored;
    w->stream.close(ignored);
  });
  watch_.reset();
}

}  // namespace mcpgw::integrity
