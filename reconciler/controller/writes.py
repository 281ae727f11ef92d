"""Conflict-safe writes of the CiliumNode fields the operator owns (ENI-PUB-1, MP-CRD-1).

Ownership: the agent owns `spec.ipam.pools.requested` and, in ENI mode, `spec.ipam.pools.allocated`;
the operator owns `status.eni`, `status.ipam.operator-status` and, in multi-pool mode, *additions*
to `spec.ipam.pools.allocated`. So every operator write is a function of the freshly read object
that touches only its own fields, written with that object's resourceVersion; a 409 re-reads and
re-plans. Writes go through raw JSON, never through `CiliumNode.to_obj`, so fields this project
does not model (newer Cilium keys) survive.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reconciler.cluster.store import CILIUM_NODE, ClusterStore, Conflict, JsonObj, Kind, NotFound
from reconciler.controller.logs import log_event
from reconciler.model import EniStatus

log = logging.getLogger("cilium_ipam.writes")

Mutation = Callable[[JsonObj], JsonObj | None]
"""Fresh object -> object to write, or None when it already says what we want."""


class TooManyConflicts(Exception):
    """Every attempt lost the race; the caller retries on its next trigger."""


def write_with_retry(
    store: ClusterStore,
    name: str,
    mutate: Mutation,
    *,
    status: bool,
    kind: Kind = CILIUM_NODE,
    namespace: str | None = None,
    attempts: int = 10,
    on_conflict: Callable[[], None] | None = None,
) -> JsonObj | None:
    """Read, mutate, write with resourceVersion; on 409 re-read and re-plan. None: object is gone."""
    for _ in range(attempts):
        try:
            current = store.get(kind, name, namespace)
        except NotFound:
            return None
        desired = mutate(current)  # every store returns a fresh copy: mutating it is safe
        if desired is None:
            return current
        desired.setdefault("metadata", {})["resourceVersion"] = current["metadata"]["resourceVersion"]
        try:
            return store.update_status(kind, desired) if status else store.update(kind, desired)
        except Conflict:
            if on_conflict:
                on_conflict()
            log_event(log, "write-conflict", logging.DEBUG, node=name, action="retry")
        except NotFound:
            return None
    raise TooManyConflicts(f"{kind.kind} {name!r}: {attempts} writes in a row lost to concurrent writers")


# -- pure mutations over raw JSON -----------------------------------------------------------------
def _status(obj: JsonObj) -> dict[str, Any]:
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    return status


def set_eni_status(enis: Mapping[str, EniStatus]) -> Mutation:
    """ENI-PUB-1: replace status.eni.enis; no write when it already matches."""
    wanted = {eni_id: e.to_obj() for eni_id, e in enis.items()}

    def mutate(obj: JsonObj) -> JsonObj | None:
        status = _status(obj)
        eni = status.get("eni") if isinstance(status.get("eni"), dict) else {}
        if (eni or {}).get("enis", {}) == wanted:
            return None
        status["eni"] = {**(eni or {}), "enis": wanted}
        return obj

    return mutate


def set_operator_error(error: str) -> Mutation:
    """status.ipam.operator-status.error: one sentence, cleared (empty) on success."""

    def mutate(obj: JsonObj) -> JsonObj | None:
        status = _status(obj)
        ipam = status.setdefault("ipam", {})
        op = ipam.setdefault("operator-status", {})
        if (op.get("error") or "") == error:
            return None
        if error:
            op["error"] = error
        else:
            op.pop("error", None)
        return obj

    return mutate


def add_allocated(pool: str, cidrs: Iterable[str]) -> Mutation:
    """MP-CRD-1: add CIDRs to spec.ipam.pools.allocated[pool]; never removes, never touches requested."""
    adding = list(dict.fromkeys(cidrs))

    def mutate(obj: JsonObj) -> JsonObj | None:
        pools = obj.setdefault("spec", {}).setdefault("ipam", {}).setdefault("pools", {})
        allocated = pools.setdefault("allocated", [])
        entry = next((a for a in allocated if a.get("pool") == pool), None)
        if entry is None:
            entry = {"pool": pool, "cidrs": []}
            allocated.append(entry)
        have = entry.setdefault("cidrs", [])
        missing = [c for c in adding if c not in have]
        if not missing:
            return None
        have.extend(missing)
        return obj

    return mutate


def compose(*mutations: Mutation) -> Mutation:
    """Apply several mutations to one read; write once if any of them changed something."""

    def mutate(obj: JsonObj) -> JsonObj | None:
        changed = False
        for m in mutations:
            out = m(obj)
            if out is not None:
                obj, changed = out, True
        return obj if changed else None

    return mutate
