"""One library function per job of the command line, each returning typed results that write
their own JSON; the front ends (``infill run``, ``joint``, ``sample``, ``rescore``) only parse and print.

- :func:`fill_inputs` (``infill run``): the gaps of many inputs filled, batch by batch;
- :func:`pair_joints` (``infill joint TEXT``) and :func:`joint_metrics` (``infill joint
  --data``): the pairwise joints of a masked LM, for one text or over held-out pairs;
- :func:`sample_inputs` (``infill sample``): Metropolis-Hastings samples of many inputs;
- :func:`rescore_inputs` (``infill rescore``): complete texts ranked by energy.

Loading, torchrun sharding and per-input errors go through :mod:`infill.runner`.
"""
from infill.jobs.fill import FillRequest, FillRun, InputFill, fill_inputs
from infill.jobs.inputs import Input, as_inputs, reads_leiden
from infill.jobs.joint import JointRequest, PairJoints, joint_metrics, pair_joints
from infill.jobs.rescore import Ranking, ScoredText, rescore_inputs
from infill.jobs.sample import InputSample, sample_inputs

__all__ = ["FillRequest", "FillRun", "InputFill", "fill_inputs", "Input", "as_inputs",
           "reads_leiden", "JointRequest", "PairJoints", "pair_joints", "joint_metrics",
           "InputSample", "sample_inputs", "Ranking", "ScoredText", "rescore_inputs"]
