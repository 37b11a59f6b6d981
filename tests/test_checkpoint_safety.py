"""Checkpoints run no code and every bad one is a CheckpointError naming the file.

An SB3 zip is read for its weights and plain JSON only (a cloudpickle in its ``data`` never
runs, through ``make(path)`` or ``make(run_folder)``), yet plays exactly as
``MaskablePPO.load``; ``.pt`` files are validated field by field; a run folder falls back
from a damaged best checkpoint to its latest, with a warning.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_env.agents import make
from trinity_env.agents.loaders.checkpoint import MAX_HIDDEN, MAX_LAYERS
from trinity_env.agents.loaders.sb3 import SB3PolicyAgent, load_policy
from trinity_env.agents.networks.ppo_network import (
    FORMAT,
    CheckpointError,
    NetworkAgent,
    PolicyNetwork,
    load_checkpoint,
)
from trinity_env.core import TrinityError

sb3_contrib = pytest.importorskip("sb3_contrib")
cloudpickle = pytest.importorskip("cloudpickle")


# ---------------------------------------------------------------- helpers


class Payload:
    """Unpickling this runs code: it writes ``marker``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"import pathlib; pathlib.Path({str(self.marker)!r}).write_text('pwned')",)


def serialized(marker: Path) -> dict:
    """A ``data`` entry as SB3 writes a non-JSON value: a base64 cloudpickle, here a hostile one."""
    pickled = base64.b64encode(cloudpickle.dumps(Payload(marker))).decode()
    return {":type:": "<class 'abc.ABCMeta'>", ":serialized:": pickled}


def rewrite_zip(source: Path, target: Path, data=None, members: dict[str, bytes | None] | None = None) -> Path:
    """A copy of ``source`` with its ``data`` JSON changed by ``data(dict)`` and members replaced (None: removed)."""
    members = dict(members or {})
    with zipfile.ZipFile(source) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    if data is not None:
        document = json.loads(contents["data"])
        data(document)
        contents["data"] = json.dumps(document).encode()
    for name, content in members.items():
        if content is None:
            contents.pop(name, None)
        else:
            contents[name] = content
    with zipfile.ZipFile(target, "w") as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
    return target


def tiny_model(policy_kwargs: dict, seed: int = 0, learn: bool = False):
    from sb3_contrib import MaskablePPO

    from trinity_env.envs.single_agent import TrinityTowersEnv

    env = TrinityTowersEnv(opponent="random", draft="dealt")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=seed, policy_kwargs=policy_kwargs)
    if learn:  # a trained model's data also holds its last observations, episode buffers, ...
        model.learn(64)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # spread the logits: orthogonal init with gain 0.01 leaves them nearly flat
        for parameter in model.policy.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.3)
    return model


