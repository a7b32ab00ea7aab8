"""Secrets: what the code under test may see of our environment, and what we never store or show.

Strategies get an environment built from an allowlist (:data:`ALLOWED_ENV`, plus the names a
config lists in ``executor.passEnv``), never the host's environment minus a blocklist: a
``DATABASE_URL`` or ``STRIPE_SK`` carries no telling name.

Whatever we store or show (command output, EvalResults, artifacts, journals) goes through
:func:`mask_secrets`, which hides values that look like credentials wherever they appear:
passwords in URLs, DSN keys, known token prefixes, private keys, and the exact values of
this process's credential-looking variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

__all__ = ["ALLOWED_ENV", "MASK", "looks_secret", "mask_data", "mask_secrets", "strategy_env"]

MASK = "***"

ALLOWED_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "CI", "TMPDIR", "TERM")
"""What every strategy gets from the host, with the ``LC_*`` locale variables."""

_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION|DSN|_SK\b|_KEY\b",
                          re.IGNORECASE)

# Each pattern's match is replaced by MASK.
_PATTERNS = [
    # scheme://user:password@host -> scheme://user:***@host
    (re.compile(r"(\b[a-zA-Z][\w+.-]*://[^\s:/@\"'\\]*:)[^\s@/\"'\\]+(@)"), rf"\g<1>{MASK}\g<2>"),
    # DSNs that carry a key as the user: https://<key>@o1.ingest.sentry.io/2
    (re.compile(r"(\b[a-zA-Z][\w+.-]*://)[A-Za-z0-9]{16,}(@)"), rf"\g<1>{MASK}\g<2>"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^\"\\]*?-----END [A-Z ]*PRIVATE KEY-----"), MASK),
    (re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}"), MASK),  # Stripe
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"), MASK),  # OpenAI, Anthropic
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),  # GitLab
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), MASK),  # Slack
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),  # AWS access key ids
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), MASK),  # Google API keys
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), MASK),
    (re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}"), MASK),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), MASK),  # Hugging Face
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),  # JWTs
]


def looks_secret(name: str, value: str) -> bool:
    """Whether an environment variable is a credential, by its name or by its value.

    Example:
        >>> looks_secret("DATABASE_URL", "postgres://app:hunter22@db:5432/app")
        True
        >>> looks_secret("LANG", "C.UTF-8")
        False
    """
    return bool(_SECRET_NAME.search(name)) or mask_secrets(value, known=()) != value


def mask_secrets(text: str, known: Iterable[str] | None = None) -> str:
    """``text`` with every credential-looking value replaced by ``***``.

    ``known``: exact values to hide too; by default this process's credential-looking
    environment values (8 characters or more).

    Example:
        >>> mask_secrets("connecting to postgres://app:hunter22@db:5432/app")
        'connecting to postgres://app:***@db:5432/app'
        >>> mask_secrets("key=sk_live_51Habcdefghijklmnop and SENTRY_DSN=https://0123456789abcdef0123@o1.ingest.sentry.io/2")
        'key=*** and SENTRY_DSN=https://***@o1.ingest.sentry.io/2'
    """
    if not text:
        return text
    for value in sorted(_host_secrets() if known is None else known, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def mask_data(value: Any) -> Any:
    """Every string inside a JSON-like value (dicts, lists) masked; the shape kept.

    Example:
        >>> mask_data({"output": ["ok", "postgres://u:pw123456@db/x"], "n": 1})
        {'output': ['ok', 'postgres://u:***@db/x'], 'n': 1}
    """
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {key: mask_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [mask_data(item) for item in value]
    return value


@cache
def _host_secrets() -> tuple[str, ...]:
    """This process's credential values; read once (the environment does not change under us)."""
    values = []
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and not value.startswith("/"):
            values.append(value)
    return tuple(values)


def strategy_env(extra: Mapping[str, str] | None = None, passed: Iterable[str] = (),
                 base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a strategy's command runs with on the host: the allowlist, the ``passed``
    names, then ``extra`` (sprintflow's own variables).

    Example:
        >>> env = strategy_env({"SPRINTFLOW_ITERATION": "2"}, passed=["NODE_OPTIONS"],
        ...                    base={"PATH": "/bin", "LC_ALL": "C", "DATABASE_URL": "postgres://a:b@h/d",
        ...                          "NODE_OPTIONS": "--max-old-space-size=2048"})
        >>> sorted(env)
        ['LC_ALL', 'NODE_OPTIONS', 'PATH', 'SPRINTFLOW_ITERATION']
    """
    source = os.environ if base is None else base
    wanted = set(ALLOWED_ENV) | set(passed)
    env = {name: value for name, value in source.items() if name in wanted or name.startswith("LC_")}
    env.update(extra or {})
    return env
