#include "common/net/guard.h"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <new>
#include <string>

namespace copse::net {

Status ExceptionStatus(std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const kj::Exception& k) {
    return Corruption(std::string("malformed message: ") + k.getDescription().cStr());
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("the request needed more memory than could be allocated");
  } catch (const std::exception& x) {
    return Internal(std::string("unexpected error: ") + x.what());
  } catch (...) {
  }
  return Internal("unexpected error of an unknown kind");
}

void DieOfException(std::string_view what, std::exception_ptr e) {
  Status s = ExceptionStatus(e);
  spdlog::critical(
      "fault in this daemon's own state while {}: {}; stopping (its state is rebuilt "
      "from its store when it starts again)",
      what, s.message());
  spdlog::default_logger()->flush();
  std::abort();
}

}  // namespace copse::net