def real_observations(count: int = 160) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of random games, drafted and dealt, from the learner's seat."""
    from trinity_env.envs.single_agent import TrinityTowersEnv

    observations, masks = [], []
    rng = np.random.default_rng(0)
    for target, draft in ((count // 2, "pick"), (count, "dealt")):
        env = TrinityTowersEnv(opponent="random", draft=draft)
        observation, _ = env.reset(seed=1)
        while len(observations) < target:
            mask = env.action_masks()
            observations.append(observation)
            masks.append(mask)
            observation, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            if terminated or truncated:
                observation, _ = env.reset()
    return np.array(observations), np.array(masks, dtype=bool)


@pytest.fixture(scope="module")
def clean_zip(tmp_path_factory) -> Path:
    """A zip as ``selfplay_ppo`` writes it (``net_arch: [hidden] * layers``)."""
    path = tmp_path_factory.mktemp("sb3") / "clean.zip"
    tiny_model({"net_arch": [16, 16]}, learn=True).save(path)
    return path


@pytest.fixture(scope="module")
def observations():
    return real_observations()


def good_payload(**change) -> dict:
    torch.manual_seed(0)
    network = PolicyNetwork(8, 2)
    payload = {"format": FORMAT, "network": "mlp", "hidden": 8, "layers": 2, "tactics": False, "steps": 5}
    return payload | {"model": network.state_dict()} | change


# ---------------------------------------------------------------- SB3 zips: same play, no code


@pytest.mark.parametrize(
    ("policy_kwargs", "learn"),
    [
        ({"net_arch": [16, 16]}, True),  # what selfplay_ppo writes, after some training
        ({}, False),  # SB3's default: pi and vf of 64, 64
        ({"net_arch": {"pi": [12], "vf": [8, 4]}, "share_features_extractor": False, "ortho_init": False}, False),
    ],
)
def test_zip_plays_exactly_as_maskableppo_load(tmp_path, observations, policy_kwargs, learn):
    from sb3_contrib import MaskablePPO

    path = tmp_path / "model.zip"
    tiny_model(policy_kwargs, seed=3, learn=learn).save(path)
    reference = MaskablePPO.load(path, device="cpu").policy
    policy = load_policy(path)
    obs, masks = observations
    assert reference.state_dict().keys() == policy.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(reference.state_dict().values(), policy.state_dict().values()))
    expected, _ = reference.predict(obs, action_masks=masks, deterministic=True)
    actions, _ = policy.predict(obs, action_masks=masks, deterministic=True)
    assert len(set(actions.tolist())) > 5 and np.array_equal(actions, expected)
    with torch.no_grad():
        tensor = torch.as_tensor(obs)
        a = reference.get_distribution(tensor, masks).distribution.probs
        b = policy.get_distribution(tensor, masks).distribution.probs
    assert torch.equal(a, b)
    torch.manual_seed(7)
    sampled_reference, _ = reference.predict(obs, action_masks=masks, deterministic=False)
    torch.manual_seed(7)
    sampled, _ = policy.predict(obs, action_masks=masks, deterministic=False)
    assert np.array_equal(sampled, sampled_reference)
    agent = make(str(path))  # one observation at a time, as in a game
    assert agent.name == str(path) and isinstance(agent, SB3PolicyAgent)
    for k in range(0, len(obs), 7):
        assert agent.act({"observation": obs[k], "action_mask": masks[k].astype(np.int8)}) == expected[k]


def test_loading_a_zip_leaves_the_global_rng_alone(clean_zip):
    torch.manual_seed(11)
    before = torch.get_rng_state()
    load_policy(clean_zip)
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("where", ["policy_class", "extra_key", "observation_space"])
def test_a_cloudpickle_in_data_never_runs_and_the_weights_still_load(tmp_path, clean_zip, where):
    marker = tmp_path / "marker"

    def inject(data):
        if where == "extra_key":
            data["evil"] = serialized(marker)
        else:
            data[where][":serialized:"] = serialized(marker)[":serialized:"]

    hostile = rewrite_zip(clean_zip, tmp_path / "hostile.zip", inject)
    run = tmp_path / "run"
    run.mkdir()
    rewrite_zip(hostile, run / "best.zip")
    assert isinstance(make(str(hostile)), SB3PolicyAgent)
    assert isinstance(make(str(run)), SB3PolicyAgent)  # a run folder picks best.zip
    assert isinstance(make(str(run / "best")), SB3PolicyAgent)
    assert not marker.exists()
    # the control: SB3's own load (trusted=True) does run it
    with contextlib.suppress(CheckpointError):  # what it unpickled is no class or space
        SB3PolicyAgent.from_zip(hostile, trusted=True)
    assert marker.exists()


def test_pickled_policy_kwargs_are_refused_not_run(tmp_path, clean_zip):
    marker = tmp_path / "marker"
    hostile = rewrite_zip(clean_zip, tmp_path / "hostile.zip", lambda d: d.update(policy_kwargs=serialized(marker)))
    with pytest.raises(CheckpointError, match=r"hostile\.zip.*pickled"):
        make(str(hostile))
    run = tmp_path / "run"
    run.mkdir()
    rewrite_zip(hostile, run / "best.zip")
    with pytest.raises(CheckpointError, match=r"best\.zip"):  # no latest.zip to fall back on
        make(str(run))
    rewrite_zip(clean_zip, run / "latest.zip")
    with pytest.warns(UserWarning, match=r"best\.zip.*latest\.zip"):
        agent = make(str(run))
    assert isinstance(agent, SB3PolicyAgent) and agent.name == str(run)
    assert not marker.exists()


def test_a_pickled_object_in_policy_pth_is_refused_not_run(tmp_path, clean_zip):
    marker = tmp_path / "marker"
    buffer = io.BytesIO()
    torch.save({"action_net.weight": Payload(marker)}, buffer)
    hostile = rewrite_zip(clean_zip, tmp_path / "hostile.zip", members={"policy.pth": buffer.getvalue()})
    with pytest.raises(CheckpointError, match=r"hostile\.zip.*policy\.pth"):
        make(str(hostile))
    assert not marker.exists()


def corrupt_zips(clean: Path, tmp_path: Path) -> list[tuple[Path, str]]:
    def weights(change) -> bytes:
        with zipfile.ZipFile(clean) as archive:
            state = torch.load(io.BytesIO(archive.read("policy.pth")), weights_only=True)
        change(state)
        buffer = io.BytesIO()
        torch.save(state, buffer)
        return buffer.getvalue()

    cases = []

    def case(name: str, message: str, pth=None, **kw):
        if pth is not None:
            kw["members"] = {"policy.pth": weights(pth)}
        cases.append((rewrite_zip(clean, tmp_path / name, **kw), message))

    (tmp_path / "notzip.zip").write_bytes(b"PK not really")
    cases.append((tmp_path / "notzip.zip", "not a readable MaskablePPO zip"))
    (tmp_path / "empty.zip").write_bytes(b"")
    cases.append((tmp_path / "empty.zip", "not a readable MaskablePPO zip"))
    (tmp_path / "truncated.zip").write_bytes(clean.read_bytes()[: clean.stat().st_size // 2])
    # half a zip: no central directory, or (zipfile searches backwards) the one of policy.pth's inner torch zip
    cases.append((tmp_path / "truncated.zip", "not a readable MaskablePPO zip|members a MaskablePPO checkpoint"))
    (tmp_path / "folder.zip").mkdir()
    cases.append((tmp_path / "folder.zip", "is a directory"))
    cases.append((tmp_path / "missing.zip", "no checkpoint at"))
    case("nopolicy.zip", "has no 'policy.pth'", members={"policy.pth": None})
    case("nodata.zip", "has no 'data'", members={"data": None})
    case("member.zip", r"members .*evil\.pkl", members={"evil.pkl": b"x"})
    case("badjson.zip", "is not valid JSON", members={"data": b"{not json"})
    case("listjson.zip", "not a JSON object", members={"data": b"[1, 2]"})
    case("class.zip", "policy_class", data=lambda d: d["policy_class"].update(__module__="evil.module"))
    case("noclass.zip", "policy_class", data=lambda d: d.pop("policy_class"))
    case("space.zip", "observation_space", data=lambda d: d["observation_space"].update({":type:": "<class 'x'>"}))
    case("kwarg.zip", "activation_fn", data=lambda d: d["policy_kwargs"].update(activation_fn="ReLU"))
    case("arch.zip", "net_arch", data=lambda d: d["policy_kwargs"].update(net_arch=[32, 32]))
    case("archtype.zip", "net_arch", data=lambda d: d["policy_kwargs"].update(net_arch=["16", True]))
    case("ortho.zip", "ortho_init", data=lambda d: d["policy_kwargs"].update(ortho_init="yes"))
    case("shape.zip", "action_net", pth=lambda s: s.update({"action_net.bias": torch.zeros(9)}))
    case("obs.zip", "policy_net.0", pth=lambda s: s.update({"mlp_extractor.policy_net.0.weight": torch.zeros(16, 300)}))
    case("extra.zip", "does not match", pth=lambda s: s.update({"extra": torch.zeros(1)}))
    case("lost.zip", "value_net", pth=lambda s: s.pop("value_net.weight"))
    case("ints.zip", "floating-point", pth=lambda s: s.update({"value_net.bias": torch.zeros(1, dtype=torch.int64)}))
    case("nan.zip", "NaN", pth=lambda s: s["action_net.bias"].fill_(float("nan")))
    case("notdict.zip", "dict of named tensors", members={"policy.pth": _saved([1, 2])})
    case("badpth.zip", "policy.pth", members={"policy.pth": b"garbage"})
    return cases


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def test_every_malformed_zip_is_a_checkpoint_error_naming_the_file(tmp_path, clean_zip):
    for path, message in corrupt_zips(clean_zip, tmp_path):
        for load in (load_policy, lambda p: make(str(p))):
            with pytest.raises(CheckpointError, match=message) as caught:
                load(path)
            assert str(path) in str(caught.value), caught.value
            assert isinstance(caught.value, (TrinityError, ValueError))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=600), st.binary(max_size=600).map(lambda b: b"PK\x03\x04" + b)))
