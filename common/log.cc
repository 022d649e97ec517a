#include "common/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

namespace copse {

Status InitLogging(const LogOptions& options) {
  spdlog::level::level_enum level = spdlog::level::from_str(options.level);
  if (level == spdlog::level::off && options.level != "off") {
    return InvalidArgument("unknown log level '" + options.level +
                           "' (expected trace, debug, info, warn, error, critical or off)");
  }
  std::vector<spdlog::sink_ptr> sinks;
  if (options.to_stderr) {
    auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    err->set_level(spdlog::level::from_str(options.stderr_level));
    sinks.push_back(std::move(err));
  }
  if (!options.file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.file.parent_path(), ec);
    try {
      sinks.push_back(
          std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file.string(), false));
    } catch (const spdlog::spdlog_ex& e) {
      return IoError("cannot open log file " + options.file.string() + ": " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>(options.process, sinks.begin(), sinks.end());
  logger->set_level(level);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %L [%n] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

void ShutdownLogging() { spdlog::shutdown(); }

}  // namespace copse
