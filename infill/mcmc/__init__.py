"""Metropolis–Hastings from the energies a masked LM defines (SPEC §3).

- :mod:`infill.mcmc.energy` E_local / E_raw of sequences, rescoring
- :mod:`infill.mcmc.kernel` the proposal, the acceptance rule, temperature/block schedules
- :mod:`infill.mcmc.chains` chains over a gap (``mh``), text-level ``sample``, their results
"""

from infill.lazy import lazy_exports

_EXPORTS = {
    "BLOCK_SCHEDULES": "infill.mcmc.chains",
    "INITS": "infill.mcmc.chains",
    "ORDERS": "infill.mcmc.chains",
    "ChainResult": "infill.mcmc.chains",
    "Chains": "infill.mcmc.chains",
    "MHOptions": "infill.mcmc.chains",
    "SampleResult": "infill.mcmc.chains",
    "Visit": "infill.mcmc.chains",
    "mh": "infill.mcmc.chains",
    "sample": "infill.mcmc.chains",
    "ENERGIES": "infill.mcmc.energy",
    "Scored": "infill.mcmc.energy",
    "energy": "infill.mcmc.energy",
    "energy_terms": "infill.mcmc.energy",
    "rescore": "infill.mcmc.energy",
    "rescore_each": "infill.mcmc.energy",
    "scored_positions": "infill.mcmc.energy",
    "sliding_window": "infill.mcmc.energy",
    "block_sizes": "infill.mcmc.kernel",
    "log_acceptance": "infill.mcmc.kernel",
    "propose": "infill.mcmc.kernel",
    "proposal_log_probs": "infill.mcmc.kernel",
    "temperatures": "infill.mcmc.kernel",
}

__all__ = ["BLOCK_SCHEDULES", "INITS", "ENERGIES", "ORDERS", "ChainResult", "Chains", "MHOptions", "SampleResult", "Visit",
           "block_sizes", "energy", "energy_terms", "log_acceptance", "mh", "propose",
           "proposal_log_probs", "rescore", "rescore_each", "Scored", "sample", "scored_positions", "sliding_window",
           "temperatures"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
