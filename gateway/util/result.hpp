#pragma once
// A value or an error message: how every user-caused failure travels.
#include <string>
#include <utility>
#include <variant>

namespace mcpgw {

/// The error half of a Result: a human-readable message.
struct Error {
  std::string message;
};

/// Holds either a T or an Error. Cheap to move; no exceptions involved.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

/// Result for operations that produce nothing but may fail.
template <>
class Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error.message)), failed_(true) {}
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return err_; }

 private:
  std::string err_;
  bool failed_ = false;
};

}  // namespace mcpgw
