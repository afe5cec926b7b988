"""rlpyt's affinity string codes (``"0slt_8cpu_1gpu"``), for launch scripts that pass layouts around.

A code is the keywords of :func:`~rlrun.utils.launching.layout.make_affinity` written as parts such
as ``8cpu``, with an optional run slot in front; in new code, prefer the keywords.
"""

from __future__ import annotations

import re
from typing import Any

from rlrun.utils.launching.layout import Affinity, Machine, int_at_least, lay_out, make_affinity, resolve_request

__all__ = [
    "encode_affinity",
    "affinity_from_code",
    "decode_affinity",
    "prepend_run_slot",
    "remove_run_slot",
    "get_n_run_slots",
    "quick_affinity_code",
]

# Keyword -> rlpyt's three-letter code, in the order rlpyt writes them.
_ABBREV = {
    "n_cpu_core": "cpu",
    "n_gpu": "gpu",
    "contexts_per_gpu": "cxg",
    "gpu_per_run": "gpr",
    "cpu_per_run": "cpr",
    "cpu_per_worker": "cpw",
    "hyperthread_offset": "hto",
    "n_socket": "skt",
    "cpu_reserved": "res",
    "async_sample": "ass",
    "sample_gpu_per_run": "sgr",
    "optim_sample_share_gpu": "oss",
    "alternating": "alt",
    "set_affinity": "saf",
}
_KEYWORD = {abbrev: keyword for keyword, abbrev in _ABBREV.items()}
_FLAGS = ("async_sample", "optim_sample_share_gpu", "alternating", "set_affinity")
_RUN_SLOT = "slt"
# What a code without the part means (hyperthread_offset and cpu_reserved depend on other parts).
_ABSENT = dict(
    contexts_per_gpu=1,
    gpu_per_run=1,
    cpu_per_worker=1,
    n_socket=1,
    async_sample=False,
    sample_gpu_per_run=0,
    optim_sample_share_gpu=False,
    alternating=False,
    set_affinity=True,
)
_TOKEN = re.compile(r"^(\d+)([a-z]{3})$")


def encode_affinity(
    n_cpu_core: int | None = None,
    n_gpu: int | None = None,
    contexts_per_gpu: int = 1,
    gpu_per_run: int = 1,
    cpu_per_run: int = 1,
    cpu_per_worker: int = 1,
    cpu_reserved: int | None = None,
    hyperthread_offset: int | None = None,
    n_socket: int | None = None,
    run_slot: int | None = None,
    async_sample: bool = False,
    sample_gpu_per_run: int = 0,
    optim_sample_share_gpu: bool = False,
    alternating: bool = False,
    set_affinity: bool = True,
    machine: Machine | None = None,
) -> str:
    """rlpyt's string code for these keywords (``"0slt_8cpu_1gpu_0hto"``); ``affinity_from_code`` reverses it.

    Same keywords and meanings as :func:`make_affinity`, in rlpyt's positional order; ``None`` counts are
    read from this machine. Checks that the layout is possible, not that this machine holds it: a code
    is often written for another machine, and is checked where the run starts (``affinity_from_code``).
    """
    keywords = dict(
        n_cpu_core=n_cpu_core,
        n_gpu=n_gpu,
        cpu_reserved=cpu_reserved,
        contexts_per_gpu=contexts_per_gpu,
        gpu_per_run=gpu_per_run,
        cpu_per_run=cpu_per_run,
        cpu_per_worker=cpu_per_worker,
        async_sample=async_sample,
        sample_gpu_per_run=sample_gpu_per_run,
        optim_sample_share_gpu=optim_sample_share_gpu,
        hyperthread_offset=hyperthread_offset,
        n_socket=n_socket,
        alternating=alternating,
        set_affinity=set_affinity,
    )
    req = resolve_request(machine, keywords)
    lay_out(req, 0 if run_slot is None else int_at_least("run_slot", run_slot, 0), None)
    # A part is written only where its value differs from what its absence means to the decoder
    # (rlpyt's reading: no "hto" puts siblings at +n_cpu_core; no "res" means 1 when async, else 0).
    absent = dict(_ABSENT, hyperthread_offset=req.n_cpu_core, cpu_reserved=int(req.async_sample))
    parts = [f"{req.n_cpu_core}cpu", f"{req.n_gpu}gpu"]
    for keyword, abbrev in list(_ABBREV.items())[2:]:
        value = getattr(req, keyword)
        # CPU-only codes always carry cpu_per_run, as rlpyt writes them; GPU runs derive it.
        if (req.n_gpu == 0) if keyword == "cpu_per_run" else value != absent[keyword]:
            parts.append(f"{int(value)}{abbrev}")
    code = "_".join(parts)
    return code if run_slot is None else prepend_run_slot(run_slot, code)


