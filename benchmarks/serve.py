"""``infill serve`` under concurrency: requests/second and latency (p50/p95), with and without
batching.

For each model the script starts ``infill serve`` (separate processes) twice -- batched
(``--max-batch 32 --batch-wait-ms 5``, the defaults) and unbatched (``--max-batch 1``: one
``fill_each`` per request) -- and, for each concurrency C, sends each server N requests from C
client threads, each on its own keep-alive connection, on loopback only. Runs alternate between
the two servers and repeat (``--repeats``) so that both see the same background load; the table
gives the median requests/s of the repeats (and their range) and the latency percentiles of all
their requests together. Requests use the default options (hcb, left-to-right, beam 5, top-k 5)
with different texts, as many users of one server would. Every answer must be 200 with 5
completions, and rank the same texts as the unbatched server's answer to the same text.

    OMP_NUM_THREADS=1 python benchmarks/serve.py [--models builtin:english builtin:greek]
        [--concurrency 1 8 16] [--requests 96] [--repeats 3] [--out benchmarks/results/serve]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TEXTS = {
    "builtin:english": [
        "To be, or not to ___, that is the question.",
        "O Romeo, Romeo! wherefore art ___ Romeo?",
        "All the world's a ___, and all the men and women merely players.",
        "Now is the winter of our ___ made glorious summer by this sun of York.",
        "Friends, Romans, countrymen, lend me your ___.",
        "The course of true love never did run ___.",
        "A horse! a horse! my ___ for a horse!",
        "If music be the food of love, play ___.",
        "Good night, good night! parting is such sweet ___.",
        "Something is rotten in the state of ___.",
        "Cowards die many times before their ___.",
        "The quality of mercy is not ___.",
        "What's in a name? that which we call a ___ by any other name would smell as sweet.",
        "Double, double toil and ___; fire burn and cauldron bubble.",
        "Uneasy lies the head that wears a ___.",
        "We are such stuff as dreams are made ___.",
    ],
    "builtin:greek": [
        "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος",
        "οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθ??ε",
        "πολλὰς δ᾽ ἰφθίμους ψυχὰς Ἄϊδι προΐ??εν",
        "ἡρώων, αὐτοὺς δὲ ἑλώρια τεῦχε κ??εσσιν",
        "οἰωνοῖσί τε πᾶσι, Διὸς δ᾽ ἐτελεί??ο βουλή",
        "ἐξ οὗ δὴ τὰ πρῶτα διαστήτην ἐρ??αντε",
        "Ἀτρεΐδης τε ἄναξ ἀνδρῶν καὶ δῖος Ἀχ??λεύς",
        "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτρ?π?ν",
        "ὃς μάλα πολλὰ πλάγχθη, ἐπεὶ Τροίης ἱερὸν πτολ??θρον ἔπερσε",
        "πολλῶν δ᾽ ἀνθρώπων ἴδεν ἄστεα καὶ ν??ν ἔγνω",
        "πολλὰ δ᾽ ὅ γ᾽ ἐν πόντῳ πάθεν ἄλγεα ὃν κ??ὰ θυμόν",
        "ἀρνύμενος ἥν τε ψυχὴν καὶ νόστον ἑτ??ρων",
        "ἀλλ᾽ οὐδ᾽ ὧς ἑτάρους ἐρρύσατο, ἱέμ??ός περ",
        "αὐτῶν γὰρ σφετέρῃσιν ἀτασθαλίῃσιν ὄλ??το",
        "νήπιοι, οἳ κατὰ βοῦς Ὑπερίονος Ἠελ??οιο",
        "ἤσθιον· αὐτὰρ ὁ τοῖσιν ἀφείλετο νόσ??μον ἦμαρ",
    ],
}
MODES = {"unbatched": ["--max-batch", "1", "--batch-wait-ms", "0"],
         "batched": ["--max-batch", "32", "--batch-wait-ms", "5"]}
STARTUP_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``infill serve`` in a subprocess on a free loopback port (a context manager)."""

    def __init__(self, model: str, extra: list[str]):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "infill_cli.main", "serve", "--port", str(self.port),
             "--model", model, "--device", "cpu", "--log-level", "warning",
             "--max-pending", "256", *extra],
            stdout=subprocess.DEVNULL, stderr=self.log, env=env, cwd=ROOT)

    def __enter__(self) -> Server:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:         # poll the health endpoint, bounded
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"server exited: {self.log.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(self.base + "/api/health", timeout=2) as r:
                    if json.loads(r.read())["status"] == "ok":
                        return self
            except OSError:
                pass
            threading.Event().wait(0.05)
        raise TimeoutError("server did not become healthy")

    def health(self) -> dict:
        with urllib.request.urlopen(self.base + "/api/health", timeout=10) as r:
            return json.loads(r.read())

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def client(port: int, bodies: list[dict]) -> list[tuple[float, int, dict]]:
    """Send ``bodies`` one after another on one keep-alive connection: (seconds, status, answer)."""
    conn = HTTPConnection("127.0.0.1", port, timeout=120)
    out = []
    try:
        for body in bodies:
            data = json.dumps(body, ensure_ascii=False).encode()
            t = time.perf_counter()
            conn.request("POST", "/api/fill", data, {"Content-Type": "application/json"})
            r = conn.getresponse()
            answer = json.loads(r.read())
            out.append((time.perf_counter() - t, r.status, answer))
    finally:
        conn.close()
    return out


