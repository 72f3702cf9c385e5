// aggnet-ns3: one aggnet scenario (platform YAML + schedule name) in ns-3's packet-level
// model, printing its time, its route check and the closed forms as JSON
// (docs/validation.md).
//
//   aggnet-ns3 --platform FILE [--set K=V]... --schedule NAME --gradient G [--chunk C]
//
// Per site a host and a router joined by a point-to-point access link (the cluster's
// access bandwidth and delay), per WAN link a point-to-point link; global routing with
// each interface's metric = its link delay in 10 us units, so routes follow delay like
// aggnet's (checked pair by pair). Packets are UDP datagrams sized so that each is MTU
// bytes on the wire (PPP 2 + IPv4 20 + UDP 8 + padding = aggnet's header) and carries
// MTU - header bytes of gradient; every chunk is cut into such packets, the last one
// shorter. Senders pace packets at their access line rate; queues never drop.
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <map>
#include <set>

#include "common/config_error.h"
#include "common/units.h"
#include "model/network_math.h"
#include "model/routing.h"
#include "validation/scenario.h"

namespace aggnet::validation {
namespace {

using namespace ns3;

constexpr std::uint32_t kIpUdpPpp = 2 + 20 + 8;

struct Site {
  Ptr<Node> host, router;
  Ipv4Address address;
  std::map<std::uint16_t, Ptr<Socket>> sockets;  // port -> receiving socket
  Ptr<Socket> sender;
  std::uint64_t access_bps = 0;
  // Pending sends: (destination site, port, packet payload bytes), paced at line rate.
  std::deque<std::tuple<int, std::uint16_t, std::uint32_t>> queue;
  bool sending = false;
};

class Ns3Scenario {
 public:
  explicit Ns3Scenario(Scenario scenario) : s_(std::move(scenario)), routing_(s_.platform) {}

  void build();
  bool routes_match(std::string& first_mismatch) const;
  void start();
  double time_s() const { return done_s_; }
  std::uint64_t packets() const { return packets_; }
  const Scenario& scenario() const { return s_; }

 private:
  // One message of `payload` gradient bytes from site `from` to site `to` on `port`.
  void send_message(int from, int to, std::uint16_t port, std::uint64_t payload);
  // One message of `payload` to each of `receivers`, interleaved chunk by chunk (chunk i
  // to every receiver, then chunk i + 1), as aggnet's cluster hands them to its link.
  void send_round_robin(int from, const std::vector<int>& receivers, std::uint16_t port,
                        std::uint64_t payload);
  void pump(int site);
  void on_receive(int site, std::uint16_t port, Ptr<Socket> socket);
  void on_complete(int site, std::uint16_t port);
  void listen(int site, std::uint16_t port, std::uint64_t packets);
  std::uint64_t packets_of(std::uint64_t payload) const;
  void ring_try_advance();

  Scenario s_;
  Routing routing_;
  std::vector<Site> sites_;
  std::uint32_t mtu_ = 0, header_ = 0;
  std::map<std::pair<int, std::uint16_t>, std::uint64_t> expected_, received_;
  double done_s_ = 0;
  std::uint64_t packets_ = 0;
  // Ring: per position, the next step it may send and the steps it has received.
  std::vector<int> ring_next_;
  std::vector<std::set<int>> ring_got_;
  int ring_begin_ = 0, ring_end_ = 0;
};

std::uint64_t Ns3Scenario::packets_of(std::uint64_t payload) const {
  const std::uint64_t per = mtu_ - header_, c = s_.chunk_bytes;
  std::uint64_t n = 0;
  for (std::uint64_t off = 0; off < payload; off += c)
    n += (std::min(c, payload - off) + per - 1) / per;
  return n;
}

void Ns3Scenario::build() {
  const Platform& p = s_.platform;
  const WanLinkParams framing = access_link(p.sites.at(0));
  mtu_ = static_cast<std::uint32_t>(framing.mtu_bytes);
  header_ = static_cast<std::uint32_t>(framing.header_bytes);
  message_bytes_on_wire(s_, s_.chunk_bytes);  // the same MTU and header on every link
  const int n = static_cast<int>(p.sites.size());
  sites_.resize(n);
  NodeContainer all;
  for (auto& site : sites_) {
    site.host = CreateObject<Node>();
    site.router = CreateObject<Node>();
    all.Add(site.host);
    all.Add(site.router);
  }
  InternetStackHelper stack;
  stack.Install(all);
  Ipv4AddressHelper addresses;
  TrafficControlHelper tc;
  int subnet = 0;
  auto connect = [&](Ptr<Node> a, Ptr<Node> b, const WanLinkParams& link) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(link.bandwidth_bps)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu_ - 2));
    p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(link.delay_ps)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("100000000p")));
    NetDeviceContainer devices = p2p.Install(a, b);
    const std::string base =
        "10." + std::to_string(subnet / 256) + "." + std::to_string(subnet % 256) + ".0";
    ++subnet;
    addresses.SetBase(base.c_str(), "255.255.255.252");
    Ipv4InterfaceContainer ifs = addresses.Assign(devices);
    tc.Uninstall(devices);  // no queue discipline: the device's FIFO, as aggnet's links
    const auto metric =
        static_cast<std::uint16_t>(std::max<std::uint64_t>(1, link.delay_ps / 10'000'000));
    for (std::uint32_t k = 0; k < 2; ++k) ifs.Get(k).first->SetMetric(ifs.Get(k).second, metric);
    return ifs;
  };
  for (int i = 0; i < n; ++i) {
    const auto access = access_link(p.sites[i]);
    sites_[i].access_bps = access.bandwidth_bps;
    sites_[i].address = connect(sites_[i].host, sites_[i].router, access).GetAddress(0);
  }
  for (const auto& link : p.links)
    connect(sites_[link.a].router, sites_[link.b].router, link.params);
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  for (int i = 0; i < n; ++i) {
    sites_[i].sender = Socket::CreateSocket(sites_[i].host, UdpSocketFactory::GetTypeId());
    sites_[i].sender->Bind();
  }
}

