"""Pairwise joints derived from a masked LM's unary conditionals (SPEC §2).

- :mod:`infill.joint.constructions` MLM, MRF, MRF-L, HCB, AG as pure functions of two tables
- :mod:`infill.joint.tables`        the tables of two positions from a model (batched passes)
- :mod:`infill.joint.metrics`       U-PPL, P-PPL, A-KL, G-KL over datasets of pairs; reports
- :mod:`infill.joint.decoder`       AG as a decoder for two-token gaps
"""
from infill.joint.constructions import (AG_MAX_ITERATIONS, JOINT_NAMES, AGInfo, ag, ag_objective,
                                        build_joints, conditionals, hcb, mlm, mrf, mrf_logits)
from infill.joint.decoder import decode_ag
from infill.joint.tables import PairTables, pair_tables, pair_tables_batch

__all__ = ["AG_MAX_ITERATIONS", "JOINT_NAMES", "AGInfo", "PairTables", "ag", "ag_objective",
           "build_joints", "conditionals", "decode_ag", "hcb", "mlm", "mrf", "mrf_logits",
           "pair_tables", "pair_tables_batch"]
