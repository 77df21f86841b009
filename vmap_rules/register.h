// ft/vmap_rules/register.h
//
// RegisterVmapRules: fills the kVmap slot of every built-in op with its batching rule. Called
// once (idempotent, thread-safe) by ft::vmap before its first use; code that walks the op
// table (the coverage tool, the completeness test) calls it first too.
//
// The rules are split by op family, one file each (elementwise.cc, reductions.cc, views.cc,
// indexing.cc, linalg.cc, sorting.cc, random.cc); each family file has a Register...Rules
// function listed in register.cc. A rule is a pure function of (physical value, optional
// batch dim) pairs (interpreters/vmap/vmap_interpreter.h) that calls the op once.
#ifndef FT_VMAP_RULES_REGISTER_H_
#define FT_VMAP_RULES_REGISTER_H_

namespace ft {

void RegisterVmapRules();

}  // namespace ft

#endif  // FT_VMAP_RULES_REGISTER_H_
