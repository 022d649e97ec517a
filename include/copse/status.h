// copse/status.h: Status and Result<T>, how Copse reports expected failures
// (I/O, network, bad input, corrupt data) without exceptions, in the engine
// and in the public API (docs/sdk.md). The code tells the caller what to do
// next: retry later (kUnavailable), give up on this input
// (kInvalidArgument, kCorruption), reconnect (kDisconnected), and so on. A
// vertex program's Status decides its exit code (copse/vertex.h).
//
//   copse::Result<int> Parse(std::string_view s);
//   copse::Status Use(std::string_view s) {
//     COPSE_ASSIGN_OR_RETURN(int n, Parse(s));   // returns the error, if any
//     if (n < 0) return copse::InvalidArgument("negative");
//     return copse::Status::Ok();
//   }
//
// Both are [[nodiscard]]: an ignored Status is a compiler warning.
// Thread-safety: plain values; safe to copy between threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace copse {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // Bad input from outside: fix the input, do not retry.
  kNotFound,            // The named thing does not exist.
  kAlreadyExists,       // The named thing exists already.
  kFailedPrecondition,  // The system is not in a state where this can work.
  kPermissionDenied,    // Authentication or authorisation refused.
  kResourceExhausted,   // A limit was hit (frame size, disk full, slots).
  kCorruption,          // Stored or received data failed a check.
  kIoError,             // A local file or device operation failed.
  kUnavailable,         // A peer is not reachable now: retry later.
  kDisconnected,        // A connection dropped: reconnect and retry.
  kDeadlineExceeded,    // A bounded wait ran out.
  kCancelled,           // The operation was cancelled by its owner.
  kInfeasible,          // A flow problem has no feasible solution.
  kDataLoss,            // Stored data is gone for good (its only copy was lost): regenerate it.
  kInternal,            // A bug; should not happen.
};

// Returns a short lower-case name for `code`, e.g. "not found".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "not found: no such file /data/x" (or "ok").
  std::string ToString() const;

  // Returns a copy whose message is "context: message".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string msg) {
  return {StatusCode::kInvalidArgument, std::move(msg)};
}
inline Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
inline Status AlreadyExists(std::string msg) {
  return {StatusCode::kAlreadyExists, std::move(msg)};
}
inline Status FailedPrecondition(std::string msg) {
  return {StatusCode::kFailedPrecondition, std::move(msg)};
}
inline Status PermissionDenied(std::string msg) {
  return {StatusCode::kPermissionDenied, std::move(msg)};
}
inline Status ResourceExhausted(std::string msg) {
  return {StatusCode::kResourceExhausted, std::move(msg)};
}
inline Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
inline Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
inline Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
inline Status Disconnected(std::string msg) { return {StatusCode::kDisconnected, std::move(msg)}; }
inline Status DeadlineExceeded(std::string msg) {
  return {StatusCode::kDeadlineExceeded, std::move(msg)};
}
inline Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
inline Status Infeasible(std::string msg) { return {StatusCode::kInfeasible, std::move(msg)}; }
inline Status DataLoss(std::string msg) { return {StatusCode::kDataLoss, std::move(msg)}; }
inline Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  // The error; Status::Ok() when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace copse

#define COPSE_CONCAT_INNER_(a, b) a##b
#define COPSE_CONCAT_(a, b) COPSE_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not ok. (Each
// use has a variable of its own, so uses may nest, e.g. in a lambda.)
#define COPSE_RETURN_IF_ERROR(expr) \
  COPSE_RETURN_IF_ERROR_IMPL_(COPSE_CONCAT_(copse_status_, __COUNTER__), expr)
#define COPSE_RETURN_IF_ERROR_IMPL_(var, expr) \
  do {                                         \
    ::copse::Status var = (expr);              \
    if (!var.ok()) return var;                 \
  } while (0)

// `lhs = value of rexpr` (a Result<T>), or returns its Status.
#define COPSE_ASSIGN_OR_RETURN(lhs, rexpr) \
  COPSE_ASSIGN_OR_RETURN_IMPL_(COPSE_CONCAT_(copse_result_, __LINE__), lhs, rexpr)
#define COPSE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