// Walks ns-3's forwarding tables router by router and compares with aggnet's paths.
bool Ns3Scenario::routes_match(std::string& first_mismatch) const {
  std::map<Ptr<Node>, int> router_site;
  for (std::size_t i = 0; i < sites_.size(); ++i)
    router_site[sites_[i].router] = static_cast<int>(i);
  const int n = static_cast<int>(sites_.size());
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      std::vector<int> path{s};
      Ptr<Node> at = sites_[s].router;
      while (at != sites_[d].router && path.size() <= sites_.size()) {
        Ipv4Header header;
        header.SetDestination(sites_[d].address);
        Socket::SocketErrno err;
        auto route = at->GetObject<Ipv4>()->GetRoutingProtocol()->RouteOutput(Create<Packet>(),
                                                                              header, nullptr, err);
        if (!route) break;
        auto device = DynamicCast<PointToPointNetDevice>(route->GetOutputDevice());
        auto channel = device->GetChannel();
        Ptr<Node> next = channel->GetDevice(0) == device ? channel->GetDevice(1)->GetNode()
                                                         : channel->GetDevice(0)->GetNode();
        if (!router_site.count(next)) break;
        at = next;
        path.push_back(router_site[next]);
      }
      if (path != routing_.path(s, d)) {
        first_mismatch = s_.platform.sites[s].code + "->" + s_.platform.sites[d].code;
        return false;
      }
    }
  }
  return true;
}

void Ns3Scenario::send_message(int from, int to, std::uint16_t port, std::uint64_t payload) {
  send_round_robin(from, {to}, port, payload);
}

void Ns3Scenario::send_round_robin(int from, const std::vector<int>& receivers, std::uint16_t port,
                                   std::uint64_t payload) {
  const std::uint64_t per = mtu_ - header_, c = s_.chunk_bytes;
  for (std::uint64_t off = 0; off < payload; off += c) {
    const std::uint64_t chunk = std::min(c, payload - off);
    for (int to : receivers)
      for (std::uint64_t p = 0; p < chunk; p += per)
        sites_[from].queue.emplace_back(to, port,
                                        static_cast<std::uint32_t>(std::min(per, chunk - p)));
  }
  if (!sites_[from].sending) pump(from);
}

// Emits the site's next packet, then the one after it one wire time later (line rate).
void Ns3Scenario::pump(int site) {
  auto& me = sites_[site];
  if (me.queue.empty()) {
    me.sending = false;
    return;
  }
  me.sending = true;
  const auto [to, port, payload] = me.queue.front();
  me.queue.pop_front();
  const std::uint32_t wire = payload + header_;
  me.sender->SendTo(Create<Packet>(wire - kIpUdpPpp), 0,
                    InetSocketAddress(sites_[to].address, port));
  ++packets_;
  Simulator::Schedule(PicoSeconds(serialization_ps(wire, me.access_bps)), &Ns3Scenario::pump, this,
                      site);
}

void Ns3Scenario::listen(int site, std::uint16_t port, std::uint64_t packets) {
  expected_[{site, port}] += packets;
  if (sites_[site].sockets.count(port)) return;
  auto socket = Socket::CreateSocket(sites_[site].host, UdpSocketFactory::GetTypeId());
  socket->SetAttribute("RcvBufSize", UintegerValue(1u << 30));
  socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
  socket->SetRecvCallback(MakeCallback(&Ns3Scenario::on_receive, this, site, port));
  sites_[site].sockets[port] = socket;
}

void Ns3Scenario::on_receive(int site, std::uint16_t port, Ptr<Socket> socket) {
  while (socket->Recv()) {
    if (++received_[{site, port}] == expected_[{site, port}]) on_complete(site, port);
  }
}

