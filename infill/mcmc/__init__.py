"""Metropolis–Hastings from the energies a masked LM defines (METHODS §3).

- :mod:`infill.mcmc.energy` E_local / E_raw of sequences, rescoring
- :mod:`infill.mcmc.kernel` the proposal, the acceptance rule, temperature/block schedules
- :mod:`infill.mcmc.chains` chains over a gap (``mh``), text-level ``sample``, their results
"""
from infill.mcmc.chains import BLOCK_SCHEDULES, INITS, ORDERS, ChainResult, Chains, MHOptions, SampleResult, Visit, mh, sample
from infill.mcmc.energy import (ENERGIES, Scored, energy, energy_terms, rescore, rescore_each,
                                scored_positions, sliding_window)
from infill.mcmc.kernel import block_sizes, log_acceptance, propose, proposal_log_probs, temperatures

__all__ = ["BLOCK_SCHEDULES", "INITS", "ENERGIES", "ORDERS", "ChainResult", "Chains", "MHOptions", "SampleResult", "Visit",
           "block_sizes", "energy", "energy_terms", "log_acceptance", "mh", "propose",
           "proposal_log_probs", "rescore", "rescore_each", "Scored", "sample", "scored_positions", "sliding_window",
           "temperatures"]