def test_random_bytes_as_a_zip_are_a_checkpoint_error(tmp_path, content):
    path = tmp_path / "fuzz.zip"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=r"fuzz\.zip"):
        load_policy(path)


# ---------------------------------------------------------------- .pt checkpoints


def write(path: Path, payload) -> Path:
    torch.save(payload, path)
    return path


def malformed_pts(tmp_path: Path) -> list[tuple[Path, str]]:
    good = good_payload()
    model = good["model"]
    cases = [
        ("nohidden", {k: v for k, v in good.items() if k != "hidden"}, "missing the field 'hidden'"),
        ("nolayers", {k: v for k, v in good.items() if k != "layers"}, "missing the field 'layers'"),
        ("nomodel", {k: v for k, v in good.items() if k != "model"}, "missing the field 'model'"),
        (
            "nonetwork",
            {k: v for k, v in good.items() if k != "network"},
            r"missing the field 'network' \(one of mlp\)$",
        ),
        ("notactics", {k: v for k, v in good.items() if k != "tactics"}, "missing the field 'tactics'$"),
        ("network", good_payload(network="board"), "field 'network' must be one of mlp, got 'board'"),
        ("noformat", {k: v for k, v in good.items() if k != "format"}, "not a trinity-towers policy"),
        ("format", good_payload(format="other"), "not a trinity-towers policy"),
        ("negative", good_payload(hidden=-1), "'hidden' must be at least 1"),
        ("zero", good_payload(hidden=0), "'hidden' must be at least 1"),
        ("nolayer", good_payload(layers=0), "'layers' must be at least 1"),
        ("layers", good_payload(layers="x"), "'layers' must be an int, got str"),
        ("float", good_payload(hidden=8.0), "'hidden' must be an int, got float"),
        ("bool", good_payload(layers=True), "'layers' must be an int, got bool"),
        ("string", good_payload(hidden="8"), "'hidden' must be an int, got str"),
        ("tensor", good_payload(hidden=torch.tensor(8)), "'hidden' must be an int, got Tensor"),
        ("huge", good_payload(layers=10**9), f"layers must be between 1 and {MAX_LAYERS}"),
        ("vast", good_payload(hidden=10**12), f"hidden must be between 1 and {MAX_HIDDEN}"),
        ("overflow", good_payload(hidden=2**70), f"hidden must be between 1 and {MAX_HIDDEN}"),
        ("tactics", good_payload(tactics=1), "'tactics' must be a bool"),
        ("steps", good_payload(steps=-3), "'steps' must be at least 0"),
        ("stepsf", good_payload(steps=1.5), "'steps' must be an int"),
        ("shape", good_payload(model=model | {"policy.bias": torch.zeros(255)}), r"'policy\.bias' has shape"),
        ("wide", good_payload(hidden=16), "does not match"),
        ("deep", good_payload(layers=3), "does not match"),
        ("tactical", good_payload(tactics=True), "does not match"),
        ("extra", good_payload(model=model | {"extra": torch.zeros(1)}), "unexpected"),
        ("lost", good_payload(model={k: v for k, v in model.items() if k != "value.bias"}), "missing"),
        ("entry", good_payload(model=model | {"value.bias": [0.0]}), "not a dense tensor"),
        ("intdtype", good_payload(model=model | {"value.bias": torch.zeros(1, dtype=torch.int32)}), "dtype"),
        ("nan", good_payload(model=model | {"value.bias": torch.tensor([float("nan")])}), "NaN"),
        ("modellist", good_payload(model=list(model.values())), "'model' must be a dict"),
        ("keys", good_payload(model={1: torch.zeros(1)}), "not a string"),
        ("list", [good], "not a trinity-towers policy"),
        ("number", 3, "not a trinity-towers policy"),
        ("none", None, "not a trinity-towers policy"),
        ("bare", model, "not a trinity-towers policy"),
    ]
    out = [(write(tmp_path / f"{name}.pt", payload), message) for name, payload, message in cases]
    whole = write(tmp_path / "whole.pt", good).read_bytes()
    for name, content in (("truncated", whole[: len(whole) // 2]), ("empty", b""), ("text", b"hello")):
        (tmp_path / f"{name}.pt").write_bytes(content)
        out.append((tmp_path / f"{name}.pt", "not a readable checkpoint"))
    (tmp_path / "folder.pt").mkdir()
    out.append((tmp_path / "folder.pt", "is a directory"))
    out.append((tmp_path / "absent.pt", "no checkpoint at"))
    return out


def test_every_malformed_pt_is_a_checkpoint_error_naming_the_file(tmp_path):
    network, payload = load_checkpoint(write(tmp_path / "good.pt", good_payload()))
    assert network.hidden == 8 and payload["steps"] == 5
    for path, message in malformed_pts(tmp_path):
        for load in (load_checkpoint, lambda p: make(str(p))):
            with pytest.raises(CheckpointError, match=message) as caught:
                load(path)
            assert str(path) in str(caught.value), caught.value


def test_a_pickled_object_in_a_pt_is_refused_not_run(tmp_path):
    marker = tmp_path / "marker"
    path = write(tmp_path / "hostile.pt", good_payload(steps=Payload(marker)))
    with pytest.raises(CheckpointError, match=r"hostile\.pt"):
        make(str(path))
    assert not marker.exists()


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch's remark on random bytes
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_random_bytes_are_a_checkpoint_error(tmp_path, content):
    path = tmp_path / "fuzz.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=r"fuzz\.pt"):
        load_checkpoint(path)


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=3),
    st.sampled_from([torch.zeros(2), torch.ones(8, 339), torch.tensor(3)]),
)
_fields = st.sampled_from(["format", "network", "hidden", "layers", "tactics", "model", "steps", "other"])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(_fields, _values, max_size=7),
    st.booleans(),
    st.dictionaries(st.sampled_from(["body.0.weight", "body.0.bias", "policy.weight", "x"]), _values, max_size=4),
)
def test_random_payloads_load_or_are_a_checkpoint_error(tmp_path, payload, base, model):
    if base:  # start from a valid checkpoint and break some of it
        payload = good_payload() | payload
        payload["model"] = dict(payload["model"]) | model if isinstance(payload["model"], dict) else payload["model"]
    else:
        payload.setdefault("format", FORMAT)
    path = write(tmp_path / "random.pt", payload)
    try:
        network, _ = load_checkpoint(path)
    except CheckpointError as err:
        assert "random.pt" in str(err)
    else:
        assert isinstance(network, PolicyNetwork)


