"""The `cilium-ipam operator` process: threads around a steppable controller, and a clean exit.

Threads: one per informer (watch rounds of a few seconds), the leader elector (every retry period),
the HTTP endpoints, and the loop that calls `controller.step()` whenever an event or a due trigger
wakes it (at least twice a second, for the time-based work). SIGTERM / SIGINT: stop watching,
let the step in flight finish (its writes carry resourceVersions, so stopping between two steps is
always safe), release the Lease so a standby takes over at once, exit 0.
"""

from __future__ import annotations

import functools
import json
import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from reconciler.clock import Clock, WallClock
from reconciler.cluster.store import ClusterStore, StoreError
from reconciler.controller.config import OperatorConfig
from reconciler.controller.gate import LeaderGatedEc2
from reconciler.controller.http import Endpoints, text
from reconciler.controller.leader import LeaderElector
from reconciler.controller.logs import configure, log_event
from reconciler.controller.metrics import IpamMetrics
from reconciler.ec2.aws_buckets_limiter import AwsBucketsLimiter
from reconciler.ec2.ratelimit import ClientRateLimiter, Ec2RateLimiter

log = logging.getLogger("cilium_ipam.operator")

LOOP_MAX_WAIT = 0.5
WATCH_ROUND_SECONDS = 5.0


def simulated_ec2(world_json: str, clock: Clock, metrics: IpamMetrics) -> Any:
    """TEST ONLY (--ec2-simulated-world): an in-process SimulatedEc2 built by `build_world(**world)`.

    The same JSON always builds the same IDs, so a test can build it too to learn them.
    """
    from reconciler.ec2.sim import SimulatedEc2, build_world

    spec = json.loads(world_json)
    seed = int(spec.pop("seed", 0))
    sim = SimulatedEc2(clock, seed=seed, observer=metrics)
    build_world(sim, **spec)
    return sim


def ec2_rate_limiter(config: OperatorConfig, clock: Clock, sleep: Callable[[float], None]) -> Ec2RateLimiter:
    """--ec2-api-rate-limiter: AWS's per-action buckets (capped if the user set Cilium's qps/burst
    flags), or Cilium's single qps/burst bucket (ENI-CFG-1)."""
    if config.ec2_api_rate_limiter == "single":
        return ClientRateLimiter(
            clock, sleep, qps=config.eni.limit_ipam_api_qps, burst=config.eni.limit_ipam_api_burst
        )
    return AwsBucketsLimiter(clock, sleep, total_cap=config.ec2_api_rate_cap)


def build_ec2(config: OperatorConfig, clock: Clock, metrics: IpamMetrics) -> Any:
    if config.simulated_world:
        return simulated_ec2(config.simulated_world, clock, metrics)
    from reconciler.ec2.boto3_adapter import Boto3Ec2

    wall = WallClock()  # real EC2 runs on real time, whatever clock drives the controller
    return Boto3Ec2(
        region=config.aws_region or None,
        endpoint_url=config.ec2_endpoint or None,
        clock=wall,
        sleep=time.sleep,
        limiter=ec2_rate_limiter(config, wall, time.sleep),
        observer=metrics,
    )


def build_controller(
    config: OperatorConfig, store: ClusterStore, clock: Clock, elector: LeaderElector, metrics: IpamMetrics
) -> Any:
    if config.ipam == "multi-pool":
        from reconciler.controller.multipool_controller import MultiPoolController

        return MultiPoolController(
            store, clock, elector.is_leader, auto_create=config.auto_create_pools, metrics=metrics
        )
    from reconciler.controller.eni_controller import EniController
    from reconciler.eni.operator import EniOperator
    from reconciler.eni.runner import ThreadPoolRunner

    ec2 = LeaderGatedEc2(build_ec2(config, clock, metrics), elector.is_leader)
    runner = ThreadPoolRunner(config.eni.parallel_alloc_workers)

    def engine() -> EniOperator:
        return EniOperator(ec2, config.eni, clock, runner=runner)

    return EniController(
        store, clock, elector.is_leader, engine, metrics=metrics, scan_interval=config.resync_interval
    )


