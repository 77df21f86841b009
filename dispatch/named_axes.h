// ft/dispatch/named_axes.h
//
// Named axes: the names that collectives (psum, all_gather, ..., //distributed) refer to,
// and the calling thread's stack of the axes in effect.
//
// An axis is named two ways:
//   - a vmap with an axis_name (VmapOptions::axis_name): its examples are the members of
//     the axis, and a collective over the name reduces or gathers across them;
//   - a process axis (ft::dist::bind_axis): the processes of a group are its members.
// Names are interned once per process into small ids (AxisNameId), so that an op's
// arguments carry an int, and a jit trace records it like any other int.
//
// NOTE: [Varying and invariant values]
// Over an axis, a value either varies (each member holds its own: a batched tensor over a
// vmap axis, a process's own data over a process axis) or is invariant (one value every
// member holds: an unbatched tensor, a result of psum). The grad transform tracks this for
// the axes named outside its level, which is what makes the gradient of psum right
// (interpreters/grad/grad_interpreter.h, NOTE: [Gradients across named axes]). NamedAxis
// tells how to read it off a value that the grad level did not make: a vmap axis by whether
// the value is batched at its level (`mapped_at`), a process axis by assumption (a value
// from outside a grad level is a process's own, so it varies).
//
// Invariants: the stack is per thread and changes only through NamedAxisScope (RAII), in
// nesting order; at most kMaxNamedAxes are in effect; the innermost entry of a name shadows
// outer ones (as with nested vmaps of one axis name in JAX).
//
// Example:
//   const int64_t id = AxisNameId("batch");
//   NamedAxis axis{id, /*vmap_level=*/3, /*size=*/8};
//   NamedAxisScope scope(axis);                 // done by vmap(f, {.axis_name = "batch"})
//   NamedAxes::Find(id)->size == 8;
#ifndef FT_DISPATCH_NAMED_AXES_H_
#define FT_DISPATCH_NAMED_AXES_H_

#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace ft {

// AxisNameId interns `name` (non-empty; throws ft::Error otherwise) and returns its id,
// stable for the process. AxisNameString is the inverse (FT_CHECKs the id).
int64_t AxisNameId(const std::string& name);
const std::string& AxisNameString(int64_t id);

struct NamedAxis {
  int64_t name_id = -1;
  // >= 0: a vmap axis, mapped by the vmap level of this number; -1: a process axis.
  int64_t vmap_level = -1;
  // The number of members: the batch size, or the number of processes.
  int64_t size = 0;
  // A process axis: the binding that owns the group (//distributed's), opaque here.
  void* binding = nullptr;
  // A vmap axis: whether `t` is batched at `level` (set by //interpreters/vmap).
  bool (*mapped_at)(const Tensor& t, int64_t level) = nullptr;
  // A process axis: whether the grad transforms treat the inputs they differentiate as each
  // process's own (true) or as parameters every process shares (false, the default);
  // ft::dist::PerProcessInputs sets it for a scope.
  bool inputs_vary = false;

  bool is_vmap() const { return vmap_level >= 0; }
};

class NamedAxes {
 public:
  static constexpr int kMaxNamedAxes = 64;
  // depth: how many axes are in effect on this thread (0 on the fast path of every op).
  static int depth();
  // At(i): entry i from the outermost.
  static const NamedAxis& At(int i);
  // Find: the innermost entry named `name_id`, or nullptr.
  static const NamedAxis* Find(int64_t name_id);
  // FindIndex: its position (At), or -1.
  static int FindIndex(int64_t name_id);
  // MutableAt(i): entry i, for the scopes that change a setting of an axis in effect.
  static NamedAxis& MutableAt(int i);
  // Describe: e.g. "'batch' (vmap, 8 members), 'dp' (processes, 2 members)", or "none".
  static std::string Describe();
};

// NamedAxisScope puts `axis` in effect for its lifetime. Throws ft::Error past
// kMaxNamedAxes.
class NamedAxisScope {
 public:
  explicit NamedAxisScope(const NamedAxis& axis);
  ~NamedAxisScope();
  NamedAxisScope(const NamedAxisScope&) = delete;
  NamedAxisScope& operator=(const NamedAxisScope&) = delete;
};

}  // namespace ft

#endif  // FT_DISPATCH_NAMED_AXES_H_
