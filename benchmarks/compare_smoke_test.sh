#!/usr/bin/env bash
# Runs //benchmarks:compare on tiny sizes without functorch and checks compare.json.
set -euo pipefail
out="${TEST_TMPDIR}/results"
benchmarks/compare --smoke --no-functorch --no-install --out "${out}" >"${TEST_TMPDIR}/table.md"
cat "${TEST_TMPDIR}/table.md"
/usr/bin/python3 - "${out}/compare.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
names = {r["workload"] for r in rows}
for w in ("per_op/eager", "per_op/vmap3", "per_op/grad_grad", "jvp_chain10/1e6",
          "vmap_matmul_chain/B256", "custom_function/vmap_grad/n1", "hessian/n16/jit",
          "per_sample/32-64-64-10/B64/loop"):
    assert w in names, w
for r in rows:
    assert set(r) >= {"workload", "threads", "ft", "functorch", "limit"}, r
    assert r["functorch"] is None, r
measured = [r for r in rows if r["ft"] is not None]
# Model figures that compare.py joins by name: each must reach the table with ft's figure.
for w in ("models/cnn_per_sample/B64", "models/ntk_cnn/N20_M5_S32",
          "models/transformer_per_sample/B32"):
    assert any(r["workload"] == w and r["ft"] is not None for r in rows), w
assert len(measured) >= 30, len(measured)
assert all(r["ft"] > 0 for r in measured)
print(f"compare.json: {len(rows)} rows, {len(measured)} with ft's figure")
PY

# Rounds: the sides alternate and each figure is the median over the rounds.
rounds="${TEST_TMPDIR}/rounds"
benchmarks/compare --smoke --no-functorch --no-install --rounds 3 --filter '^per_op/eager$' \
  --threads 1 --out "${rounds}" >"${TEST_TMPDIR}/rounds.md" 2>"${TEST_TMPDIR}/rounds.err"
# ft's suite ran once per round.
test "$(grep -c "^== ft eager" "${TEST_TMPDIR}/rounds.err")" -eq 3
grep -q "^== round 3 of 3" "${TEST_TMPDIR}/rounds.err"
/usr/bin/python3 - "${rounds}/compare.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["workload"] for r in rows] == ["per_op/eager"], rows
assert rows[0]["ft"] > 0 and rows[0]["ratios"] == [], rows  # no functorch: no ratio
print("rounds: per_op/eager measured over 3 rounds")
PY
