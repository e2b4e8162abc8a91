"""The data layer: everything read from disk or typed by a user, below the models.

- :mod:`infill.data.files`    reading users' files and arguments (one encoding policy)
- :mod:`infill.data.fasta`    FASTA records in and out
- :mod:`infill.data.corpora`  named corpora (``--data-dir`` / ``$INFILL_DATA``), text/FASTA/JSONL files
- :mod:`infill.data.examples` corpus -> a family's token-id examples (training and benchmarks)
- :mod:`infill.data.parts`    the train/validation/test parts and seeded splits into them
- :mod:`infill.data.splits`   a trained model's held-out data (its examples and recorded split)
- :mod:`infill.data.greek`    the Ithaca-style Greek alphabet and normalizer
- :mod:`infill.data.residues` amino-acid codes
- :mod:`infill.data.regions`  antibody regions (IMGT numbering)
"""
