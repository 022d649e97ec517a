#include "master/master_service.h"

#include <fmt/format.h>

#include "common/net/guard.h"

namespace copse::master {

MasterService::MasterService(asio::io_context& io, std::string secret)
    : server_(io, std::move(secret), "master", net::TransportOptions{}, this) {}

MasterService::~MasterService() { Stop(); }

void MasterService::Route(net::Protocol protocol, ProtocolService* service) {
  routes_[protocol] = service;
}

Status MasterService::Listen(const std::string& host, uint16_t port) {
  return server_.Listen(host, port);
}

void MasterService::Stop() {
  if (stopped_) return;
  stopped_ = true;
  server_.Stop();
}

void MasterService::OnFrame(net::Connection& conn, net::Frame frame) {
  // A request from outside (common/net/guard.h): each service answers its
  // own protocol's errors; whatever still escapes one closes this
  // connection only, logged with the peer by Connection::Close.
  auto it = routes_.find(frame.protocol);
  Status s = it != routes_.end()
                 ? net::GuardRequest([&] { return it->second->OnFrame(conn, frame); })
                 : InvalidArgument(fmt::format("the master does not serve the {} protocol",
                                               net::ProtocolName(frame.protocol)));
  if (!s.ok()) conn.Close(s);
}

void MasterService::OnClose(net::Connection& conn, const Status& why) {
  (void)why;
  for (auto& [protocol, service] : routes_) service->OnClose(conn);
}

}  // namespace copse::master
