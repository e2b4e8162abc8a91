"""The shared training loop, the english/greek families and `infill train`."""
import json
import os
import signal

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import infill
from infill_cli.main import main
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.data.greek import GREEK, normalize
from infill.models.char import CharMaskedLM
from infill.data.examples import windows
from infill.data.splits import heldout_examples, heldout_texts, split_indices
from infill.training import run_training
from infill.training.loop import TrainConfig, draw_corruption, train
from infill.training.english import EnglishFamily
from infill.training.greek import GreekFamily

GREEK_LINES = [
    "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος",
    "οὐλομένην, ἣ μυρίʼ Ἀχαιοῖς ἄλγεʼ ἔθηκε,",
    "πολλὰς δʼ ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν",
    "ἡρώων, αὐτοὺς δὲ ἑλώρια τεῦχε κύνεσσιν",
    "οἰωνοῖσί τε πᾶσι, Διὸς δʼ ἐτελείετο βουλή,",
    "ἐξ οὗ δὴ τὰ πρῶτα διαστήτην ἐρίσαντε",
]
ENGLISH_LINES = [
    "To be, or not to be, that is the question:",
    "Whether 'tis nobler in the mind to suffer",
    "The slings and arrows of outrageous fortune,",
    "Or to take arms against a sea of troubles",
    "And by opposing end them. To die: to sleep;",
    "No more; and by a sleep to say we end",
]
TINY_GREEK = dict(layers=1, hidden=32, heads=2, ff=64, max_length=32, conv_kernel=3)
TINY_ENGLISH = dict(layers=1, hidden=32, heads=2, ff=64, max_length=32, vocab_size=150)


@pytest.fixture
def greek_corpus(tmp_path):
    p = tmp_path / "greek.txt"
    p.write_text("\n".join(GREEK_LINES * 20) + "\n", encoding="utf-8")
    return p


@pytest.fixture
def english_corpus(tmp_path):
    p = tmp_path / "english.txt"
    # 120 distinct lines (the english family keeps one example per distinct line)
    callers = ["Alas", "Anon", "Hark", "Lo", "Marry", "Fie", "Pray", "Sirrah", "Nay", "Ay",
               "Come", "Peace", "Well", "Sweet", "Good", "Now", "Yet", "Then", "So", "Behold"]
    p.write_text("\n".join(f"{c}, {line}" for c in callers for line in ENGLISH_LINES) + "\n",
                 encoding="utf-8")
    return p


def cfg(out, **kw):
    base = dict(out=str(out), steps=40, batch_size=16, lr=3e-3, warmup=5, eval_every=10,
                checkpoint_every=10, progress=False, max_val_examples=64)
    base.update(kw)
    return TrainConfig(**base)


def _rates(pairs, family):
    labeled = masked = total = 0
    for (inp, lab) in pairs:
        for x, y in zip(inp, lab):
            if family.maskable(torch.tensor([x if y == -100 else y]))[0] or x == family.damage_id:
                total += 1
            if y != -100:
                labeled += 1
                masked += x == family.mask_id
    return labeled / total, masked / max(labeled, 1)


def test_dropout_reaches_the_saved_model(tmp_path, english_corpus, greek_corpus):
    """``--dropout`` is the rate of the network that trains, recorded in what is saved (the
    default stays 0.1)."""
    for family, corpus, rate in (("english", english_corpus, 0.3), ("greek", greek_corpus, 0.25)):
        out = tmp_path / family
        opts = TINY_ENGLISH if family == "english" else TINY_GREEK
        args = ["train", family, str(corpus), "--out", str(out), "--steps", "2", "--batch-size",
                "4", "--no-progress", "--dropout", str(rate)]
        args += [a for k, v in opts.items() for a in ("--" + k.replace("_", "-"), str(v))]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
        assert json.loads((out / "train_info.json").read_text())["model"]["dropout"] == rate
        if family == "english":     # transformers' BertConfig
            config = json.loads((out / "config.json").read_text())
            saved = [config.get("hidden_dropout_prob"), config.get("attention_probs_dropout_prob")]
        else:                       # the character model's own
            config = json.loads((out / "charmodel.json").read_text())["config"]
            saved = [config.get("dropout")]
        assert all(v == rate for v in saved), config
    with pytest.raises(ConfigError, match="dropout"):
        EnglishFamily(dropout=-0.1)


