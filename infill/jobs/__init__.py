"""One library function per job of the command line, each returning typed results that write
their own JSON; the front ends (``infill run``, ``joint``, ``sample``, ``rescore``) only parse and print.

- :func:`fill_inputs` (``infill run``): the gaps of many inputs filled, batch by batch;
- :func:`pair_joints` (``infill joint TEXT``) and :func:`joint_metrics` (``infill joint
  --data``): the pairwise joints of a masked LM, for one text or over held-out pairs;
- :func:`sample_inputs` (``infill sample``): Metropolis-Hastings samples of many inputs;
- :func:`rescore_inputs` (``infill rescore``): complete texts ranked by energy;
- :func:`infill.jobs.check.check` (``infill check``, ``infill.check``): doubtful readings
  flagged (imported from its module: the name is the module's).

Loading, torchrun sharding and per-input errors go through :mod:`infill.jobs.sharding`.
"""
from infill.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["FillRequest", "FillRun", "InputFill", "fill_inputs"], "infill.jobs.fill"),
    **dict.fromkeys(["Input", "as_inputs", "reads_leiden"], "infill.jobs.inputs"),
    **dict.fromkeys(["JointRequest", "PairJoints", "joint_metrics", "pair_joints"],
                    "infill.jobs.joint"),
    **dict.fromkeys(["Ranking", "ScoredText", "rescore_inputs"], "infill.jobs.rescore"),
    **dict.fromkeys(["InputSample", "sample_inputs"], "infill.jobs.sample"),
    **dict.fromkeys(["CheckRequest", "InputCheck", "check_editions"], "infill.jobs.check"),
}
"""Each public name's module: imported on first use, so that one job's request (the command
line's options) does not import the other jobs."""

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