void Ns3Scenario::on_complete(int site, std::uint16_t port) {
  done_s_ = std::max(done_s_, Simulator::Now().GetSeconds());
  const Schedule& sch = s_.schedule;
  if (is_ring_collective(sch.collective)) {
    const auto& order = sch.rounds[0].groups[0].sites;
    const int pos = static_cast<int>(std::find(order.begin(), order.end(), site) - order.begin());
    ring_got_[pos].insert(port - 1000);
    ring_try_advance();
  } else if (sch.collective == Collective::kParameterServer && port == 1) {
    const auto& group = sch.rounds[0].groups[0].sites;
    for (std::size_t i = 1; i < group.size(); ++i)
      send_message(group[0], group[i], 2, s_.gradient_bytes);
  }
}

// A ring position sends step r + 1 once its rule allows: it has step r (receive), and its
// successor has its step r (sendrecv), or every position has step r (barrier).
void Ns3Scenario::ring_try_advance() {
  const auto& order = s_.schedule.rounds[0].groups[0].sites;
  const int n = static_cast<int>(order.size());
  const std::uint64_t segment = ring_segment_bytes(s_);
  for (bool moved = true; moved;) {
    moved = false;
    for (int pos = 0; pos < n; ++pos) {
      const int r = ring_next_[pos] - 1;  // the step it last sent
      if (ring_next_[pos] >= ring_end_ || !ring_got_[pos].count(r)) continue;
      bool ok = true;
      if (s_.schedule.ring_step == RingStepRule::kSendRecv)
        ok = ring_got_[(pos + 1) % n].count(r) > 0;
      if (s_.schedule.ring_step == RingStepRule::kBarrier)
        for (int q = 0; q < n; ++q) ok = ok && ring_got_[q].count(r) > 0;
      if (!ok) continue;
      send_message(order[pos], order[(pos + 1) % n],
                   static_cast<std::uint16_t>(1000 + ring_next_[pos]), segment);
      ++ring_next_[pos];
      moved = true;
    }
  }
}

void Ns3Scenario::start() {
  const Schedule& sch = s_.schedule;
  const auto& group = sch.rounds.at(0).groups.at(0).sites;
  if (is_ring_collective(sch.collective)) {
    const int n = static_cast<int>(group.size());
    ring_begin_ = sch.collective == Collective::kAllGather ? n - 1 : 0;
    ring_end_ = sch.collective == Collective::kReduceScatter ? n - 1 : 2 * (n - 1);
    ring_next_.assign(n, ring_begin_ + 1);
    ring_got_.assign(n, {});
    const std::uint64_t packets = packets_of(ring_segment_bytes(s_));
    for (int pos = 0; pos < n; ++pos) {
      for (int r = ring_begin_; r < ring_end_; ++r)
        listen(group[(pos + 1) % n], static_cast<std::uint16_t>(1000 + r), packets);
      send_message(group[pos], group[(pos + 1) % n], static_cast<std::uint16_t>(1000 + ring_begin_),
                   ring_segment_bytes(s_));
    }
  } else if (sch.collective == Collective::kPointToPoint) {
    for (const auto& pair : sch.rounds[0].groups) {
      for (int m = 0; m < sch.messages; ++m)
        listen(pair.sites[1], 1, packets_of(s_.gradient_bytes));
      for (int m = 0; m < sch.messages; ++m)
        send_message(pair.sites[0], pair.sites[1], 1, s_.gradient_bytes);
    }
  } else if (sch.collective == Collective::kUnicastAllToAll) {
    const std::size_t n = group.size();
    for (std::size_t i = 0; i < n; ++i) {
      listen(group[i], 1, (n - 1) * packets_of(s_.gradient_bytes));
      std::vector<int> receivers;
      for (std::size_t k = 1; k < n; ++k) receivers.push_back(group[(i + k) % n]);
      send_round_robin(group[i], receivers, 1, s_.gradient_bytes);
    }
  } else if (sch.collective == Collective::kParameterServer) {
    for (std::size_t i = 1; i < group.size(); ++i) {
      listen(group[0], 1, packets_of(s_.gradient_bytes));
      listen(group[i], 2, packets_of(s_.gradient_bytes));
      send_message(group[i], group[0], 1, s_.gradient_bytes);
    }
  } else {
    throw ConfigError("<command line>", 0, "--schedule",
                      "a host-based collective (ring family, p2p:, parameter-server:, "
                      "unicast-all-to-all)");
  }
}

int harness(int argc, char** argv) {
  std::vector<std::string> rest;
  Time::SetResolution(Time::PS);
  Ns3Scenario scenario(parse_scenario(argc, argv, rest));
  scenario.build();
  std::string mismatch;
  const bool routes_ok = scenario.routes_match(mismatch);
  scenario.start();
  Simulator::Run();
  nlohmann::json out{{"simulator", "ns-3"},
                     {"time_s", scenario.time_s()},
                     {"packets_sent", scenario.packets()},
                     {"routes_match_aggnet", routes_ok},
                     {"closed_form", closed_form_json(scenario.scenario())}};
  if (!routes_ok) out["first_route_mismatch"] = mismatch;
  Simulator::Destroy();
  std::cout << out.dump(1) << "\n";
  return routes_ok ? 0 : 1;
}

}  // namespace
}  // namespace aggnet::validation

int main(int argc, char** argv) {
  return aggnet::validation::run_main(aggnet::validation::harness, argc, argv);
}