def decode_affinity(affinity_code: str) -> dict[str, int]:
    """The code's values by rlpyt's abbreviations (``{"cpu": 8, "gpu": 1, ...}``), without a run slot."""
    values: dict[str, int] = {}
    for part in str(affinity_code).split("_"):
        match = _TOKEN.match(part)
        if match is None or match.group(2) not in _KEYWORD:
            raise ValueError(
                f"Unrecognized part {part!r} in affinity code {affinity_code!r}: each part is a number and one of "
                f"{sorted(_KEYWORD)}. Build codes with encode_affinity(), or use make_affinity() keywords."
            )
        values[match.group(2)] = int(match.group(1))
    return values


def prepend_run_slot(run_slot: int, affinity_code: str) -> str:
    """The code with a run slot in front, as a launcher assigns one per run."""
    return f"{int_at_least('run_slot', run_slot, 0)}{_RUN_SLOT}_{affinity_code}"


def remove_run_slot(run_slot_affinity_code: str) -> tuple[int, str]:
    """``(run_slot, code)`` from ``"3slt_..."``."""
    head, _, rest = str(run_slot_affinity_code).partition("_")
    match = _TOKEN.match(head)
    if match is None or match.group(2) != _RUN_SLOT or not rest:
        raise ValueError(
            f"Affinity code {run_slot_affinity_code!r} does not start with a run slot such as '0slt_'. Add one "
            "with prepend_run_slot(), or pass run_slot to encode_affinity()."
        )
    return int(match.group(1)), rest


def _code_keywords(affinity_code: str) -> tuple[int, dict[str, Any]]:
    """The run slot (0 when the code has none) and the make_affinity keywords of a code."""
    code, run_slot = str(affinity_code), 0
    if code.split("_", 1)[0].endswith(_RUN_SLOT):
        run_slot, code = remove_run_slot(code)
    values = decode_affinity(code)
    if "cpu" not in values or "gpu" not in values:
        raise ValueError(f"Affinity code {affinity_code!r} needs its 'cpu' and 'gpu' parts, e.g. '8cpu_1gpu'.")
    keywords: dict[str, Any] = {_KEYWORD[a]: bool(v) if _KEYWORD[a] in _FLAGS else v for a, v in values.items()}
    keywords.setdefault("hyperthread_offset", keywords["n_cpu_core"])
    return run_slot, keywords


def affinity_from_code(run_slot_affinity_code: str, machine: Machine | None = None) -> Affinity:
    """The affinity a code stands for, on this machine (or ``machine``): make_affinity's, same keywords."""
    run_slot, keywords = _code_keywords(run_slot_affinity_code)
    return make_affinity(run_slot, machine=machine, **keywords)


def get_n_run_slots(affinity_code: str) -> int:
    """How many runs the code's layout holds side by side (run slots ``0 .. n - 1``)."""
    return resolve_request(None, _code_keywords(affinity_code)[1]).n_run_slots


def quick_affinity_code(
    n_parallel: int | None = None, use_gpu: bool = True, contexts_per_gpu: int = 1, machine: Machine | None = None
) -> str:
    """A code that splits this machine into ``n_parallel`` equal runs: with GPUs, ``contexts_per_gpu`` runs
    on each GPU used (all of them, or ``n_parallel``); without, ``n_parallel`` runs of equal cores."""
    machine = machine or Machine.current()
    n_cpu, n_gpu = len(machine.cpus), machine.n_gpu if use_gpu else 0
    if n_gpu > 0:
        n_gpu = n_gpu if n_parallel is None else min(int_at_least("n_parallel", n_parallel, 1), n_gpu)
        n_runs = n_gpu * int_at_least("contexts_per_gpu", contexts_per_gpu, 1)
        return encode_affinity(
            n_cpu_core=n_cpu // n_runs * n_runs, n_gpu=n_gpu, contexts_per_gpu=contexts_per_gpu, machine=machine
        )
    if not n_parallel:
        raise ValueError("quick_affinity_code: pass n_parallel > 0 (runs side by side) when no GPU is used.")
    cpu_per_run = n_cpu // min(int_at_least("n_parallel", n_parallel, 1), n_cpu)
    return encode_affinity(
        n_cpu_core=n_cpu // cpu_per_run * cpu_per_run, n_gpu=0, cpu_per_run=cpu_per_run, machine=machine
    )
