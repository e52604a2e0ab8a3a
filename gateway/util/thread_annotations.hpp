#pragma once
// Clang's thread-safety analysis (-Wthread-safety, scripts/thread-safety):
// the attribute macros and mutexes that carry them. libstdc++'s std::mutex
// and std::lock_guard carry none, so the analysis cannot see a lock taken
// through them; the gateway's mutexes are these instead. On GCC, which has
// no such analysis, every macro expands to nothing and the wrappers are
// std::mutex and std::lock_guard by another name.
//
//   mutable util::Mutex mu_;
//   int hits_ GUARDED_BY(mu_) = 0;
//   void bump_locked() REQUIRES(mu_);
//   ...
//   util::MutexLock lk(mu_);
//   ++hits_;
#include <mutex>
#include <shared_mutex>

namespace mcpgw::util {

// Macros know no namespace; they are defined in this one only so that the
// header opens it before any parenthesis (scripts/source-size.mjs).
#if defined(__clang__)
#define MCPGW_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define MCPGW_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) MCPGW_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY MCPGW_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) MCPGW_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) MCPGW_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) MCPGW_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) MCPGW_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) MCPGW_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) MCPGW_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) MCPGW_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) MCPGW_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) MCPGW_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) MCPGW_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) MCPGW_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define RETURN_CAPABILITY(x) MCPGW_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS MCPGW_THREAD_ANNOTATION(no_thread_safety_analysis)

/// std::mutex as a capability the analysis knows. Lock it through MutexLock
/// or UniqueLock; lock()/unlock() exist for them (and for std::scoped_lock).
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { m_.lock(); }
  void unlock() RELEASE() { m_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return m_.try_lock(); }

 private:
  friend class UniqueLock;
  std::mutex m_;
};

/// Holds a Mutex for its scope, like std::lock_guard.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

/// Holds a Mutex like std::unique_lock, for waiting on a
/// std::condition_variable: `cv.wait(lk.native())`. A wait gives the mutex
/// up and takes it again before it returns, so to the analysis the lock is
/// held throughout, which is what the code after the wait may rely on. A
/// predicate passed to wait() is a lambda the analysis checks on its own:
/// write the loop out (`while (!ready_) cv.wait(lk.native());`) or mark the
/// lambda REQUIRES(mu_).
class SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& mu) ACQUIRE(mu) : lk_(mu.m_) {}
  ~UniqueLock() RELEASE() {}
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

  /// Gives the mutex up before the end of the scope (and takes it again).
  void unlock() RELEASE() { lk_.unlock(); }
  void lock() ACQUIRE() { lk_.lock(); }

  /// The std::unique_lock, for std::condition_variable's waits only.
  std::unique_lock<std::mutex>& native() { return lk_; }

 private:
  std::unique_lock<std::mutex> lk_;
};

/// std::shared_mutex as a capability: many readers (ReaderLock) or one
/// writer (MutexLock's counterpart, WriterLock).
class CAPABILITY("mutex") SharedMutex {
 public:
  void lock() ACQUIRE() { m_.lock(); }
  void unlock() RELEASE() { m_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { m_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { m_.unlock_shared(); }

 private:
  std::shared_mutex m_;
};

/// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

/// Holds a SharedMutex shared (with other readers) for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace mcpgw::util
