#include "common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>
#include <vector>

#include "common/text.h"

namespace copse {
namespace {

// %*: the message, escaped to one line (common/text.h). Messages of plain
// printable ASCII, nearly all of them, are copied as they are.
class EscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*tm*/,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    bool plain = true;
    for (char ch : text) {
      auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c >= 0x7F) {
        plain = false;
        break;
      }
    }
    if (plain) {
      dest.append(text.data(), text.data() + text.size());
      return;
    }
    std::string escaped = EscapeForLog(text);
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<EscapedMessage>();
  }
};

}  // namespace

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
      sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
          options.file.string(), static_cast<size_t>(options.max_file_bytes),
          static_cast<size_t>(options.max_files)));
    } catch (const spdlog::spdlog_ex& e) {
      return IoError("cannot open log file " + options.file.string() + ": " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>(options.process, sinks.begin(), sinks.end());
  logger->set_level(level);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<EscapedMessage>('*').set_pattern("%Y-%m-%d %H:%M:%S.%e %L [%n] %*");
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

void ShutdownLogging() { spdlog::shutdown(); }

}  // namespace copse