def test_an_overflowing_gradient_stops_the_run_instead_of_saving_nan(tmp_path, english_corpus):
    """Dropout a hair below 1 scales activations by ~1e11: the loss stays finite, the gradient
    does not. The run stops with one line naming the options (before: a model of NaN weights,
    reported as val_loss nan)."""
    r = CliRunner().invoke(main, ["train", "english", str(english_corpus), "--out",
                                  str(tmp_path / "o"), "--steps", "1", "--batch-size", "4",
                                  "--dropout", "0.99999999999", "--hidden", "64", "--heads", "2",
                                  "--max-length", "32", "--vocab-size", "150", "--no-progress"])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines()[-1] == (
        "Error: training diverged at step 0 (gradient norm nan); lower --lr or --dropout")


def test_static_vs_dynamic_masks_and_bert_scheme(tmp_path):
    fam = GreekFamily(max_length=128)
    text = " ".join(normalize(line, symbols=False) for line in GREEK_LINES * 40)
    examples = [[GREEK.start_id] + GREEK.encode(w) for w in windows(text, 127)]
    assert len(examples) >= 10
    static, dynamic = cfg(tmp_path, masking="static"), cfg(tmp_path, masking="dynamic")
    for c in (static, dynamic):   # the draw is a pure function of (seed, epoch, index)
        assert draw_corruption(examples[0], fam, c, 3, 0) == draw_corruption(examples[0], fam, c, 3, 0)
    e0 = [draw_corruption(x, fam, dynamic, 0, i) for i, x in enumerate(examples)]
    e1 = [draw_corruption(x, fam, dynamic, 1, i) for i, x in enumerate(examples)]
    assert all(a[1] != b[1] for a, b in zip(e0, e1))        # dynamic: new masks every epoch
    for pairs in (e0, e1):
        rate, masked = _rates(pairs, fam)
        assert 0.12 < rate < 0.18                             # same rate in every epoch
        assert 0.72 < masked < 0.88                           # 80% of labels get the mask id
        for (inp, lab), x in zip(pairs, examples):
            assert inp[0] == GREEK.start_id and lab[0] == -100   # specials never masked
            assert all(y == -100 or y == x[i] for i, y in enumerate(lab))
    plain = cfg(tmp_path, scheme="plain")
    assert _rates([draw_corruption(x, fam, plain, 0, i) for i, x in enumerate(examples)], fam)[1] == 1


def test_span_masking_draws_contiguous_runs_at_the_asked_rate(tmp_path):
    fam = GreekFamily(max_length=256)
    text = " ".join(normalize(line, symbols=False) for line in GREEK_LINES * 40)
    examples = [[GREEK.start_id] + GREEK.encode(w) for w in windows(text, 255)]
    spans = cfg(tmp_path, span=8, span_p=0.3, mask_rate=0.2, damage_rate=0.05)
    single = cfg(tmp_path, mask_rate=0.2, damage_rate=0.05)

    def runs(pairs):
        lengths = []
        for _, lab in pairs:
            r = 0
            for y in lab + [-100]:
                if y != -100:
                    r += 1
                elif r:
                    lengths.append(r)
                    r = 0
        return lengths

    pairs = [draw_corruption(x, fam, spans, 0, i) for i, x in enumerate(examples)]
    assert pairs == [draw_corruption(x, fam, spans, 0, i) for i, x in enumerate(examples)]
    lengths = runs(pairs)
    assert max(lengths) <= 2 * 8             # two spans may touch; one span is at most 8 long
    assert np.mean(lengths) > 2.5            # geometric(0.3) clipped at 8: mean ~ 2.9 per span
    assert np.mean(runs([draw_corruption(x, fam, single, 0, i) for i, x in enumerate(examples)])) < 1.4
    rate, masked = _rates(pairs, fam)
    assert 0.18 < rate < 0.22
    for (inp, lab), x in zip(pairs, examples):
        assert inp[0] == GREEK.start_id and lab[0] == -100
        assert all(y == -100 or (y == x[i] and inp[i] != GREEK.missing_id) for i, y in enumerate(lab))
    with pytest.raises(ConfigError, match="span"):
        cfg(tmp_path, span=0).validate()


