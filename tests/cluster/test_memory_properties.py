"""MemoryStore under random operations: an informer that follows it always ends up equal to a list.

This is the property the simulator relies on (thousands of nodes through MemoryStore): whatever the
interleaving of writes, conflicts, deletions and watch expiry (410 -> relist), list+watch
reconstructs exactly the store's state, and an object's resourceVersion never goes back.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import CILIUM_NODE, AlreadyExists, Conflict, NotFound
from reconciler.controller.informer import Informer

NAMES = ["a", "b", "c"]
op = st.tuples(
    st.sampled_from(["create", "update", "status", "stale", "delete", "poll"]),
    st.sampled_from(NAMES),
    st.integers(0, 20),
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(op, max_size=60), history=st.integers(1, 6))
def test_list_plus_watch_always_reconstructs_the_store(ops: list[tuple[str, str, int]], history: int) -> None:
    store = MemoryStore(history_limit=history)
    informer = Informer(store, CILIUM_NODE)
    informer.poll(0)
    last_rv: dict[str, int] = {}
    for action, name, value in ops:
        try:
            if action == "create":
                out = store.create(CILIUM_NODE, {"metadata": {"name": name}, "spec": {"v": value}})
            elif action in ("update", "status", "stale"):
                obj = store.get(CILIUM_NODE, name)
                if action == "stale":
                    obj["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) - 1)
                if action == "status":
                    obj["status"] = {"v": value}
                    out = store.update_status(CILIUM_NODE, obj)
                else:
                    obj["spec"] = {"v": value}
                    out = store.update(CILIUM_NODE, obj)
                assert action != "stale", "a stale resourceVersion must conflict"
            elif action == "delete":
                store.delete(CILIUM_NODE, name)
                continue
            else:
                informer.poll(0)
                continue
        except (NotFound, AlreadyExists, Conflict):
            continue
        rv = int(out["metadata"]["resourceVersion"])
        assert rv >= last_rv.get(name, 0)  # equal only for a no-op write, which stores nothing
        last_rv[name] = rv
    informer.poll(0)
    listed = {o["metadata"]["name"]: o for o in store.list(CILIUM_NODE).items}
    assert {k[1]: v for k, v in informer.cache.items()} == listed
