#include "tree/control_flow.h"

#include "tree/transforms.h"

namespace ft::tree_internal {

void SameStructureSlot::Record(const char* what, const char* role, const TreeDef& got) {
  if (!def.has_value()) {
    def = got;
    return;
  }
  CheckLike(what, role, "one another", *def, got);
}

}  // namespace ft::tree_internal