def test_damage_is_never_a_label(tmp_path):
    fam = GreekFamily()
    c = cfg(tmp_path, damage_rate=0.1)
    x = [GREEK.start_id] + GREEK.encode("μηνιν αειδε θεα πηληιαδεω αχιληοσ " * 3)
    n_dmg = n = 0
    for i in range(50):
        inp, lab = draw_corruption(x, fam, c, 0, i)
        for j, (a, y) in enumerate(zip(inp, lab)):
            if a == GREEK.missing_id:
                n_dmg += 1
                assert y == -100
            n += j > 0
        assert inp[0] == GREEK.start_id
    assert 0.07 < n_dmg / n < 0.13


class Recorder(GreekFamily):
    """Greek family that records (example, labeled positions) of every training batch."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen = []

    def logits(self, model, input_ids, attention_mask, select):
        if model.training:
            for r in range(input_ids.shape[0]):
                n = int(attention_mask[r].sum())
                self.seen.append((tuple(input_ids[r, :n].tolist()),
                                  tuple(select[r, :n].nonzero().squeeze(1).tolist())))
        return super().logits(model, input_ids, attention_mask, select)


@pytest.mark.parametrize("masking", ["static", "dynamic"])
def test_loop_feeds_static_or_dynamic_masks(tmp_path, greek_corpus, masking):
    fam = Recorder(**TINY_GREEK)
    examples = fam.load_examples(greek_corpus, tmp_path)
    n_train = len(split_indices(len(examples))["train"])
    # plain scheme: the masked input shows where the masks are; 3 epochs of one batch each
    c = cfg(tmp_path / "o", masking=masking, scheme="plain", batch_size=n_train, steps=3,
            eval_every=100)
    train(fam, greek_corpus, c)
    by_epoch = [fam.seen[k * n_train:(k + 1) * n_train] for k in range(3)]
    masks = [sorted(s[1] for s in e) for e in by_epoch]
    inputs = [sorted(s[0] for s in e) for e in by_epoch]
    if masking == "static":
        assert inputs[0] == inputs[1] == inputs[2]
    else:
        assert inputs[0] != inputs[1] and inputs[1] != inputs[2]
    rates = [sum(len(m) for m in e) / sum(len(s[0]) - 1 for s in b) for e, b in zip(masks, by_epoch)]
    assert all(0.10 < r < 0.22 for r in rates)


# ---- the loop ------------------------------------------------------------------------------
def _val_losses(out):
    return [json.loads(l)["val_loss"] for l in (out / "train_log.jsonl").read_text().splitlines()]


def test_greek_training_lowers_validation_loss_and_saves_a_loadable_model(tmp_path, greek_corpus):
    out = tmp_path / "g"
    res = run_training("greek", str(greek_corpus), cfg(out, damage_rate=0.05), **TINY_GREEK)
    losses = _val_losses(out)
    assert len(losses) == 5 and res.step == 40 and res.stopped == "steps"
    assert losses[-1] < losses[0] - 0.3, losses
    assert res.val_loss == losses[-1] and 0 <= res.val_accuracy <= 1
    split = json.loads((out / "split.json").read_text())
    assert split["seed"] == 0 and split["sizes"]["train"] == res.n_train
    lm = infill.load_model(str(out), device="cpu")
    assert isinstance(lm, CharMaskedLM) and lm.max_length == 32
    # the held-out split can be rebuilt from the model directory alone
    fam, val = heldout_examples(out, "validation")
    assert fam == "greek"
    assert len(val) == split["sizes"]["validation"]
    texts = heldout_texts(out, "test")
    corpus_text = " ".join(normalize(line) for line in GREEK_LINES * 2)
    assert len(texts) == split["sizes"]["test"] and all(t in corpus_text for t in texts)
    assert infill.fill(lm, "μηνιν α?ειδε", top_k=3)[0][0].text.startswith("μηνιν α")


def test_english_training_lowers_validation_loss_and_loads_as_hf(tmp_path, english_corpus):
    out = tmp_path / "e"
    res = run_training("english", str(english_corpus), cfg(out), **TINY_ENGLISH)
    losses = _val_losses(out)
    assert losses[-1] < losses[0] - 0.3, losses
    assert (out / "config.json").exists() and (out / "tokenizer" / "vocab.txt").exists()
    lm = infill.load_model(str(out), device="cpu")
    assert lm.vocab_size <= 150 and lm.max_length <= 32
    comp = infill.fill(lm, "To be, or not to ___, that is the question:", top_k=2)[0]
    # the text around the gap is kept (a WordPiece continuation piece such as "##ageo" may be
    # placed in the gap -- METHODS §1 allows every non-special token -- and then joins "to")
    assert len(comp) == 2 and all(c.text.startswith("To be, or not to") and
                                  c.text.endswith(", that is the question:") for c in comp)
    assert res.n_train + res.n_val + res.n_test == json.loads(
        (out / "split.json").read_text())["n_examples"]
    texts = heldout_texts(out, "validation")
    assert len(texts) == res.n_val and all(t.strip() for t in texts)
    assert all(any(line.split()[0] in t for line in ENGLISH_LINES) for t in texts)


@pytest.mark.parametrize("masking", ["static", "dynamic"])
def test_resume_matches_uninterrupted_run(tmp_path, greek_corpus, masking):
    opts = dict(masking=masking, steps=12, eval_every=4, checkpoint_every=4, damage_rate=0.05)
    full = tmp_path / "full"
    train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(full, **opts))
    part = tmp_path / "part"
    first = train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(part, stop_after=6, **opts))
    assert first.step == 6 and first.stopped == "stop_after"
    ck = torch.load(part / "checkpoint.pt", weights_only=False)
    assert ck["step"] == 6 and (ck["static"] is not None) == (masking == "static")
    second = train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(part, resume=True, **opts))
    assert second.step == 12
    a = torch.load(full / "checkpoint.pt", weights_only=False)["model"]
    b = torch.load(part / "checkpoint.pt", weights_only=False)["model"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    log = lambda out: {e["step"]: e["val_loss"] for e in map(  # noqa: E731
        json.loads, (out / "train_log.jsonl").read_text().splitlines())}
    fa, fb = log(full), log(part)
    assert sorted(fa) == sorted(fb) == [0, 4, 8, 12]  # the row at the stop step (6) is dropped
    assert all(fa[k] == fb[k] for k in fa)


def test_extending_a_finished_run_continues_at_the_new_plans_learning_rate(tmp_path, greek_corpus):
    """A finished 6-step run resumed with --steps 12: the first new step uses the learning rate
    of step 6 of a 12-step plan (not the 0 the 6-step plan ended on), so the weights move."""
    out = tmp_path / "run"
    opts = dict(eval_every=3, checkpoint_every=3, warmup=2)
    train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, steps=6, **opts))
    (out / "train_info.json").unlink()                # the finished model's record
    before = torch.load(out / "checkpoint.pt", weights_only=True)
    assert before["optimizer"]["param_groups"][0]["lr"] == 0.0
    train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, steps=12, resume=True,
                                                       stop_after=7, **opts))
    after = torch.load(out / "checkpoint.pt", weights_only=True)
    assert after["step"] == 7
    moved = [k for k in before["model"] if not torch.equal(before["model"][k], after["model"][k])]
    assert moved
    assert after["optimizer"]["param_groups"][0]["lr"] == pytest.approx(3e-3 * (12 - 7) / 10)


def test_a_resume_takes_its_own_learning_rate_and_weight_decay(tmp_path, greek_corpus):
    """--resume with another --lr / --weight-decay trains with them from the next step (they
    were recorded in train_info.json while the checkpoint's old ones went on training)."""
    out = tmp_path / "run"
    opts = dict(steps=8, eval_every=4, checkpoint_every=2, warmup=2)
    train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, stop_after=4, **opts))
    before = torch.load(out / "checkpoint.pt", weights_only=True)["optimizer"]["param_groups"]
    assert before[0]["weight_decay"] == 0.01 and before[1]["weight_decay"] == 0.0
    with pytest.warns(UserWarning) as said:
        train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, resume=True, stop_after=5,
                                                           lr=1e-4, weight_decay=0.5, **opts))
    assert {str(w.message).split(" (")[0] for w in said} == {
        "resuming with lr 0.0001 from step 5", "resuming with weight_decay 0.5 from step 5"}
    after = torch.load(out / "checkpoint.pt", weights_only=True)["optimizer"]["param_groups"]
    assert [g["lr"] for g in after] == pytest.approx([1e-4 * (8 - 5) / 6] * 2)
    assert after[0]["weight_decay"] == 0.5 and after[1]["weight_decay"] == 0.0   # biases, norms