# ---------------------------------------------------------------- run folders


def test_a_run_folder_falls_back_from_a_damaged_best_to_latest(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write(run / "latest.pt", good_payload())
    (run / "best.pt").write_bytes(b"damaged")
    with pytest.warns(UserWarning, match=r"best\.pt.*latest\.pt") as record:
        agent = make(str(run))
    assert isinstance(agent, NetworkAgent) and agent.name == str(run)
    assert str(run / "best.pt") in str(record[0].message) and str(run / "latest.pt") in str(record[0].message)
    write(run / "best.pt", good_payload())  # a good best: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(make(str(run)), NetworkAgent)
    write(run / "best.pt", good_payload(hidden=-1))
    write(run / "latest.pt", good_payload(layers="x"))
    with pytest.raises(CheckpointError, match="no usable checkpoint in the run folder") as caught:
        make(str(run))
    message = str(caught.value)
    assert str(run) in message and "'hidden' must be at least 1" in message and "'layers' must be an int" in message
    (run / "latest.pt").unlink()
    with pytest.raises(CheckpointError, match=r"best\.pt.*'hidden'"):
        make(str(run))
    (run / "best.pt").unlink()
    with pytest.raises(CheckpointError, match="no checkpoint in the run folder"):
        make(str(run))


def test_a_run_folder_with_only_latest_loads_it_without_warning(tmp_path):
    write(tmp_path / "latest.pt", good_payload())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(make(str(tmp_path)), NetworkAgent)