def load(server: Server, model: str, concurrency: int, requests: int):
    """``requests`` requests from ``concurrency`` clients: (seconds, latencies, fill calls,
    {text: ranked completion texts})."""
    texts = TEXTS[model]
    bodies = [{"text": texts[i % len(texts)], "model": model} for i in range(requests)]
    before = server.health()
    shares = [bodies[c::concurrency] for c in range(concurrency)]
    t = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(lambda b: client(server.port, b), shares))
    wall = time.perf_counter() - t
    after = server.health()
    bad = [a for r in results for _, st, a in r if st != 200 or len(a["completions"]) != 5]
    if bad:
        raise RuntimeError(f"{len(bad)} bad answers, e.g. {bad[0]}")
    answers = {a["input"]: [c["text"] for c in a["completions"]] for r in results for _, _, a in r}
    return (wall, [s for r in results for s, _, _ in r], after["batches"] - before["batches"],
            answers)


def summarize(model: str, mode: str, concurrency: int, runs: list) -> dict:
    rps = sorted(len(lat) / wall for wall, lat, _, _ in runs)
    latencies = sorted(x for _, lat, _, _ in runs for x in lat)
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return {"model": model, "mode": mode, "concurrency": concurrency,
            "requests": len(runs[0][1]), "repeats": len(runs),
            "requests_per_s": round(statistics.median(rps), 1),
            "requests_per_s_range": [round(rps[0], 1), round(rps[-1], 1)],
            "p50_ms": round(q[49] * 1000, 1), "p95_ms": round(q[94] * 1000, 1),
            "fill_calls_per_run": round(statistics.fmean(c for _, _, c, _ in runs), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["builtin:english", "builtin:greek"],
                    choices=sorted(TEXTS))
    ap.add_argument("--concurrency", nargs="+", type=int, default=[1, 8, 16])
    ap.add_argument("--requests", type=int, default=96)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "serve"))
    args = ap.parse_args()

    rows = []
    for model in args.models:
        reference: dict[str, list[str]] = {}
        runs: dict[tuple[str, int], list] = {}
        with Server(model, MODES["unbatched"]) as unbatched, \
                Server(model, MODES["batched"]) as batched:
            servers = {"unbatched": unbatched, "batched": batched}
            for server in servers.values():                  # warm-up
                client(server.port, [{"text": t, "model": model} for t in TEXTS[model][:4]])
            for _ in range(args.repeats):
                for c in args.concurrency:
                    for mode, server in servers.items():
                        run = load(server, model, c, args.requests)
                        for text, ranked in run[3].items():   # batching changes no ranking
                            if reference.setdefault(text, ranked) != ranked:
                                raise RuntimeError(f"{mode} answer differs for {text!r}")
                        runs.setdefault((mode, c), []).append(run)
        for (mode, c), rs in runs.items():
            rows.append(summarize(model, mode, c, rs))
            print(json.dumps(rows[-1]), flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"command": "OMP_NUM_THREADS=" + os.environ.get("OMP_NUM_THREADS", "")
                       + " python benchmarks/serve.py " + " ".join(sys.argv[1:]),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), "
                       f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}",
            "python": platform.python_version()}
    (out / "serve.json").write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    lines = ["| model | clients | mode | requests/s (median, range) | p50 ms | p95 ms "
             "| fill calls / requests |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["model"], r["concurrency"], r["mode"] != "unbatched")):
        lo, hi = r["requests_per_s_range"]
        lines.append(f"| {r['model']} | {r['concurrency']} | {r['mode']} | "
                     f"{r['requests_per_s']} ({lo}–{hi}) | {r['p50_ms']} | {r['p95_ms']} | "
                     f"{r['fill_calls_per_run']:g} / {r['requests']} |")
    (out / "serve.md").write_text(f"`{meta['command']}` ({meta['machine']}; {args.repeats} "
                                  f"repeats of {args.requests} requests)\n\n"
                                  + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