@pytest.mark.parametrize("field, value", [("torch_rng", "x"), ("step", "x"), ("step", -1),
                                          ("history", 5), ("scheduler", [1]), ("py_rng", [1]),
                                          ("family", None)])
def test_a_checkpoint_with_wrong_values_is_refused(tmp_path, greek_corpus, field, value):
    out = tmp_path / "run"
    train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, steps=2, stop_after=2,
                                                       checkpoint_every=1))
    ck = torch.load(out / "checkpoint.pt", weights_only=True)
    ck[field] = value
    torch.save(ck, out / "checkpoint.pt")
    with pytest.raises(ModelLoadError, match="is not an infill training checkpoint"):
        train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, steps=4, resume=True))


def test_a_plan_beyond_the_step_limit_is_refused(tmp_path, greek_corpus):
    with pytest.raises(ConfigError, match="steps planned"):
        train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(tmp_path / "x", steps=None,
                                                           epochs=1e308))


class Interrupted(GreekFamily):
    """Is interrupted (Ctrl-C = SIGINT, or SIGTERM from `kill`) in its 5th training forward
    pass; "ctrl-c twice" sends SIGINT twice there."""

    calls = 0
    how = "ctrl-c"

    def logits(self, model, input_ids, attention_mask, select):
        if model.training:
            self.calls += 1
            if self.calls == 5:
                for _ in range(2 if self.how == "ctrl-c twice" else 1):
                    os.kill(os.getpid(), signal.SIGTERM if self.how == "sigterm" else signal.SIGINT)
        return super().logits(model, input_ids, attention_mask, select)


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_interrupt_saves_checkpoint_and_model(tmp_path, greek_corpus, how):
    out = tmp_path / "int"
    fam = Interrupted(**TINY_GREEK)
    fam.how = how
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    res = train(fam, greek_corpus, cfg(out, steps=20))
    # the loop restores the handlers
    assert {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)} == before
    # both let the interrupted step (5) finish, then stop: the checkpoint is at a step boundary
    assert res.stopped == "interrupted" and res.step == 5
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 5
    assert isinstance(infill.load_model(str(out), device="cpu"), CharMaskedLM)
    resumed = train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, steps=20, resume=True))
    assert resumed.step == 20 and resumed.stopped == "steps"


