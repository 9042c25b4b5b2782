"""The policy-value ResNet (AlphaZero's design at SigmaZero's scale, paper 002 Table 4, with
the number of blocks and channels configurable) and its artifact.

stem: 3x3 conv 21 -> C, batch norm, ReLU; ``blocks`` residual blocks (3x3 conv, BN, ReLU,
3x3 conv, BN, add the skip, ReLU); policy head: 1x1 conv C -> 2, BN, ReLU, linear 128 -> 4672
logits; value head: 1x1 conv C -> 1, BN, ReLU, linear 64 -> ``value_hidden``, ReLU, linear ->
1, tanh: the side to move's expected outcome in [-1, 1].

The artifact (``policy_value.pt``) is a ``torch.save`` of ``{"format", "arch", "state"}``:
the architecture's sizes and the state dict, so :func:`load_network` rebuilds the net without
the trainer.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from engines.puct.encoding import MOVES, PLANES

FORMAT = "chesslab policy_value v1"
ARTIFACT = "policy_value.pt"


@dataclass(frozen=True)
class Architecture:
    """The net's sizes: residual blocks, channels, value head width."""

    blocks: int = 2
    channels: int = 32
    value_hidden: int = 64

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < (0 if name == "blocks" else 1):
                raise ValueError(f"{name}: out of range, got {value!r}")


def conv_bn(inputs: int, outputs: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(inputs, outputs, kernel, padding=kernel // 2, bias=False),
                         nn.BatchNorm2d(outputs))


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.first, self.second = conv_bn(channels, channels, 3), conv_bn(channels, channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.second(torch.relu(self.first(x))))


class PolicyValueNet(nn.Module):
    """(n, 21, 8, 8) planes -> (policy logits (n, 4672), value (n,) in [-1, 1])."""

    def __init__(self, arch: Architecture) -> None:
        super().__init__()
        self.arch = arch
        c = arch.channels
        self.stem = conv_bn(PLANES, c, 3)
        self.blocks = nn.Sequential(*(ResidualBlock(c) for _ in range(arch.blocks)))
        self.policy_conv, self.policy_fc = conv_bn(c, 2, 1), nn.Linear(2 * 64, MOVES)
        self.value_conv = conv_bn(c, 1, 1)
        self.value_fc = nn.Sequential(nn.Linear(64, arch.value_hidden), nn.ReLU(),
                                      nn.Linear(arch.value_hidden, 1))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        trunk = self.blocks(torch.relu(self.stem(x)))
        policy = self.policy_fc(torch.relu(self.policy_conv(trunk)).flatten(1))
        value = torch.tanh(self.value_fc(torch.relu(self.value_conv(trunk)).flatten(1)))
        return policy, value.squeeze(1)


def save_network(net: PolicyValueNet, path: Path) -> Path:
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    torch.save({"format": FORMAT, "arch": asdict(net.arch), "state": state}, path)
    return path


def load_network(path: str | Path) -> PolicyValueNet:
    """The net of an artifact, in eval mode on the CPU; ValueError naming a bad file."""
    try:
        saved: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError) as exc:   # torch's reason: its first sentence
        reason = str(exc).strip().splitlines()[0].split(". ")[0] if str(exc).strip() \
            else type(exc).__name__
        raise ValueError(f"cannot read policy-value net {str(path)!r}: {reason}") from None
    if saved.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a {FORMAT} file")
    net = PolicyValueNet(Architecture(**saved["arch"]))
    net.load_state_dict(saved["state"])
    return net.eval()


def random_network(arch: Architecture | None = None, seed: int = 0) -> PolicyValueNet:
    """An untrained net (round 0 of self-play), reproducible from ``seed``."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return PolicyValueNet(arch or Architecture()).eval()


__all__ = ["ARTIFACT", "Architecture", "PolicyValueNet", "load_network", "random_network",
           "save_network"]
