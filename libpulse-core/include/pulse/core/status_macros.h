// Propagation macros for absl::Status / absl::StatusOr<T>.
// Debian's Abseil 20220623 ships none, so the core defines its own. They evaluate their
// argument exactly once and return the error unchanged (no annotation, no allocation).
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PULSE_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define PULSE_STATUS_MACROS_CONCAT_(x, y) PULSE_STATUS_MACROS_CONCAT_INNER_(x, y)

// Returns the status from the enclosing function when `expr` is not OK.
#define PULSE_RETURN_IF_ERROR(expr)                                                        \
  do {                                                                                     \
    ::absl::Status pulse_status_macro_status_ = ::pulse::core::internal::AsStatus((expr)); \
    if (!pulse_status_macro_status_.ok()) {                                                \
      return pulse_status_macro_status_;                                                   \
    }                                                                                      \
  } while (false)

// PULSE_ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; on error returns its
// status, otherwise moves the value into `lhs` (which may be a declaration: `auto x`).
#define PULSE_ASSIGN_OR_RETURN(lhs, expr) \
  PULSE_ASSIGN_OR_RETURN_IMPL_(PULSE_STATUS_MACROS_CONCAT_(pulse_statusor_, __LINE__), lhs, expr)
// NOLINTBEGIN(bugprone-macro-parentheses): `statusor` names, `lhs` may declare, a variable.
#define PULSE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) {                                   \
    return std::move(statusor).status();                  \
  }                                                       \
  lhs = std::move(statusor).value()
// NOLINTEND(bugprone-macro-parentheses)
namespace pulse::core::internal {

inline const ::absl::Status& AsStatus(const ::absl::Status& status) { return status; }
inline ::absl::Status AsStatus(::absl::Status&& status) { return std::move(status); }
template <typename T>
::absl::Status AsStatus(const ::absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace pulse::core::internal