def test_ctrl_c_twice_stops_at_once_keeping_the_last_checkpoint(tmp_path, greek_corpus):
    out = tmp_path / "int"
    fam = Interrupted(**TINY_GREEK)
    fam.how = "ctrl-c twice"
    before = signal.getsignal(signal.SIGINT)     # default_int_handler; SIG_IGN in a background job
    with pytest.raises(KeyboardInterrupt):
        train(fam, greek_corpus, cfg(out, steps=20, checkpoint_every=2))
    assert signal.getsignal(signal.SIGINT) is before
    # the half-done 5th step is not saved: the checkpoint is the last periodic one (step 4)
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 4
    resumed = train(GreekFamily(**TINY_GREEK), greek_corpus, cfg(out, steps=6, resume=True))
    assert resumed.step == 6


def test_loop_errors(tmp_path, greek_corpus):
    fam = GreekFamily(**TINY_GREEK)
    with pytest.raises(InputError, match="corpus file not found"):
        train(fam, tmp_path / "nope.txt", cfg(tmp_path / "a"))
    with pytest.raises(ConfigError, match="static' or 'dynamic"):
        train(fam, greek_corpus, cfg(tmp_path / "a", masking="sometimes"))
    with pytest.raises(ConfigError, match="no checkpoint"):
        train(fam, greek_corpus, cfg(tmp_path / "a", resume=True))
    with pytest.raises(ConfigError, match="'steps' or 'epochs'"):
        train(fam, greek_corpus, cfg(tmp_path / "a", steps=None))
    train(fam, greek_corpus, cfg(tmp_path / "b", steps=2))
    with pytest.raises(ConfigError, match="already holds a checkpoint"):
        train(fam, greek_corpus, cfg(tmp_path / "b", steps=2))
    with pytest.raises(ConfigError, match="damage rate must be 0"):
        train(EnglishFamily(**TINY_ENGLISH), greek_corpus, cfg(tmp_path / "c", damage_rate=0.1))
    with pytest.raises(ConfigError, match="does not take"):
        GreekFamily(vocab_size=10)
    with pytest.raises(ConfigError, match="unknown family"):
        run_training("klingon", str(greek_corpus), cfg(tmp_path / "d"))
    with pytest.raises(ConfigError, match="use 'dtype' bf16"):
        train(fam, greek_corpus, cfg(tmp_path / "e", dtype="fp16"))
    with pytest.raises(ConfigError, match="not supported"):
        train(fam, greek_corpus, cfg(tmp_path / "e", device="meta"))


