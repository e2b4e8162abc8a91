"""Pairwise joints derived from a masked LM's unary conditionals (METHODS §2).

- :mod:`infill.joint.conditional_tables` :class:`PairTables`, the two conditional tables of a pair
- :mod:`infill.joint.constructions` MLM, MRF, MRF-L, HCB, AG as pure functions of two tables
- :mod:`infill.joint.tables`        the tables of two positions from a model (batched passes)
- :mod:`infill.joint.metrics`       U-PPL, P-PPL, A-KL, G-KL over datasets of pairs; reports
- :mod:`infill.joint.decoder`       AG as a decoder for two-token gaps
"""

from infill.lazy import lazy_exports

_EXPORTS = {
    "AG_MAX_ITERATIONS": "infill.joint.constructions",
    "JOINT_NAMES": "infill.joint.constructions",
    "AGInfo": "infill.joint.constructions",
    "ag": "infill.joint.constructions",
    "ag_objective": "infill.joint.constructions",
    "build_joints": "infill.joint.constructions",
    "conditionals": "infill.joint.constructions",
    "hcb": "infill.joint.constructions",
    "mlm": "infill.joint.constructions",
    "mrf": "infill.joint.constructions",
    "mrf_logits": "infill.joint.constructions",
    "decode_ag": "infill.joint.decoder",
    "PairTables": "infill.joint.conditional_tables",
    "pair_tables": "infill.joint.tables",
    "pair_tables_batch": "infill.joint.tables",
}

__all__ = ["AG_MAX_ITERATIONS", "JOINT_NAMES", "AGInfo", "PairTables", "ag", "ag_objective",
           "build_joints", "conditionals", "decode_ag", "hcb", "mlm", "mrf", "mrf_logits",
           "pair_tables", "pair_tables_batch"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
