"""Amino-acid codes shared by the protein readers, adapters and training."""

STANDARD_AA = "ACDEFGHIKLMNPQRSTVWY"
"""The 20 standard amino acids: the only fills by default."""
NONSTANDARD_AA = "XBUZO"
"""Residue codes accepted in the input (unknown, Asx, selenocysteine, Glx, pyrrolysine), filled
only when non-standard residues are allowed."""
