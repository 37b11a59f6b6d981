"""Checkpoints are checked by what loading them would allocate, before anything is allocated.

Each case here once loaded: a float64 weight of 1e308 (finite, then infinite as float32), tensors
saved as expanded views of one element (a few KB declaring gigabytes), a storage record shorter
than its tensor, a deflate bomb inside a zip, a network too large to train. Every one is now a
one-line ``CheckpointError`` naming the file, and a refused load stays far under 200 MB (measured
in a fresh interpreter, its peak RSS reset just before the load).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
import torch

from trinity_env.agents import make
from trinity_env.agents.az import FORMAT as AZ_FORMAT
from trinity_env.agents.az import AZNetwork, load_network, save_network
from trinity_env.agents.loaders.checkpoint import (
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_PARAMETERS,
    CheckpointError,
    mlp_parameters,
    network_size_problem,
    read_torch,
)
from trinity_env.agents.loaders.sb3 import load_policy
from trinity_env.agents.networks.ppo_network import FORMAT, PolicyNetwork, load_checkpoint
from trinity_env.spec.observation import OBSERVATION_SIZE

MEMORY_LIMIT_MB = 200


def policy_payload(**change) -> dict:
    torch.manual_seed(0)
    network = PolicyNetwork(8, 2)
    return {
        "format": FORMAT,
        "network": "mlp",
        "hidden": 8,
        "layers": 2,
        "tactics": False,
        "model": network.state_dict(),
    } | change


def az_payload(**change) -> dict:
    torch.manual_seed(0)
    network = AZNetwork(8, 2, tactics=False)
    payload = {"format": AZ_FORMAT, "network": "mlp", "hidden": 8, "layers": 2, "tactics": False}
    return payload | {"model": network.state_dict()} | change


def saved(path: Path, payload) -> Path:
    torch.save(payload, path)
    return path


def expanded_model(hidden: int, layers: int) -> dict:
    """The network's weights for ``hidden``/``layers`` as views of one element each: a few bytes on disk."""
    with torch.device("meta"):
        shapes = {key: tuple(t.shape) for key, t in PolicyNetwork(hidden, layers).state_dict().items()}
    return {key: torch.zeros(1).expand(*shape) for key, shape in shapes.items()}


@pytest.fixture(scope="module")
def clean_zip(tmp_path_factory) -> Path:
    from sb3_contrib import MaskablePPO

    from trinity_env.envs.single_agent import TrinityTowersEnv

    path = tmp_path_factory.mktemp("sb3") / "clean.zip"
    env = TrinityTowersEnv(opponent="random", draft="dealt")
    MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={"net_arch": [16, 16]}).save(path)
    return path