def test_bf16_mixed_precision_training_on_cpu(tmp_path, greek_corpus):
    """--dtype bf16: the forward pass runs under bf16 autocast (weights and optimizer stay
    float32); the model still learns, and differs from the float32 run only by rounding."""
    out = tmp_path / "bf16"
    res = run_training("greek", str(greek_corpus), cfg(out, dtype="bf16", device="cpu"),
                       **TINY_GREEK)
    losses = _val_losses(out)
    assert losses[-1] < losses[0] - 0.3, losses
    ref = run_training("greek", str(greek_corpus), cfg(tmp_path / "fp32"), **TINY_GREEK)
    assert res.val_loss == pytest.approx(ref.val_loss, rel=0.1) and res.val_loss != ref.val_loss
    assert json.loads((out / "train_info.json").read_text())["config"]["dtype"] == "bf16"


def test_epochs_plan_the_steps(tmp_path, greek_corpus):
    res = train(GreekFamily(**TINY_GREEK), greek_corpus,
                cfg(tmp_path / "e", steps=None, epochs=1.0, batch_size=8, eval_every=1000))
    assert res.step == int(np.ceil(res.n_train / 8))


# ---- CLI -----------------------------------------------------------------------------------
def test_cli_train_greek(tmp_path, greek_corpus):
    out = tmp_path / "cli"
    args = ["train", "greek", str(greek_corpus), "--out", str(out), "--steps", "6",
            "--eval-every", "3", "--batch-size", "8", "--no-progress", "--layers", "1",
            "--hidden", "32", "--heads", "2", "--max-length", "32", "--masking", "static"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "val_loss" in r.output and "trained greek model: 6 steps" in r.output
    info = json.loads((out / "train_info.json").read_text())
    assert info["config"]["masking"] == "static" and info["config"]["damage_rate"] == 0.05
    assert info["model"]["d_model"] == 32
    assert isinstance(infill.load_model(str(out), device="cpu"), CharMaskedLM)
    # again without --resume: refused; with --resume and more steps: continues
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "Error: " in r.output and "--resume" in r.output
    r = CliRunner().invoke(main, args[:6] + ["8"] + args[7:] + ["--resume"])
    assert r.exit_code == 0, r.output
    steps = [json.loads(l)["step"] for l in (out / "train_log.jsonl").read_text().splitlines()]
    assert steps == [0, 3, 6, 8]  # resumed at step 6 and extended to the new --steps


@pytest.mark.parametrize("args, message", [
    (["train", "klingon", "x.txt", "--out", "o", "--steps", "1"], "unknown family 'klingon'"),
    (["train", "greek", "missing.txt", "--out", "o", "--steps", "1"], "corpus file not found"),
    (["train", "greek", "CORPUS", "--out", "o", "--steps", "1", "--masking", "x"],
     "Invalid value for '--masking'"),
    (["train", "greek", "CORPUS", "--out", "o", "--steps", "0"], "'--steps': 0 is not in the range x>=1"),
    (["train", "greek", "CORPUS", "--out", "o", "--steps", "5", "--lr", "nan"], "--lr must be a finite number"),
    (["train", "greek", "CORPUS", "--out", "o", "--steps", "5", "--hidden", "0"], "'--hidden': 0 is not in the range"),
    (["train", "greek", "CORPUS", "--out", "o"], "--steps or --epochs"),
    (["train", "greek", "CORPUS", "--out", "o", "--steps", "1", "--resume"], "no checkpoint"),
    (["train", "english", "CORPUS", "--out", "o", "--steps", "1", "--damage-rate", "0.1"],
     "damage rate must be 0"),
    (["train", "english", "CORPUS", "--out", "o", "--steps", "1", "--dropout", "1"],
     "'--dropout': 1.0 is not in the range"),
    (["train", "protein", "CORPUS", "--out", "o", "--steps", "1", "--dropout", "0.2"],
     "option(s) --dropout do not apply to the protein family"),
])
def test_cli_train_errors(tmp_path, greek_corpus, args, message):
    args = [str(greek_corpus) if a == "CORPUS" else str(tmp_path / a) if a == "o" else a
            for a in args]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert r.output.strip().splitlines()[-1].startswith("Error:")
