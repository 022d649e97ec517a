// Guards at the edges of a daemon's handlers (docs/architecture.md "Bad
// requests"). A daemon serves many peers on one event loop; one request must
// never take it down, and a daemon whose own state is broken must not run on.
// Every handler edge is one of two kinds, and says which in its code:
//   - a request from outside (a frame from a peer, an HTTP request): its
//     handler runs inside GuardRequest, which turns any exception (a
//     malformed Cap'n Proto pointer met while reading, a library's type
//     error, an allocation a hostile size asked for) into a failed Status for
//     that request. The caller answers the sender with it, or closes that
//     connection (which logs it once, with the peer); the daemon serves
//     everyone else. Handlers change their state only after everything that
//     can fail has succeeded (validate, store, then change memory), so a
//     request that fails leaves no half-made change.
//   - work on the daemon's own state (timers, the scheduling loop, recovery):
//     it runs inside GuardState. An exception there means that state may be
//     half changed; the daemon logs what it was doing at critical level,
//     flushes the log and aborts, to be restarted and to rebuild its state
//     from its store, rather than run on with state it cannot trust.
// Thread-safety: pure functions.
#pragma once

#include <exception>
#include <string_view>

#include "copse/status.h"

namespace copse::net {

// The Status a request fails with for the exception `e`: kCorruption for a
// Cap'n Proto error (a malformed message), kResourceExhausted for an
// allocation that failed, kInternal naming what() otherwise.
Status ExceptionStatus(std::exception_ptr e);

// Logs `what` and the exception at critical level, flushes the log, aborts.
[[noreturn]] void DieOfException(std::string_view what, std::exception_ptr e);

// Runs `fn` (returning Status) for one request; an exception becomes its
// failed Status.
template <typename Fn>
Status GuardRequest(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (...) {
    return ExceptionStatus(std::current_exception());
  }
}

// Runs `fn` on the daemon's own state; an exception stops the process.
template <typename Fn>
void GuardState(std::string_view what, Fn&& fn) noexcept {
  try {
    fn();
  } catch (...) {
    DieOfException(what, std::current_exception());
  }
}

}  // namespace copse::net
