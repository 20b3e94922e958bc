#include "pulse/adapters/providers/endpoint_locality.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers {
namespace {

constexpr std::string_view kHostPrefix = "the base URL's host is ";

using core::ToAbsl;

constexpr std::array<core::WireName<Locality>, 2> kLocalities = {{
    {Locality::kLocal, "local"},
    {Locality::kRemote, "remote"},
}};

constexpr std::array<core::WireName<LocalitySetting>, 3> kSettings = {{
    {LocalitySetting::kAuto, "auto"},
    {LocalitySetting::kLocal, "local"},
    {LocalitySetting::kRemote, "remote"},
}};

HostLocality Local(std::string_view what) {
  return {Locality::kLocal, absl::StrCat(ToAbsl(kHostPrefix), ToAbsl(what))};
}

HostLocality Remote(std::string_view what) {
  return {Locality::kRemote, absl::StrCat(ToAbsl(kHostPrefix), ToAbsl(what))};
}

// Dotted-quad IPv4 in the one form every resolver reads the same way: four decimal parts of
// 1-3 digits, no leading zero (inet_aton reads 010 as octal 8), each at most 255.
std::optional<std::array<std::uint8_t, 4>> CanonicalIpv4(std::string_view text) {
  std::array<std::uint8_t, 4> out{};
  std::size_t part = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    const std::string_view digits =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part == 4 || digits.empty() || digits.size() > 3 ||
        (digits.size() > 1 && digits.front() == '0')) {
      return std::nullopt;
    }
    int value = 0;
    for (char c : digits) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return std::nullopt;
      }
      value = value * 10 + (c - '0');
    }
    if (value > 255) {
      return std::nullopt;
    }
    out[part++] = static_cast<std::uint8_t>(value);
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  if (part != 4) {
    return std::nullopt;
  }
  return out;
}

HostLocality ClassifyIpv4(const std::array<std::uint8_t, 4>& a) {
  if (a[0] == 127) {
    return Local("a loopback address");
  }
  if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168)) {
    return Local("a private address");
  }
  if (a[0] == 169 && a[1] == 254) {
    return Local("a link-local address");
  }
  return Remote("an address outside the loopback, private and link-local ranges");
}

// Every label is numeric (decimal or 0x-hex): something a resolver may read as an IPv4
// address in a form CanonicalIpv4 refused.
bool LooksNumeric(std::string_view host) {
  for (absl::string_view label : absl::StrSplit(ToAbsl(host), '.')) {
    if (label.empty()) {
      continue;
    }
    absl::string_view digits = label;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      digits.remove_prefix(2);
    }
    for (char c : digits) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
        return false;
      }
    }
    if (!absl::ascii_isdigit(static_cast<unsigned char>(label[0]))) {
      return false;
    }
  }
  return true;
}

HostLocality ClassifyIpv6(std::string_view host) {
  std::array<std::uint8_t, 16> b{};
  const std::string text(host);
  if (text.find('%') != std::string::npos || inet_pton(AF_INET6, text.c_str(), b.data()) != 1) {
    return Remote("not a well-formed IPv6 address (zone ids are not taken)");
  }
  bool zero_prefix = true;
  for (int i = 0; i < 10; ++i) {
    zero_prefix = zero_prefix && b[i] == 0;
  }
  if (zero_prefix && b[10] == 0xff && b[11] == 0xff) {
    HostLocality mapped = ClassifyIpv4({b[12], b[13], b[14], b[15]});
    mapped.reason += " (IPv4-mapped)";
    return mapped;
  }
  bool loopback = b[15] == 1;
  for (int i = 0; i < 15; ++i) {
    loopback = loopback && b[i] == 0;
  }
  if (loopback) {
    return Local("a loopback address");
  }
  if ((b[0] & 0xfe) == 0xfc) {
    return Local("a private address (unique local)");
  }
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) {
    return Local("a link-local address");
  }
  return Remote("an address outside the loopback, private and link-local ranges");
}

}  // namespace

std::string_view ToString(Locality locality) {
  return core::WireNameOf(kLocalities, locality, "remote");
}

std::optional<LocalitySetting> ParseLocalitySetting(std::string_view text) {
  return core::WireValueOf(kSettings, text);
}

std::string_view ToString(LocalitySetting setting) {
  return core::WireNameOf(kSettings, setting, "auto");
}

HostLocality ClassifyHost(std::string_view host) {
  if (host.empty()) {
    return Remote("empty");
  }
  if (absl::EqualsIgnoreCase(ToAbsl(host), "localhost")) {
    return Local("localhost");
  }
  if (host.find(':') != std::string_view::npos) {
    return ClassifyIpv6(host);
  }
  if (std::optional<std::array<std::uint8_t, 4>> v4 = CanonicalIpv4(host); v4.has_value()) {
    return ClassifyIpv4(*v4);
  }
  if (LooksNumeric(host)) {
    return Remote(
        "a numeric host that is not a canonical dotted-quad IPv4 address (hex, octal, "
        "zero-padded, short or trailing-dot forms are read differently by resolvers)");
  }
  return Remote("a host name other than localhost (names are not resolved to decide)");
}

absl::StatusOr<Destination> DecideDestination(const ProviderEntry& entry, std::string_view host,
                                              bool custom_base_url, LocalitySetting setting) {
  const bool hosted = entry.route != core::InferenceRoute::kLocalModelServer;
  Destination out;
  out.setting = setting;
  switch (setting) {
    case LocalitySetting::kRemote:
      out.locality = Locality::kRemote;
      out.reason = "declared remote by the operator (provider locality remote)";
      return out;
    case LocalitySetting::kLocal:
      if (hosted && !custom_base_url) {
        return absl::InvalidArgumentError(absl::StrCat(
            ToAbsl(entry.name),
            " is a hosted API reached at its own address, a third party that cannot be declared "
            "local (--provider-locality local, --provider-trusted-local); give "
            "--provider-base-url a model server you run first"));
      }
      out.locality = Locality::kLocal;
      out.reason =
          "declared local by the operator (provider locality local: trusted without "
          "checking the address)";
      return out;
    case LocalitySetting::kAuto:
      break;
  }
  if (hosted) {
    out.locality = Locality::kRemote;
    out.reason = absl::StrCat(ToAbsl(entry.name), " is a hosted API",
                              custom_base_url ? "; a base URL in front of it is treated as a "
                                                "proxy to it"
                                              : "");
    return out;
  }
  HostLocality host_locality = ClassifyHost(host);
  out.locality = host_locality.locality;
  out.reason = std::move(host_locality.reason);
  return out;
}

}  // namespace pulse::adapters::providers