class OperatorProcess:
    """Everything one operator process runs; `run()` blocks until `stop` is set."""

    def __init__(self, config: OperatorConfig, store: ClusterStore | None = None, clock: Clock | None = None):
        from reconciler.cluster.kubernetes import KubernetesStore

        self.config = config
        self.clock = clock or WallClock()
        self.store = store or KubernetesStore.from_kubeconfig(config.kubeconfig or None)
        self.metrics = IpamMetrics()
        self.stop = threading.Event()
        self.elector = LeaderElector(
            self.store,
            config.lease_namespace,
            config.lease_name,
            config.identity,
            self.clock,
            config.lease,
            on_started_leading=self._wake,
            on_stopped_leading=self._wake,
        )
        self.controller = build_controller(config, self.store, self.clock, self.elector, self.metrics)
        self._threads: list[threading.Thread] = []
        self._servers: list[Endpoints] = []
        self.loop_alive = False

    def _wake(self) -> None:
        self.controller.wake.set()

    # -- endpoints -----------------------------------------------------------------------------
    def _healthz(self) -> tuple[int, str, bytes]:
        return text(200, "ok\n") if self.loop_alive else text(503, "control loop not running\n")

    def _readyz(self) -> tuple[int, str, bytes]:
        if not self.controller.synced():
            return text(503, "informers not synced\n")
        if self.controller.ready():
            role = "leader" if self.elector.is_leader() else "standby"
            return text(200, f"ready ({role})\n")
        return text(503, "leader without a stable EC2 cache\n")

    def _metrics(self) -> tuple[int, str, bytes]:
        return 200, "text/plain; version=0.0.4; charset=utf-8", self.metrics.exposition()

    def start_endpoints(self) -> None:
        health: dict[str, Callable[[], tuple[int, str, bytes]]] = {
            "/healthz": self._healthz,
            "/readyz": self._readyz,
        }
        metrics_addr = self.config.metrics_addr if self.config.eni.enable_metrics else None
        if metrics_addr and metrics_addr == self.config.health_addr:
            health["/metrics"] = self._metrics
        elif metrics_addr:
            host, port = metrics_addr
            self._servers.append(Endpoints(host, port, {"/metrics": self._metrics}).start())
        if self.config.health_addr:
            host, port = self.config.health_addr
            self._servers.append(Endpoints(host, port, health).start())
        for server in self._servers:
            log_event(log, "listening", address=f"{server.host}:{server.port}")

    # -- threads -------------------------------------------------------------------------------
    def _spawn(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _informer_loop(self, informer: Any) -> None:
        while not self.stop.is_set():
            try:
                informer.poll(WATCH_ROUND_SECONDS)
            except Exception as exc:  # noqa: BLE001 - a watch thread must outlive any one failure
                if self.stop.is_set():
                    return
                reason = str(exc) if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
                log_event(log, "watch-failed", logging.WARNING, kind=informer.kind.plural, reason=reason)
                self.stop.wait(1.0)

    def _elector_loop(self) -> None:
        while not self.stop.is_set():
            self.elector.step()
            self.stop.wait(self.config.lease.retry_period)

    def _control_loop(self) -> None:
        self.loop_alive = True
        try:
            while not self.stop.is_set():
                if self.controller.synced():
                    try:
                        self.controller.step()
                    except Exception as exc:  # noqa: BLE001 - one bad step must not end the process
                        log_event(log, "step-failed", logging.ERROR, reason=f"{type(exc).__name__}: {exc}")
                        self.stop.wait(1.0)
                wait = self.controller.triggers.next_due_in()
                self.controller.wake.wait(LOOP_MAX_WAIT if wait is None else min(wait, LOOP_MAX_WAIT))
                self.controller.wake.clear()
        finally:
            self.loop_alive = False

    def run(self, endpoints_started: bool = False) -> int:
        log_event(
            log,
            "operator-starting",
            action=self.config.ipam,
            identity=self.config.identity,
            dry_run=self.config.dry_run,
        )
        if not endpoints_started:
            self.start_endpoints()
        for informer in self.controller.informers():
            self._spawn(f"informer-{informer.kind.plural}", functools.partial(self._informer_loop, informer))
        self._spawn("leader-elector", self._elector_loop)
        loop = threading.Thread(target=self._control_loop, name="control-loop", daemon=True)
        loop.start()
        self.stop.wait()
        log_event(log, "operator-stopping", reason="signal")
        for informer in self.controller.informers():
            informer.stop()
        self.controller.wake.set()
        loop.join(timeout=30)
        self.elector.release()
        for server in self._servers:
            server.stop()
        log_event(log, "operator-stopped")
        return 0


def _startup_problem(config: OperatorConfig, exc: Exception) -> str:
    from kubernetes.config.config_exception import ConfigException

    if isinstance(exc, ConfigException):
        where = f"--kubeconfig {config.kubeconfig}" if config.kubeconfig else "the in-cluster service account"
        return (
            f"cannot load the Kubernetes configuration from {where} ({exc}); "
            "pass a valid --kubeconfig or run the operator in a pod"
        )
    if isinstance(exc, OSError):
        return f"cannot listen for /metrics or /healthz ({exc.strerror or exc}); pick a free port"
    module = type(exc).__module__
    if module.startswith(("botocore", "boto3")):
        return f"cannot create the EC2 client ({exc}); set --aws-region and AWS credentials"
    raise exc


def run_operator(config: OperatorConfig) -> int:
    configure(config.log_level)
    try:
        process = OperatorProcess(config)
        process.start_endpoints()
    except Exception as exc:  # noqa: BLE001 - turned into one sentence, or re-raised
        log_event(log, "startup-failed", logging.ERROR, reason=_startup_problem(config, exc))
        return 2
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: process.stop.set())
    return process.run(endpoints_started=True)