def with_member(source: Path, target: Path, name: str, content: bytes) -> Path:
    with zipfile.ZipFile(source) as archive:
        members = {n: archive.read(n) for n in archive.namelist() if n != name}
    with zipfile.ZipFile(target, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        archive.writestr(name, content)
    return target


def policy_state(clean_zip: Path) -> dict:
    with zipfile.ZipFile(clean_zip) as archive:
        return torch.load(io.BytesIO(archive.read("policy.pth")), weights_only=True)


def pth_bytes(state: dict) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


# ---------------------------------------------------------------- finite after the cast


@pytest.mark.parametrize("kind", ["policy", "az"])
def test_a_float64_weight_that_overflows_float32_is_refused(tmp_path, kind):
    payload, load = (policy_payload(), load_checkpoint) if kind == "policy" else (az_payload(), load_network)
    model = {key: tensor.double() for key, tensor in payload["model"].items()}
    model["value.bias"] = torch.tensor([1e308], dtype=torch.float64)  # finite as float64, infinite as float32
    path = saved(tmp_path / "huge.pt", payload | {"model": model})
    with pytest.raises(CheckpointError, match=r"huge\.pt: model entry 'value\.bias' holds NaN or infinite values"):
        load(path)
    # float64 weights that fit float32 still load, as float32
    model["value.bias"] = torch.tensor([0.5], dtype=torch.float64)
    network, _ = load(saved(tmp_path / "fine.pt", payload | {"model": model}))
    assert network.value.bias.dtype == torch.float32 and float(network.value.bias.detach()) == 0.5


def test_an_sb3_weight_that_overflows_float32_is_refused(tmp_path, clean_zip):
    state = {key: tensor.double() for key, tensor in policy_state(clean_zip).items()}
    state["value_net.bias"] = torch.tensor([1e308], dtype=torch.float64)
    path = with_member(clean_zip, tmp_path / "huge.zip", "policy.pth", pth_bytes(state))
    with pytest.raises(CheckpointError, match=r"huge\.zip: policy\.pth: model entry 'value_net\.bias' holds NaN"):
        load_policy(path)


# ---------------------------------------------------------------- views, storages, compression


def test_expanded_views_are_refused_before_anything_is_built(tmp_path):
    model = expanded_model(4096, 1)
    path = saved(tmp_path / "expanded.pt", policy_payload(hidden=4096, layers=1, model=model))
    assert path.stat().st_size < 30_000
    with pytest.raises(CheckpointError, match=r"expanded\.pt: a tensor of shape .* is an expanded or strided view"):
        load_checkpoint(path)
    az = az_payload(hidden=4096, layers=1, model=model)
    with pytest.raises(CheckpointError, match="expanded or strided view"):
        load_network(saved(tmp_path / "az.pt", az))


def test_expanded_views_in_an_sb3_zip_are_refused(tmp_path, clean_zip):
    state = {key: torch.zeros(1).expand(*tensor.shape) for key, tensor in policy_state(clean_zip).items()}
    path = with_member(clean_zip, tmp_path / "expanded.zip", "policy.pth", pth_bytes(state))
    with pytest.raises(CheckpointError, match=r"expanded\.zip.*expanded or strided view"):
        load_policy(path)


def test_a_transposed_view_is_refused_and_a_contiguous_copy_loads(tmp_path):
    payload = policy_payload()
    square = payload["model"]["body.2.weight"]  # 8 x 8: its transpose is the same shape, strided
    strided = payload | {"model": payload["model"] | {"body.2.weight": square.t().contiguous().t()}}
    with pytest.raises(CheckpointError, match="strided view"):
        load_checkpoint(saved(tmp_path / "strided.pt", strided))
    load_checkpoint(saved(tmp_path / "copy.pt", payload))


def rewrite_record(path: Path, target: Path, change) -> Path:
    """A copy of a torch zip with the records ``change(name, bytes)`` returns (None: dropped)."""
    with zipfile.ZipFile(path) as archive:
        members = [(info, archive.read(info.filename)) for info in archive.infolist()]
    with zipfile.ZipFile(target, "w") as archive:
        for info, data in members:
            new = change(info.filename, data)
            if new is not None:
                archive.writestr(info.filename, new)
    return target


def test_a_storage_smaller_than_its_tensor_is_refused(tmp_path):
    good = saved(tmp_path / "good.pt", policy_payload())
    short = rewrite_record(good, tmp_path / "short.pt", lambda n, d: d[:8] if n.endswith("data/0") else d)
    declared = rf"short\.pt: storage '0' declares {8 * OBSERVATION_SIZE:,} float32 values but its record"
    with pytest.raises(CheckpointError, match=declared):
        load_checkpoint(short)
    gone = rewrite_record(good, tmp_path / "gone.pt", lambda n, d: None if n.endswith("data/0") else d)
    with pytest.raises(CheckpointError, match=r"gone\.pt: storage '0' has no record"):
        load_checkpoint(gone)


def compressed_copy(path: Path, target: Path) -> Path:
    """``path``'s zip members written again deflated into ``target`` (torch never compresses them)."""
    with zipfile.ZipFile(path) as archive:
        members = [(info.filename, archive.read(info.filename)) for info in archive.infolist()]
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return target


def test_compressed_members_of_a_torch_file_are_refused(tmp_path):
    packed = compressed_copy(saved(tmp_path / "good.pt", policy_payload()), tmp_path / "packed.pt")
    with pytest.raises(CheckpointError, match=r"packed\.pt: the zip member .* is compressed"):
        load_checkpoint(packed)


def deflate_bomb(clean_zip: Path, target: Path, size: int) -> Path:
    """``clean_zip`` with a ``policy.pth`` of ``size`` zero bytes, deflated to a few hundred KB."""
    with zipfile.ZipFile(clean_zip) as archive:
        members = {n: archive.read(n) for n in archive.namelist() if n != "policy.pth"}
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        info = zipfile.ZipInfo("policy.pth")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as member:
            chunk = bytes(1 << 20)
            for _ in range(size >> 20):
                member.write(chunk)
    return target


def test_a_deflate_bomb_in_an_sb3_zip_is_refused_by_its_size(tmp_path, clean_zip):
    bomb = deflate_bomb(clean_zip, tmp_path / "bomb.zip", 256 << 20)
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(CheckpointError, match=r"bomb\.zip: the zip's 'policy\.pth' is larger than"):
        load_policy(bomb)


# ---------------------------------------------------------------- one table of limits


def test_the_size_limits_are_one_table_for_trainers_and_loaders(tmp_path):
    from training.az_config import AZConfig
    from training.config import TrainConfig, TrainConfigError

    assert network_size_problem(256, 2) is None
    for hidden, layers in ((10_000_000, 2), (MAX_HIDDEN + 1, 1), (64, MAX_LAYERS + 1), (4096, 2), (0, 2), (8, 0)):
        problem = network_size_problem(hidden, layers)
        assert problem is not None
        for config in (AZConfig, TrainConfig):
            with pytest.raises(TrainConfigError, match=r"fields? '(hidden|layers)'"):
                config.from_dict({"hidden": hidden, "layers": layers})
        payload = az_payload(hidden=hidden, layers=layers)
        refused = r"(hidden|layers).? must be (between|at least)|weights, over the limit"
        with pytest.raises(CheckpointError, match=refused):
            load_network(saved(tmp_path / "big.pt", payload))
    # the deepest network a config accepts trains, saves and loads (layers: 17 once trained and never loaded)
    config = AZConfig.from_dict({"hidden": 8, "layers": MAX_LAYERS})
    network = AZNetwork(config.hidden, config.layers, config.tactics)
    save_network(tmp_path / "deep.pt", network)
    loaded, _ = load_network(tmp_path / "deep.pt")
    assert loaded.layers == MAX_LAYERS
    # the limit is the same count everywhere: hidden 2048 with 5 layers is over it, 4 layers is not
    assert mlp_parameters(2048, 5) > MAX_PARAMETERS >= mlp_parameters(2048, 4)
    assert TrainConfig.from_dict({"hidden": 2048, "layers": 4}).hidden == 2048


# ---------------------------------------------------------------- memory of refused loads


def peak_growth(tmp_path: Path, setup: str, action: str) -> tuple[float, str]:
    """Peak RSS growth (MB) of ``action`` in a fresh interpreter after ``setup``, and what it printed."""
    script = textwrap.dedent(
        """
        import sys
        {setup}
        def rss(field):
            for line in open("/proc/self/status"):
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
        open("/proc/self/clear_refs", "w").write("5")  # peak RSS := current RSS
        base = rss("VmRSS:")
        try:
            {action}
            print("LOADED")
        except Exception as err:
            print("REFUSED", type(err).__name__, err)
        print("GROWTH", rss("VmHWM:") - base)
        """
    ).format(setup=setup, action=action)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    growth = float(done.stdout.rsplit("GROWTH", 1)[1])
    return growth, done.stdout


@pytest.mark.e2e  # one fresh interpreter a file: make test-e2e
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's clear_refs to reset peak RSS")
def test_refused_loads_stay_under_200_mb(tmp_path, clean_zip):
    big = 20_000_000  # elements each expanded tensor declares: 80 MB as float32, 5 GB for the set below
    model = {f"body.{2 * k}.weight": torch.zeros(1).expand(big) for k in range(64)}
    saved(tmp_path / "views.pt", policy_payload(model=model))
    az = {
        key: torch.zeros(1).expand(*shape)
        for key, shape in ((k, tuple(t.shape)) for k, t in AZNetwork(4096, 1, tactics=False).state_dict().items())
    }
    saved(tmp_path / "az-views.pt", az_payload(hidden=4096, layers=1, model=az))
    state = {key: torch.zeros(1).expand(*tensor.shape) for key, tensor in policy_state(clean_zip).items()}
    state["mlp_extractor.policy_net.0.weight"] = torch.zeros(1).expand(1_000_000, OBSERVATION_SIZE)
    with_member(clean_zip, tmp_path / "views.zip", "policy.pth", pth_bytes(state))
    deflate_bomb(clean_zip, tmp_path / "bomb.zip", 1 << 30)
    cases = {
        "views.pt": "from trinity_env.agents.networks.ppo_network import load_checkpoint as load",
        "az-views.pt": "from trinity_env.agents.az import load_network as load",
        "views.zip": "from trinity_env.agents.loaders.sb3 import load_policy as load",
        "bomb.zip": "from trinity_env.agents.loaders.sb3 import load_policy as load",
    }
    for name, setup in cases.items():
        growth, output = peak_growth(tmp_path, f"import torch\n{setup}", f"load({str(tmp_path / name)!r})")
        assert "REFUSED CheckpointError" in output and name in output, output
        assert growth < MEMORY_LIMIT_MB, (name, growth, output)
    # the measure sees allocations: loading 80 MB of real weights shows them
    real = {"value.bias": torch.zeros(big)}
    torch.save(real, tmp_path / "real.pt")
    growth, output = peak_growth(
        tmp_path,
        "import torch\nfrom trinity_env.agents.loaders.checkpoint import read_torch",
        f"x = read_torch({str(tmp_path / 'real.pt')!r}); x['value.bias'].add_(1)",
    )
    assert "LOADED" in output and growth > 0.9 * big * 4 / 2**20, output


def test_read_torch_refuses_names_a_checkpoint_never_holds(tmp_path):
    path = tmp_path / "names.pt"
    torch.save({"size": torch.Size([3]), "x": torch.zeros(2)}, path)
    with pytest.raises(CheckpointError, match=r"names\.pt: refused without running it: it names torch\.Size"):
        read_torch(path)
    json_path = tmp_path / "plain.pt"
    torch.save({"history": json.dumps([1, 2]), "rng": torch.get_rng_state()}, json_path)
    assert read_torch(json_path)["history"] == "[1, 2]"


def test_make_refuses_the_same_files(tmp_path):
    model = expanded_model(4096, 1)
    path = saved(tmp_path / "expanded.pt", policy_payload(hidden=4096, layers=1, model=model))
    with pytest.raises(CheckpointError, match="expanded or strided view"):
        make(str(path))


def test_the_arena_refuses_a_bad_checkpoint_before_its_first_game(tmp_path):
    """A float64 1e308 network once played as inf/NaN and the arena died mid-run, losing its results."""
    payload = policy_payload()
    model = {key: tensor.double() for key, tensor in payload["model"].items()}
    model["policy.weight"] = model["policy.weight"] * 1e308
    path = saved(tmp_path / "huge.pt", payload | {"model": model})
    command = [
        sys.executable,
        "-m",
        "trinity_env.cli",
        "arena",
        "--agents",
        str(path),
        "random",
        "--games",
        "2",
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "huge.pt: model entry 'policy.weight' holds NaN or infinite values as float32" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_az_run_folder_falls_back_from_a_refused_best_to_latest(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    torch.manual_seed(0)
    save_network(run / "latest.pt", AZNetwork(8, 1, tactics=False))
    saved(run / "best.pt", az_payload(hidden=4096, layers=1, model=expanded_model(4096, 1)))
    with pytest.warns(UserWarning, match=r"best\.pt cannot be loaded .*expanded or strided view.*playing .*latest\.pt"):
        agent = make(f"az:{run},sims=0")
    assert agent.network.hidden == 8
    (run / "latest.pt").write_bytes(b"damaged")
    with pytest.raises(CheckpointError, match=r"no usable checkpoint in the run folder .*best\.pt: .*latest\.pt: "):
        make(f"az:{run},sims=0")


def test_the_security_page_states_the_limits_in_force():
    from trinity_env.agents import az, mcts
    from trinity_env.agents.loaders import checkpoint, sb3
    from trinity_env.core import files
    from trinity_env.web import store

    page = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text(encoding="utf-8")
    section = " ".join(page.split())
    stated = [
        f"hidden width at most {checkpoint.MAX_HIDDEN}",
        f"at most {checkpoint.MAX_LAYERS} layers",
        f"at most {checkpoint.MAX_PARAMETERS:,} weights a network",
        f"`data.pkl` (at most {checkpoint.MAX_PICKLE_BYTES >> 20} MiB)",
        f"Files over {checkpoint.MAX_CHECKPOINT_BYTES >> 30} GiB are not read",
        f"`data` (at most {sb3.MAX_DATA_BYTES >> 20} MiB)",
        f"`policy.pth` at most {sb3.MAX_WEIGHTS_BYTES >> 20} MiB",
        f"past {files.MAX_YAML_NODES:,} nodes, over {files.MAX_YAML_BYTES >> 20} MiB",
        f"an integer of over {files.MAX_DIGITS} digits",
        f"read up to {files.MAX_DOCUMENT_BYTES >> 20} MiB",
        f"at most {mcts.MAX_SIMULATIONS:,} simulations and {mcts.MAX_WORLDS} worlds",
        f"at most {az.MAX_SIMULATIONS:,} simulations, {az.MAX_WORLDS} worlds and {az.MAX_WORLD_SIMULATIONS:,}",
        f"{az.MAX_CONSIDERED} considered actions",
        f"at most {store.DEFAULT_GAMES_PER_CLIENT} games and {store.DEFAULT_REPLAYS_PER_CLIENT} replays",
        f"under {MEMORY_LIMIT_MB} MB",
    ]
    missing = [phrase for phrase in stated if phrase not in section]
    assert not missing, missing
