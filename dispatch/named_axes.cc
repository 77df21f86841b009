#include "dispatch/named_axes.h"

#include <deque>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tensor/error.h"

namespace ft {
namespace {

// The interned names. A deque keeps each string at one address, so AxisNameString can
// hand out references while other threads intern new names.
struct NameTable {
  std::mutex mu;
  std::deque<std::string> names;
  absl::flat_hash_map<std::string, int64_t> ids;
};

NameTable& Names() {
  static auto* table = new NameTable();  // never destroyed: ids outlive static teardown
  return *table;
}

thread_local NamedAxis tls_axes[NamedAxes::kMaxNamedAxes];
thread_local int tls_depth = 0;

}  // namespace

int64_t AxisNameId(const std::string& name) {
  if (name.empty()) ThrowError("axis name: an axis name must not be empty");
  NameTable& table = Names();
  std::lock_guard<std::mutex> lock(table.mu);
  auto [it, inserted] = table.ids.try_emplace(name, static_cast<int64_t>(table.names.size()));
  if (inserted) table.names.push_back(name);
  return it->second;
}

const std::string& AxisNameString(int64_t id) {
  NameTable& table = Names();
  std::lock_guard<std::mutex> lock(table.mu);
  FT_CHECK(id >= 0 && id < static_cast<int64_t>(table.names.size()));
  return table.names[static_cast<size_t>(id)];
}

int NamedAxes::depth() { return tls_depth; }

const NamedAxis& NamedAxes::At(int i) {
  FT_CHECK(i >= 0 && i < tls_depth);
  return tls_axes[i];
}

NamedAxis& NamedAxes::MutableAt(int i) {
  FT_CHECK(i >= 0 && i < tls_depth);
  return tls_axes[i];
}

int NamedAxes::FindIndex(int64_t name_id) {
  for (int i = tls_depth - 1; i >= 0; --i) {
    if (tls_axes[i].name_id == name_id) return i;
  }
  return -1;
}

const NamedAxis* NamedAxes::Find(int64_t name_id) {
  const int i = FindIndex(name_id);
  return i < 0 ? nullptr : &tls_axes[i];
}

std::string NamedAxes::Describe() {
  if (tls_depth == 0) return "none";
  std::string out;
  for (int i = 0; i < tls_depth; ++i) {
    const NamedAxis& a = tls_axes[i];
    absl::StrAppend(&out, i == 0 ? "" : ", ", "'", AxisNameString(a.name_id), "' (",
                    a.is_vmap() ? "vmap" : "processes", ", ", a.size, " members)");
  }
  return out;
}

NamedAxisScope::NamedAxisScope(const NamedAxis& axis) {
  if (tls_depth >= NamedAxes::kMaxNamedAxes) {
    ThrowError("axis name: more than ", NamedAxes::kMaxNamedAxes,
               " named axes in effect at once (naming '", AxisNameString(axis.name_id), "')");
  }
  tls_axes[tls_depth++] = axis;
}

NamedAxisScope::~NamedAxisScope() {
  FT_CHECK(tls_depth > 0);
  tls_axes[--tls_depth] = NamedAxis{};
}

}  // namespace ft
